// Numbers of the CSV tables the models library reads (private to it).
#pragma once

#include <charconv>
#include <cmath>
#include <string_view>

namespace collbench::models_detail {

// A number as std::from_chars reads it, finite; NaN otherwise.
inline double finite_or_nan(std::string_view text) {
  double value = 0;
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (text.empty() || ec != std::errc() || ptr != end || !std::isfinite(value)) return NAN;
  return value;
}

}  // namespace collbench::models_detail
