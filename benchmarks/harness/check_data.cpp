// Input patterns and closed-form expected results for --check; see check_data.h.
#include "check_data.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <limits>
#include <stdexcept>

namespace collbench::harness {
namespace {

// The pattern repeats every kPeriod elements, so the expected result of
// element i depends only on i % kPeriod: kPeriod values computed over all
// ranks instead of one per element and rank.
constexpr std::size_t kPeriod = 3;

// Unit roundoff (half an ulp at 1.0) of each dtype.
double unit_roundoff(DType dtype) {
  switch (dtype) {
    case DType::f64:
      return std::ldexp(1.0, -53);
    case DType::f32:
      return std::ldexp(1.0, -24);
    case DType::f16:
      return std::ldexp(1.0, -11);
    case DType::bf16:
      return std::ldexp(1.0, -8);
  }
  return 0;
}

// Largest integer up to which every integer is representable.
double exact_integer_limit(DType dtype) { return 1.0 / unit_roundoff(dtype); }

std::size_t element_count(DType dtype, std::size_t bytes) {
  const std::size_t element_bytes = dtype_size(dtype);
  if (bytes % element_bytes != 0) {
    throw std::invalid_argument(
        fmt::format("{} bytes is not a whole number of {} elements ({} bytes each)", bytes,
                    to_string(dtype), element_bytes));
  }
  return bytes / element_bytes;
}

// Rounds like storing into `dtype` and reading back: the expected values are
// computed in double and must be compared in the precision of the buffer.
double round_to(DType dtype, double value) {
  std::array<std::byte, 8> scratch{};
  store_element(dtype, scratch.data(), 0, value);
  return load_element(dtype, scratch.data(), 0);
}

bool same(double got, double expected, double tolerance) {
  if (std::isnan(expected)) return std::isnan(got);
  if (std::isnan(got)) return false;
  return std::fabs(got - expected) <= tolerance;
}

// The encoded bytes of `value` as an element of `dtype`.
std::array<std::byte, 8> encode(DType dtype, double value) {
  std::array<std::byte, 8> bytes{};
  store_element(dtype, bytes.data(), 0, value);
  return bytes;
}

// Compares element by element with expected values that repeat every
// kPeriod elements. The common case, an element whose bytes equal the
// expected encoding, costs a memcmp; only a differing element is decoded
// and compared with the tolerance. That keeps checking a 440 MB gradient a
// fraction of a second instead of several.
CheckResult compare_periodic(DType dtype, std::span<const std::byte> output,
                             const std::array<double, kPeriod>& expected, double tolerance_at_one) {
  CheckResult result;
  const std::size_t element_bytes = dtype_size(dtype);
  const std::size_t count = element_count(dtype, output.size());
  result.checked = count;
  std::array<std::array<std::byte, 8>, kPeriod> encoded{};
  for (std::size_t residue = 0; residue < kPeriod; ++residue) {
    encoded[residue] = encode(dtype, expected[residue]);
  }
  const std::byte* data = output.data();
  for (std::size_t i = 0; i < count; ++i) {
    const std::size_t residue = i % kPeriod;
    if (std::memcmp(data + i * element_bytes, encoded[residue].data(), element_bytes) == 0) {
      continue;
    }
    const double want = expected[residue];
    const double got = load_element(dtype, data, i);
    if (same(got, want, tolerance_at_one * std::max(1.0, std::fabs(want)))) continue;
    if (result.wrong == 0) {
      result.first_mismatch = fmt::format("element {}: got {}, expected {}", i, got, want);
    }
    ++result.wrong;
  }
  return result;
}

}  // namespace

double input_value(int rank, std::size_t index) {
  return static_cast<double>((static_cast<std::size_t>(rank) + 2 * index) % kPeriod) - 1.0;
}

void fill_input(DType dtype, std::span<std::byte> buffer, int rank) {
  const std::size_t element_bytes = dtype_size(dtype);
  const std::size_t count = element_count(dtype, buffer.size());
  // One period of encoded elements, copied along the buffer: the same bytes
  // store_element would write element by element, at memcpy speed.
  std::array<std::byte, 8 * kPeriod> period{};
  for (std::size_t residue = 0; residue < kPeriod; ++residue) {
    store_element(dtype, period.data(), residue, input_value(rank, residue));
  }
  const std::size_t period_bytes = element_bytes * kPeriod;
  const std::size_t whole_periods = count / kPeriod;
  for (std::size_t p = 0; p < whole_periods; ++p) {
    std::memcpy(buffer.data() + p * period_bytes, period.data(), period_bytes);
  }
  for (std::size_t i = whole_periods * kPeriod; i < count; ++i) {
    std::memcpy(buffer.data() + i * element_bytes, period.data() + (i % kPeriod) * element_bytes,
                element_bytes);
  }
}

void poison(std::span<std::byte> buffer) { std::memset(buffer.data(), 0xFF, buffer.size()); }

CheckResult check_allreduce(DType dtype, ReduceOp op, int ranks,
                            std::span<const std::byte> output) {
  if (ranks < 1) throw std::invalid_argument(fmt::format("check of {} ranks", ranks));
  std::array<double, kPeriod> expected{};
  for (std::size_t residue = 0; residue < kPeriod; ++residue) {
    double sum = 0;
    double low = std::numeric_limits<double>::infinity();
    double high = -low;
    for (int rank = 0; rank < ranks; ++rank) {
      const double value = input_value(rank, residue);
      sum += value;
      low = std::min(low, value);
      high = std::max(high, value);
    }
    switch (op) {
      case ReduceOp::sum:
        expected[residue] = round_to(dtype, sum);
        break;
      case ReduceOp::avg:
        expected[residue] = round_to(dtype, sum / ranks);
        break;
      case ReduceOp::min:
        expected[residue] = low;
        break;
      case ReduceOp::max:
        expected[residue] = high;
        break;
    }
  }
  // Sums stay exact while |partial sum| <= ranks fits the dtype's integers;
  // past that each of the ranks - 1 additions may round by one unit roundoff
  // of a partial sum of magnitude <= ranks.
  const double p = static_cast<double>(ranks);
  const double u = unit_roundoff(dtype);
  double tolerance = 0;
  if (op == ReduceOp::sum || op == ReduceOp::avg) {
    if (p > exact_integer_limit(dtype)) tolerance = (p - 1) * u * p;
    // The division of avg rounds once more, by at most one ulp of the result.
    if (op == ReduceOp::avg) tolerance = tolerance / p + 2 * u;
  }
  return compare_periodic(dtype, output, expected, tolerance);
}

CheckResult check_local_reduce(DType dtype, ReduceOp op, std::span<const std::byte> output) {
  std::array<double, kPeriod> expected{};
  for (std::size_t residue = 0; residue < kPeriod; ++residue) {
    const double dst = input_value(0, residue);
    const double src = input_value(1, residue);
    switch (op) {
      case ReduceOp::sum:
      case ReduceOp::avg:
        expected[residue] = dst + src;
        break;
      case ReduceOp::min:
        expected[residue] = std::min(dst, src);
        break;
      case ReduceOp::max:
        expected[residue] = std::max(dst, src);
        break;
    }
  }
  return compare_periodic(dtype, output, expected, 0.0);
}

namespace {
std::byte pattern_byte(std::size_t position, int seed) {
  // A multiplier coprime to 256 makes consecutive bytes differ, so a shifted
  // or truncated copy is caught, and the seed separates the two directions
  // of a ping-pong.
  return static_cast<std::byte>((position * 167 + static_cast<std::size_t>(seed) * 29 + 11) & 0xFF);
}
}  // namespace

void fill_bytes(std::span<std::byte> buffer, int seed) {
  for (std::size_t i = 0; i < buffer.size(); ++i) buffer[i] = pattern_byte(i, seed);
}

CheckResult check_bytes(std::span<const std::byte> buffer, int seed) {
  CheckResult result;
  result.checked = buffer.size();
  for (std::size_t i = 0; i < buffer.size(); ++i) {
    const std::byte expected = pattern_byte(i, seed);
    if (buffer[i] != expected) {
      if (result.wrong == 0) {
        result.first_mismatch =
            fmt::format("byte {}: got {:#04x}, expected {:#04x}", i,
                        std::to_integer<unsigned>(buffer[i]), std::to_integer<unsigned>(expected));
      }
      ++result.wrong;
    }
  }
  return result;
}

}  // namespace collbench::harness
