// Names of element types and reduction operations, and the scalar 16-bit
// float conversions that define the meaning of f16 and bf16 everywhere else.
//
// The conversions here are written for clarity (one branch per IEEE class);
// reduce.cpp has branch-free versions that vectorize, and the tests check that
// both agree bit for bit on every input class.
#include "collbench/core/dtype.h"

#include <fmt/format.h>

#include <bit>
#include <cstring>
#include <stdexcept>

namespace collbench {
namespace {

constexpr std::uint32_t kFloatSignMask = 0x80000000u;
constexpr std::uint32_t kFloatExponentMask = 0x7f800000u;
constexpr std::uint32_t kFloatFractionMask = 0x007fffffu;
constexpr std::uint32_t kFloatQuietBit = 0x00400000u;
constexpr int kFloatExponentBias = 127;

constexpr std::uint16_t kHalfSignMask = 0x8000u;
constexpr std::uint16_t kHalfInfinity = 0x7c00u;
constexpr std::uint16_t kHalfQuietBit = 0x0200u;
constexpr int kHalfExponentBias = 15;
constexpr int kHalfFractionBits = 10;
constexpr int kFloatFractionBits = 23;

constexpr std::uint16_t kBf16QuietBit = 0x0040u;

bool is_float_nan(std::uint32_t bits) { return (bits & ~kFloatSignMask) > kFloatExponentMask; }

// significand / 2^shift rounded to the nearest integer, ties to even.
std::uint32_t shift_right_round_even(std::uint32_t significand, int shift) {
  if (shift <= 0) {
    return significand;
  }
  // The significand has at most 24 bits, so from 25 on it is below one half.
  if (shift >= 25) {
    return 0;
  }
  const std::uint32_t quotient = significand >> shift;
  const std::uint32_t remainder = significand & ((1u << shift) - 1u);
  const std::uint32_t halfway = 1u << (shift - 1);
  const bool round_up = remainder > halfway || (remainder == halfway && (quotient & 1u) != 0);
  return quotient + (round_up ? 1u : 0u);
}

void check_dtype(DType dtype) {
  if (dtype_size(dtype) == 0) {
    throw std::invalid_argument(fmt::format("unknown DType value {}; accepted: {}",
                                            static_cast<int>(dtype), dtype_names()));
  }
}

}  // namespace

std::string_view to_string(DType dtype) {
  switch (dtype) {
    case DType::f32:
      return "f32";
    case DType::f64:
      return "f64";
    case DType::f16:
      return "f16";
    case DType::bf16:
      return "bf16";
  }
  throw std::invalid_argument(
      fmt::format("unknown DType value {}; accepted: {}", static_cast<int>(dtype), dtype_names()));
}

std::string_view to_string(ReduceOp op) {
  switch (op) {
    case ReduceOp::sum:
      return "sum";
    case ReduceOp::avg:
      return "avg";
    case ReduceOp::min:
      return "min";
    case ReduceOp::max:
      return "max";
  }
  throw std::invalid_argument(fmt::format("unknown ReduceOp value {}; accepted: {}",
                                          static_cast<int>(op), reduce_op_names()));
}

std::optional<DType> parse_dtype(std::string_view name) {
  for (const DType dtype : kAllDTypes) {
    if (to_string(dtype) == name) {
      return dtype;
    }
  }
  return std::nullopt;
}

std::optional<ReduceOp> parse_reduce_op(std::string_view name) {
  for (const ReduceOp op : kAllReduceOps) {
    if (to_string(op) == name) {
      return op;
    }
  }
  return std::nullopt;
}

std::string dtype_names() {
  std::string names;
  for (const DType dtype : kAllDTypes) {
    names += names.empty() ? "" : ", ";
    names += to_string(dtype);
  }
  return names;
}

std::string reduce_op_names() {
  std::string names;
  for (const ReduceOp op : kAllReduceOps) {
    names += names.empty() ? "" : ", ";
    names += to_string(op);
  }
  return names;
}

float half_to_float(std::uint16_t bits) {
  const std::uint32_t sign = static_cast<std::uint32_t>(bits & kHalfSignMask) << 16;
  const std::uint32_t exponent = (bits >> kHalfFractionBits) & 0x1fu;
  const std::uint32_t fraction = bits & 0x3ffu;
  const int fraction_shift = kFloatFractionBits - kHalfFractionBits;
  std::uint32_t magnitude = 0;
  if (exponent == 0x1f) {
    magnitude = kFloatExponentMask | (fraction << fraction_shift);
    if (fraction != 0) {
      magnitude |= kFloatQuietBit;
    }
  } else if (exponent != 0) {
    magnitude = ((exponent - kHalfExponentBias + kFloatExponentBias) << kFloatFractionBits) |
                (fraction << fraction_shift);
  } else if (fraction != 0) {
    // Subnormal half: fraction * 2^-24 is a normal float; move the leading one
    // into the implicit bit position.
    const int leading_bit = std::bit_width(fraction) - 1;
    const std::uint32_t float_exponent =
        static_cast<std::uint32_t>(leading_bit - 24 + kFloatExponentBias);
    magnitude = (float_exponent << kFloatFractionBits) |
                ((fraction << (kFloatFractionBits - leading_bit)) & kFloatFractionMask);
  }
  return std::bit_cast<float>(sign | magnitude);
}

std::uint16_t float_to_half(float value) {
  const std::uint32_t bits = std::bit_cast<std::uint32_t>(value);
  const auto sign = static_cast<std::uint16_t>((bits >> 16) & kHalfSignMask);
  const std::uint32_t exponent = (bits & kFloatExponentMask) >> kFloatFractionBits;
  const std::uint32_t fraction = bits & kFloatFractionMask;
  const int fraction_shift = kFloatFractionBits - kHalfFractionBits;

  if (exponent == 0xff) {
    if (fraction == 0) {
      return sign | kHalfInfinity;
    }
    // Keep the top of the payload (as F16C's vcvtps2ph does) and force quiet,
    // so a NaN never turns into an infinity.
    return static_cast<std::uint16_t>(sign | kHalfInfinity | kHalfQuietBit |
                                      (fraction >> fraction_shift));
  }

  // Float subnormals behave like exponent 1 without the implicit bit.
  const int unbiased_exponent =
      (exponent == 0 ? 1 : static_cast<int>(exponent)) - kFloatExponentBias;
  const std::uint32_t significand = exponent == 0 ? fraction : (fraction | 0x00800000u);
  const int half_exponent = unbiased_exponent + kHalfExponentBias;
  if (half_exponent >= 0x1f) {
    return sign | kHalfInfinity;
  }
  if (half_exponent >= 1) {
    // The rounded significand keeps its implicit bit (0x400); adding it on top
    // of exponent-1 lets a carry out of the fraction step into the next
    // binade, and from the largest binade into infinity, as IEEE requires.
    const std::uint32_t rounded = shift_right_round_even(significand, fraction_shift);
    return static_cast<std::uint16_t>(
        sign | ((static_cast<std::uint32_t>(half_exponent - 1) << kHalfFractionBits) + rounded));
  }
  // Subnormal half: the unit is 2^-24; a carry to 0x400 is the smallest normal.
  const std::uint32_t rounded =
      shift_right_round_even(significand, fraction_shift + 1 - half_exponent);
  return static_cast<std::uint16_t>(sign | rounded);
}

float bf16_to_float(std::uint16_t bits) {
  std::uint32_t widened = static_cast<std::uint32_t>(bits) << 16;
  if (is_float_nan(widened)) {
    widened |= kFloatQuietBit;
  }
  return std::bit_cast<float>(widened);
}

std::uint16_t float_to_bf16(float value) {
  const std::uint32_t bits = std::bit_cast<std::uint32_t>(value);
  if (is_float_nan(bits)) {
    return static_cast<std::uint16_t>((bits >> 16) | kBf16QuietBit);
  }
  // bfloat16 is the top half of a float, so rounding is integer rounding of
  // the low 16 bits; a carry propagates into the exponent (up to infinity)
  // and subnormals need nothing special.
  const std::uint32_t lowest_kept_bit = (bits >> 16) & 1u;
  return static_cast<std::uint16_t>((bits + 0x7fffu + lowest_kept_bit) >> 16);
}

double load_element(DType dtype, const void* data, std::size_t index) {
  check_dtype(dtype);
  const auto* element = static_cast<const unsigned char*>(data) + index * dtype_size(dtype);
  switch (dtype) {
    case DType::f32: {
      float value = 0;
      std::memcpy(&value, element, sizeof value);
      return value;
    }
    case DType::f64: {
      double value = 0;
      std::memcpy(&value, element, sizeof value);
      return value;
    }
    case DType::f16:
    case DType::bf16: {
      std::uint16_t bits = 0;
      std::memcpy(&bits, element, sizeof bits);
      return dtype == DType::f16 ? half_to_float(bits) : bf16_to_float(bits);
    }
  }
  return 0;  // unreachable: check_dtype() rejected every other value
}

void store_element(DType dtype, void* data, std::size_t index, double value) {
  check_dtype(dtype);
  auto* element = static_cast<unsigned char*>(data) + index * dtype_size(dtype);
  switch (dtype) {
    case DType::f32: {
      const auto narrowed = static_cast<float>(value);
      std::memcpy(element, &narrowed, sizeof narrowed);
      return;
    }
    case DType::f64:
      std::memcpy(element, &value, sizeof value);
      return;
    case DType::f16:
    case DType::bf16: {
      // Through float, as the kernels do. For the exact result of one
      // operation on 16-bit values this equals rounding once (float has at
      // least 2p+2 significand bits for p = 11 and 8); an arbitrary double
      // within 2^-24 (relative) of a 16-bit tie is rounded twice.
      const auto narrowed = static_cast<float>(value);
      const std::uint16_t bits =
          dtype == DType::f16 ? float_to_half(narrowed) : float_to_bf16(narrowed);
      std::memcpy(element, &bits, sizeof bits);
      return;
    }
  }
}

}  // namespace collbench
