// Byte-size parsing and formatting (see include/collbench/catalog/sizes.h for the
// accepted grammar and the reasons behind it).
#include "collbench/catalog/sizes.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cstddef>
#include <limits>
#include <stdexcept>
#include <unordered_set>

namespace collbench {
namespace {

// 128-bit intermediates let "99999999999GiB" be detected as too large
// instead of wrapping; __extension__ keeps -Wpedantic quiet about the type.
__extension__ typedef unsigned __int128 Wide;

constexpr std::uint64_t kMaxBytes = std::numeric_limits<std::uint64_t>::max();
// More fraction digits than this cannot change a whole number of bytes for
// any unit up to TiB/TB, and 10^18 still fits the 128-bit arithmetic.
constexpr std::size_t kMaxFractionDigits = 18;

struct Unit {
  std::string_view symbol;
  std::uint64_t bytes;
};

constexpr std::array<Unit, 10> kUnits = {{
    {"B", 1},
    {"KiB", 1ULL << 10},
    {"MiB", 1ULL << 20},
    {"GiB", 1ULL << 30},
    {"TiB", 1ULL << 40},
    {"kB", 1000ULL},
    {"KB", 1000ULL},
    {"MB", 1000ULL * 1000},
    {"GB", 1000ULL * 1000 * 1000},
    {"TB", 1000ULL * 1000 * 1000 * 1000},
}};

constexpr std::string_view kAcceptedUnits =
    "B, KiB, MiB, GiB, TiB (powers of 1024) or kB/KB, MB, GB, TB (powers of 1000)";

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }
bool is_digit(char c) { return c >= '0' && c <= '9'; }

std::string_view trim(std::string_view text) {
  while (!text.empty() && is_space(text.front())) text.remove_prefix(1);
  while (!text.empty() && is_space(text.back())) text.remove_suffix(1);
  return text;
}

[[noreturn]] void fail_size(std::string_view text, std::string_view reason) {
  throw std::invalid_argument(fmt::format("invalid byte size \"{}\": {}", text, reason));
}

std::uint64_t unit_bytes(std::string_view original, std::string_view symbol) {
  if (symbol.empty()) return 1;
  for (const Unit& unit : kUnits) {
    if (unit.symbol == symbol) return unit.bytes;
  }
  static constexpr std::array<std::string_view, 12> kAmbiguous = {"K", "k", "M",  "m",  "G",  "g",
                                                                  "T", "t", "Ki", "Mi", "Gi", "Ti"};
  if (std::find(kAmbiguous.begin(), kAmbiguous.end(), symbol) != kAmbiguous.end()) {
    fail_size(original, fmt::format("the unit \"{}\" is ambiguous; write {}iB for a power of "
                                    "1024 or {}B for a power of 1000",
                                    symbol, symbol.substr(0, 1), symbol.substr(0, 1)));
  }
  fail_size(original,
            fmt::format("unknown unit \"{}\"; accepted units: {}", symbol, kAcceptedUnits));
}

// Accumulates decimal digits into a 128-bit value; anything above 2^64 is
// already too large, so the value saturates there instead of overflowing.
Wide read_digits(std::string_view digits) {
  constexpr Wide kSaturate = static_cast<Wide>(kMaxBytes) + 1;
  Wide value = 0;
  for (char c : digits) {
    value = value * 10 + static_cast<Wide>(c - '0');
    if (value > kSaturate) value = kSaturate;
  }
  return value;
}

}  // namespace

std::uint64_t parse_byte_size(std::string_view text, ZeroSize zero) {
  const std::string_view body = trim(text);
  if (body.empty()) {
    fail_size(text, fmt::format("it is empty; expected a number with an optional unit, {}",
                                kAcceptedUnits));
  }
  if (body.front() == '-') {
    fail_size(text, fmt::format("negative sizes are not accepted; expected a number of at least "
                                "0 with an optional unit, {}",
                                kAcceptedUnits));
  }
  if (!is_digit(body.front())) {
    fail_size(text, fmt::format("expected a number with an optional unit ({}), e.g. 64MiB",
                                kAcceptedUnits));
  }

  std::size_t pos = 0;
  while (pos < body.size() && is_digit(body[pos])) ++pos;
  const std::string_view integer_digits = body.substr(0, pos);
  std::string_view fraction_digits;
  if (pos < body.size() && body[pos] == '.') {
    const std::size_t fraction_begin = ++pos;
    while (pos < body.size() && is_digit(body[pos])) ++pos;
    fraction_digits = body.substr(fraction_begin, pos - fraction_begin);
    if (fraction_digits.empty()) fail_size(text, "a decimal point must be followed by digits");
    if (fraction_digits.size() > kMaxFractionDigits) {
      fail_size(text, fmt::format("more than {} decimal digits", kMaxFractionDigits));
    }
  }
  while (pos < body.size() && body[pos] == ' ') ++pos;
  const std::uint64_t unit = unit_bytes(text, body.substr(pos));

  const Wide integer_part = read_digits(integer_digits);
  Wide fraction_scale = 1;
  for (std::size_t i = 0; i < fraction_digits.size(); ++i) fraction_scale *= 10;
  const Wide fraction_numerator = read_digits(fraction_digits) * unit;
  if (fraction_numerator % fraction_scale != 0) {
    fail_size(text, "it is not a whole number of bytes");
  }
  const Wide total = integer_part * unit + fraction_numerator / fraction_scale;
  if (total > static_cast<Wide>(kMaxBytes)) {
    fail_size(text, fmt::format("it does not fit in 64 bits (at most {} bytes)", kMaxBytes));
  }
  if (total == 0 && zero == ZeroSize::reject) {
    fail_size(text, "a size of zero bytes is not accepted here; the smallest size is 1 byte");
  }
  return static_cast<std::uint64_t>(total);
}

namespace {

[[noreturn]] void fail_list(std::string_view list, std::string_view reason) {
  throw std::invalid_argument(
      fmt::format("invalid size list \"{}\": {}; accepted: SIZE, MIN:MAX (x2 steps), MIN:MAX:xF or "
                  "MIN:MAX:*F (integer F >= 2), comma-separated, e.g. 8B:1MiB,4MiB,64MiB:1GiB:x4",
                  list, reason));
}

std::vector<std::string_view> split(std::string_view text, char separator) {
  std::vector<std::string_view> parts;
  std::size_t begin = 0;
  while (true) {
    const std::size_t end = text.find(separator, begin);
    if (end == std::string_view::npos) {
      parts.push_back(text.substr(begin));
      return parts;
    }
    parts.push_back(text.substr(begin, end - begin));
    begin = end + 1;
  }
}

std::uint64_t parse_step_factor(std::string_view list, std::string_view step_text) {
  const std::string_view step = trim(step_text);
  if (step.size() < 2 || (step.front() != 'x' && step.front() != '*')) {
    fail_list(list, fmt::format("the step \"{}\" must be written xF or *F", step_text));
  }
  const std::string_view digits = step.substr(1);
  if (!std::all_of(digits.begin(), digits.end(), is_digit)) {
    fail_list(list, fmt::format("the step factor in \"{}\" must be a whole number >= 2", step));
  }
  const Wide factor = read_digits(digits);
  if (factor > static_cast<Wide>(kMaxBytes)) {
    fail_list(list, fmt::format("the step factor in \"{}\" does not fit in 64 bits", step));
  }
  if (factor < 2) {
    fail_list(list, fmt::format("the step factor in \"{}\" must be at least 2", step));
  }
  return static_cast<std::uint64_t>(factor);
}

// Runs parse_byte_size and puts the list in front of its message, so the
// user sees which item of a long list was wrong.
std::uint64_t parse_list_size(std::string_view list, std::string_view item) {
  try {
    return parse_byte_size(item, ZeroSize::reject);
  } catch (const std::invalid_argument& error) {
    fail_list(list, error.what());
  }
}

void append_range(std::string_view list, std::string_view item, std::vector<std::uint64_t>& out) {
  const std::vector<std::string_view> parts = split(item, ':');
  if (parts.size() > 3) {
    fail_list(list, fmt::format("the range \"{}\" has more than three ':'-separated parts", item));
  }
  if (trim(parts[0]).empty() || trim(parts[1]).empty()) {
    fail_list(list, fmt::format("the range \"{}\" needs both MIN and MAX", item));
  }
  const std::uint64_t min = parse_list_size(list, parts[0]);
  const std::uint64_t max = parse_list_size(list, parts[1]);
  if (min > max) {
    fail_list(list, fmt::format("the range \"{}\" has MIN ({} bytes) above MAX ({} bytes)", item,
                                min, max));
  }
  const std::uint64_t factor = parts.size() == 3 ? parse_step_factor(list, parts[2]) : 2;
  for (std::uint64_t size = min;; size *= factor) {
    out.push_back(size);
    // Checked by division so that the last step cannot overflow.
    if (size > max / factor) break;
  }
}

}  // namespace

std::vector<std::uint64_t> parse_size_list(std::string_view text) {
  if (trim(text).empty()) fail_list(text, "it is empty");
  std::vector<std::uint64_t> expanded;
  const std::vector<std::string_view> items = split(text, ',');
  for (std::size_t index = 0; index < items.size(); ++index) {
    const std::string_view item = trim(items[index]);
    if (item.empty()) {
      fail_list(text, fmt::format("item {} (counting from 1) is empty", index + 1));
    }
    if (item.find(':') != std::string_view::npos) {
      append_range(text, item, expanded);
    } else {
      expanded.push_back(parse_list_size(text, item));
    }
  }
  std::vector<std::uint64_t> sizes;
  std::unordered_set<std::uint64_t> seen;
  for (std::uint64_t size : expanded) {
    if (seen.insert(size).second) sizes.push_back(size);
  }
  return sizes;
}

std::string format_bytes(std::uint64_t bytes) {
  static constexpr std::array<std::string_view, 7> kBinaryUnits = {"B",   "KiB", "MiB", "GiB",
                                                                   "TiB", "PiB", "EiB"};
  if (bytes < 1024) return fmt::format("{} B", bytes);
  std::size_t unit = 0;
  while (unit + 1 < kBinaryUnits.size() && bytes >= (1ULL << (10 * (unit + 1)))) ++unit;
  const double scaled = static_cast<double>(bytes) / static_cast<double>(1ULL << (10 * unit));
  std::string number = fmt::format("{:.2f}", scaled);
  // 1048575 B is 1023.999 KiB, which rounds to "1024.00": say 1 MiB instead.
  if (number == "1024.00" && unit + 1 < kBinaryUnits.size()) {
    ++unit;
    number = "1.00";
  }
  while (number.back() == '0') number.pop_back();
  if (number.back() == '.') number.pop_back();
  return fmt::format("{} {}", number, kBinaryUnits[unit]);
}

}  // namespace collbench
