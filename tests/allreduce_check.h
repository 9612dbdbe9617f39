// Inputs and expected results for allreduce correctness tests.
//
// Rank r's element i is v(r, i) = ((3r + 7i) mod 11) − 5: distinct across
// ranks and elements, integer-valued and small, so that sums over up to 16
// ranks (|sum| ≤ 80) are exact even in bf16 (8 significant bits). Since
// v depends on i only through i mod 11, the expected result for every
// element is one of 11 values, computed once in closed form (a sum or max
// over ranks), and checking 1M elements is a byte comparison.
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <cstring>
#include <vector>

#include "collbench/dtype.h"

namespace collbench::testing {

inline constexpr int kPatternPeriod = 11;

inline double input_value(int rank, std::size_t index) {
  return static_cast<double>((3 * static_cast<std::size_t>(rank) + 7 * (index % kPatternPeriod)) %
                             kPatternPeriod) -
         5.0;
}

inline double expected_value(ReduceOp op, int ranks, std::size_t index) {
  double result = input_value(0, index);
  for (int rank = 1; rank < ranks; ++rank) {
    const double value = input_value(rank, index);
    switch (op) {
      case ReduceOp::sum:
      case ReduceOp::avg:
        result += value;
        break;
      case ReduceOp::min:
        result = std::min(result, value);
        break;
      case ReduceOp::max:
        result = std::max(result, value);
        break;
    }
  }
  return op == ReduceOp::avg ? result / ranks : result;
}

// Fills `buffer` with rank's inputs.
inline void fill_input(DType dtype, int rank, std::vector<std::byte>& buffer, std::size_t count) {
  const std::size_t size = dtype_size(dtype);
  std::array<std::byte, kPatternPeriod * 8> pattern{};
  for (int k = 0; k < kPatternPeriod; ++k) {
    store_element(dtype, pattern.data(), static_cast<std::size_t>(k),
                  input_value(rank, static_cast<std::size_t>(k)));
  }
  buffer.resize(count * size);
  for (std::size_t i = 0; i < count; ++i) {
    std::memcpy(buffer.data() + i * size, pattern.data() + (i % kPatternPeriod) * size, size);
  }
}

// Number of elements of `result` that differ from the expected reduction.
// sum/min/max must be exact; avg may differ by the rounding of one division.
inline std::size_t count_wrong(DType dtype, ReduceOp op, int ranks, const std::byte* result,
                               std::size_t count) {
  const std::size_t size = dtype_size(dtype);
  std::array<double, kPatternPeriod> expected{};
  std::array<std::byte, kPatternPeriod * 8> expected_bits{};
  for (int k = 0; k < kPatternPeriod; ++k) {
    expected[static_cast<std::size_t>(k)] = expected_value(op, ranks, static_cast<std::size_t>(k));
    store_element(dtype, expected_bits.data(), static_cast<std::size_t>(k),
                  expected[static_cast<std::size_t>(k)]);
  }
  std::size_t wrong = 0;
  for (std::size_t i = 0; i < count; ++i) {
    const std::size_t k = i % kPatternPeriod;
    if (std::memcmp(result + i * size, expected_bits.data() + k * size, size) == 0) continue;
    if (op == ReduceOp::avg) {
      const double got = load_element(dtype, result, i);
      const double tolerance = dtype == DType::f64   ? 1e-12
                               : dtype == DType::f32 ? 1e-6
                               : dtype == DType::f16 ? 1e-2
                                                     : 2e-2;
      if (std::abs(got - expected[k]) <= tolerance * std::max(1.0, std::abs(expected[k]))) {
        continue;
      }
    }
    ++wrong;
  }
  return wrong;
}

}  // namespace collbench::testing
