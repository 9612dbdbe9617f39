// Units of the sim transport's parameters, as SimGrid writes them; strict,
// as --sizes is: a number without its unit is refused, not guessed.
#include <fmt/format.h>

#include <charconv>
#include <cmath>
#include <stdexcept>
#include <string>
#include <utility>

#include "collbench/transport/sim_transport.h"

namespace collbench {
namespace {

struct Unit {
  std::string_view suffix;
  double factor;
};

constexpr Unit kLatencyUnits[] = {{"ns", 1e-9}, {"us", 1e-6}, {"ms", 1e-3}, {"s", 1.0}};
// Longest suffixes first, so that "Bps" does not claim "kBps".
constexpr Unit kBandwidthUnits[] = {{"kBps", 1e3},     {"MBps", 1e6},     {"GBps", 1e9},
                                    {"kbps", 1e3 / 8}, {"Mbps", 1e6 / 8}, {"Gbps", 1e9 / 8},
                                    {"Bps", 1.0},      {"bps", 1.0 / 8}};
// The empty suffix last: a bare number is FLOP/s.
constexpr Unit kFlopsUnits[] = {{"k", 1e3},  {"M", 1e6},  {"G", 1e9}, {"T", 1e12},
                                {"P", 1e15}, {"E", 1e18}, {"", 1.0}};

std::string accepted(std::span<const Unit> units) {
  std::string names;
  for (const Unit& unit : units) {
    if (!names.empty()) names += ", ";
    names += unit.suffix.empty() ? "none" : unit.suffix;
  }
  return names;
}

// The value of "<number><unit>" for one of `units`; `what` names the
// quantity in messages.
double parse_with_unit(std::string_view text, std::span<const Unit> units, std::string_view what,
                       std::string_view example) {
  for (const Unit& unit : units) {
    if (text.size() <= unit.suffix.size() || !text.ends_with(unit.suffix)) continue;
    const std::string_view number = text.substr(0, text.size() - unit.suffix.size());
    double value = 0;
    const auto [end, error] = std::from_chars(number.data(), number.data() + number.size(), value);
    if (error != std::errc() || end != number.data() + number.size() || !std::isfinite(value)) {
      break;
    }
    return value * unit.factor;
  }
  throw std::invalid_argument(
      fmt::format("{} '{}' is not a number with one of the units {} (e.g. {})", what, text,
                  accepted(units), example));
}

}  // namespace

double parse_latency(std::string_view text) {
  const double value = parse_with_unit(text, kLatencyUnits, "latency", "1.5us");
  if (value < 0) {
    throw std::invalid_argument(fmt::format("latency '{}' is negative: give 0s or more", text));
  }
  return value;
}

double parse_bandwidth(std::string_view text) {
  const double value = parse_with_unit(text, kBandwidthUnits, "bandwidth", "12.5GBps or 100Gbps");
  if (!(value > 0)) {
    throw std::invalid_argument(
        fmt::format("bandwidth '{}' is not positive: give a rate above 0", text));
  }
  return value;
}

double parse_rate_or_zero(std::string_view text) {
  if (text == "0") return 0;
  return parse_bandwidth(text);
}

double parse_flops(std::string_view text) {
  const double value = parse_with_unit(text, kFlopsUnits, "FLOP/s", "10T or 2.5e12");
  if (!(value > 0)) {
    throw std::invalid_argument(
        fmt::format("FLOP/s '{}' is not positive: give a rate above 0", text));
  }
  return value;
}

}  // namespace collbench
