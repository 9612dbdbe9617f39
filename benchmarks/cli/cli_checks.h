// CLI11 checks for the numeric options of collbench's executables. They say
// what is accepted and what was given ("expected a whole number of nodes
// from 1 to 1048576, got '0'"), where CLI11's own NonNegativeNumber and
// PositiveNumber print a range up to DBL_MAX written out in full, and accept
// "nan". A check runs on the text before CLI11 converts it, so a value too
// large for the option's type is refused here with the same message.
#pragma once

#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <string>
#include <system_error>

namespace collbench::cli {

namespace detail {
inline std::string of_unit(const std::string& unit) { return unit.empty() ? "" : " of " + unit; }
}  // namespace detail

// A finite number above `lowest` (exclusive) or from `lowest` on, and up to
// `highest`.
inline CLI::Validator number_at_least(double lowest, bool exclusive, const std::string& unit,
                                      double highest = HUGE_VAL) {
  const std::string accepted =
      std::isinf(highest)
          ? fmt::format("a number{} {} {}", detail::of_unit(unit), exclusive ? ">" : ">=", lowest)
          : fmt::format("a number{} from {} to {}", detail::of_unit(unit), lowest, highest);
  return CLI::Validator(
      [=](std::string& text) -> std::string {
        double value = 0;
        const char* end = text.data() + text.size();
        const auto [ptr, ec] = std::from_chars(text.data(), end, value);
        const bool ok = !text.empty() && ec == std::errc() && ptr == end && std::isfinite(value) &&
                        (exclusive ? value > lowest : value >= lowest) && value <= highest;
        return ok ? std::string() : fmt::format("expected {}, got '{}'", accepted, text);
      },
      "");
}

// A finite number >= 0, e.g. seconds of a timeout.
inline CLI::Validator non_negative(const std::string& unit = "") {
  return number_at_least(0, false, unit);
}

// A finite number > 0.
inline CLI::Validator positive(const std::string& unit = "") {
  return number_at_least(0, true, unit);
}

// The longest --timeout any executable takes: a year (0 is "wait forever");
// beyond it a deadline would overflow the clock's range.
inline constexpr double kMaxTimeoutSeconds = 365.0 * 24 * 3600;

// A --timeout in seconds: 0 to kMaxTimeoutSeconds.
inline CLI::Validator timeout_seconds() {
  return number_at_least(0, false, "seconds", kMaxTimeoutSeconds);
}

// A path given to an option: refused empty (a variable a script left unset;
// some calls read "" as the current folder, others as no output) or starting
// with '-' (after an empty `--csv=`, CLI11 takes the next argument, an
// option, as the value). Nameless, so that --help shows only the option's
// own type name.
inline CLI::Validator path() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        if (text.empty()) return "the path is empty; name one, or leave the option out";
        if (text.front() == '-') {
          return fmt::format(
              "'{}' looks like an option, not a path; name a file or folder (./{} for one whose "
              "name starts with '-')",
              text, text);
        }
        return {};
      },
      "");
}

// A whole number from `lowest` to `highest` (both included).
inline CLI::Validator whole_number(std::int64_t lowest, std::int64_t highest,
                                   const std::string& unit = "") {
  const std::string accepted =
      fmt::format("a whole number{} from {} to {}", detail::of_unit(unit), lowest, highest);
  return CLI::Validator(
      [=](std::string& text) -> std::string {
        std::int64_t value = 0;
        const char* end = text.data() + text.size();
        const auto [ptr, ec] = std::from_chars(text.data(), end, value);
        const bool ok =
            !text.empty() && ec == std::errc() && ptr == end && value >= lowest && value <= highest;
        return ok ? std::string() : fmt::format("expected {}, got '{}'", accepted, text);
      },
      "");
}

}  // namespace collbench::cli
