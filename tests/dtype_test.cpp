// Tests of dtype.h: names, and the f16/bf16 conversions against reference
// implementations written independently here, with double arithmetic
// (ldexp/frexp/nearbyint) instead of bit manipulation.
#include "collbench/core/dtype.h"

#include <gtest/gtest.h>

#include <bit>
#include <cfenv>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

namespace collbench {
namespace {

std::uint32_t bits_of(float value) { return std::bit_cast<std::uint32_t>(value); }
float float_from_bits(std::uint32_t bits) { return std::bit_cast<float>(bits); }

// --- references --------------------------------------------------------------

// Value of a non-NaN binary16 pattern, straight from the IEEE 754 definition.
double reference_half_value(std::uint16_t bits) {
  const double sign = (bits & 0x8000u) != 0 ? -1.0 : 1.0;
  const int exponent = (bits >> 10) & 0x1f;
  const int fraction = bits & 0x3ff;
  if (exponent == 0x1f) {
    return sign * std::numeric_limits<double>::infinity();
  }
  if (exponent == 0) {
    return sign * std::ldexp(fraction, -24);
  }
  return sign * std::ldexp(1024 + fraction, exponent - 25);
}

// Rounds |value| to `significant_bits` bits with the subnormal unit
// 2^min_unit_exponent, ties to even (the default FP rounding mode).
double reference_round(double magnitude, int significant_bits, int min_unit_exponent) {
  if (magnitude == 0) {
    return 0;
  }
  int exponent = 0;
  std::frexp(magnitude, &exponent);  // magnitude = m * 2^exponent, m in [0.5, 1)
  const int unit_exponent = std::max(exponent - significant_bits, min_unit_exponent);
  return std::ldexp(std::nearbyint(std::ldexp(magnitude, -unit_exponent)), unit_exponent);
}

// float -> binary16 by rounding the exact value in double arithmetic, then
// encoding the rounded value field by field. NaN handling follows the
// documented rule: quiet, sign and top 10 payload bits kept.
std::uint16_t reference_float_to_half(float value) {
  const std::uint16_t sign = std::signbit(value) ? 0x8000u : 0u;
  if (std::isnan(value)) {
    return static_cast<std::uint16_t>(sign | 0x7e00u | ((bits_of(value) >> 13) & 0x3ffu));
  }
  const double rounded = reference_round(std::fabs(static_cast<double>(value)), 11, -24);
  if (rounded >= 65536.0) {  // includes infinity
    return sign | 0x7c00u;
  }
  if (rounded < std::ldexp(1.0, -14)) {
    return static_cast<std::uint16_t>(sign | static_cast<std::uint16_t>(rounded * 0x1p24));
  }
  int exponent = 0;
  const double mantissa = std::frexp(rounded, &exponent);  // [0.5, 1)
  const auto fraction = static_cast<std::uint16_t>((mantissa * 2 - 1) * 1024);
  return static_cast<std::uint16_t>(sign | ((exponent - 1 + 15) << 10) | fraction);
}

std::uint16_t reference_float_to_bf16(float value) {
  if (std::isnan(value)) {
    return static_cast<std::uint16_t>((bits_of(value) >> 16) | 0x0040u);
  }
  const std::uint16_t sign = std::signbit(value) ? 0x8000u : 0u;
  const double rounded = reference_round(std::fabs(static_cast<double>(value)), 8, -133);
  if (rounded >= std::ldexp(1.0, 128)) {
    return sign | 0x7f80u;
  }
  // `rounded` has at most 8 significant bits, so it is an exact float whose
  // low 16 bits are zero.
  return static_cast<std::uint16_t>(sign | (bits_of(static_cast<float>(rounded)) >> 16));
}

// Deterministic pseudo-random 32-bit patterns (splitmix64).
std::uint32_t next_pattern(std::uint64_t& state) {
  state += 0x9e3779b97f4a7c15ull;
  std::uint64_t mixed = state;
  mixed = (mixed ^ (mixed >> 30)) * 0xbf58476d1ce4e5b9ull;
  mixed = (mixed ^ (mixed >> 27)) * 0x94d049bb133111ebull;
  return static_cast<std::uint32_t>((mixed ^ (mixed >> 31)) >> 16);
}

// --- names -------------------------------------------------------------------

TEST(DTypeNames, RoundTripAndExactSpelling) {
  const std::vector<std::string> expected = {"f32", "f64", "f16", "bf16"};
  ASSERT_EQ(std::size(kAllDTypes), expected.size());
  for (std::size_t i = 0; i < expected.size(); ++i) {
    EXPECT_EQ(to_string(kAllDTypes[i]), expected[i]);
    EXPECT_EQ(parse_dtype(expected[i]), kAllDTypes[i]);
  }
  EXPECT_EQ(dtype_names(), "f32, f64, f16, bf16");
}

TEST(DTypeNames, RejectsUnknownNames) {
  for (const char* name : {"", "F32", "float", "f32 ", " f32", "fp16", "bf", "f8", "sum"}) {
    EXPECT_EQ(parse_dtype(name), std::nullopt) << "'" << name << "'";
  }
}

TEST(ReduceOpNames, RoundTripAndExactSpelling) {
  const std::vector<std::string> expected = {"sum", "avg", "min", "max"};
  ASSERT_EQ(std::size(kAllReduceOps), expected.size());
  for (std::size_t i = 0; i < expected.size(); ++i) {
    EXPECT_EQ(to_string(kAllReduceOps[i]), expected[i]);
    EXPECT_EQ(parse_reduce_op(expected[i]), kAllReduceOps[i]);
  }
  EXPECT_EQ(reduce_op_names(), "sum, avg, min, max");
}

TEST(ReduceOpNames, RejectsUnknownNames) {
  for (const char* name : {"", "Sum", "mean", "prod", "average", "minimum", "f32"}) {
    EXPECT_EQ(parse_reduce_op(name), std::nullopt) << "'" << name << "'";
  }
}

TEST(DTypeNames, OutOfRangeEnumValuesThrowWithTheAcceptedNames) {
  try {
    (void)to_string(static_cast<DType>(7));
    FAIL() << "to_string(DType 7) did not throw";
  } catch (const std::invalid_argument& error) {
    EXPECT_NE(std::string(error.what()).find("7"), std::string::npos) << error.what();
    EXPECT_NE(std::string(error.what()).find("f32, f64, f16, bf16"), std::string::npos)
        << error.what();
  }
  EXPECT_THROW((void)to_string(static_cast<ReduceOp>(9)), std::invalid_argument);
  EXPECT_EQ(dtype_size(static_cast<DType>(7)), 0u);
}

TEST(DTypeSize, MatchesTheStorageTypes) {
  EXPECT_EQ(dtype_size(DType::f32), sizeof(float));
  EXPECT_EQ(dtype_size(DType::f64), sizeof(double));
  EXPECT_EQ(dtype_size(DType::f16), 2u);
  EXPECT_EQ(dtype_size(DType::bf16), 2u);
}

// --- half <-> float ----------------------------------------------------------

TEST(HalfConversion, EveryPatternWidensToItsExactValueAndRoundTrips) {
  int nan_patterns = 0;
  for (std::uint32_t pattern = 0; pattern <= 0xffff; ++pattern) {
    const auto half = static_cast<std::uint16_t>(pattern);
    const float widened = half_to_float(half);
    const bool is_nan = (half & 0x7c00u) == 0x7c00u && (half & 0x3ffu) != 0;
    if (is_nan) {
      ++nan_patterns;
      ASSERT_TRUE(std::isnan(widened)) << std::hex << pattern;
      // Quiet, same sign, payload moved up unchanged.
      EXPECT_EQ(bits_of(widened),
                ((pattern & 0x8000u) << 16) | 0x7fc00000u | ((pattern & 0x3ffu) << 13))
          << std::hex << pattern;
      const std::uint16_t back = float_to_half(widened);
      EXPECT_EQ(back, pattern | 0x0200u) << std::hex << pattern;  // quiet bit set, nothing else
      continue;
    }
    const double expected = reference_half_value(half);
    ASSERT_EQ(static_cast<double>(widened), expected) << std::hex << pattern;
    ASSERT_EQ(std::signbit(widened), (pattern & 0x8000u) != 0) << std::hex << pattern;
    ASSERT_EQ(float_to_half(widened), half) << std::hex << pattern;
  }
  EXPECT_EQ(nan_patterns, 2 * 1023);
}

TEST(HalfConversion, RoundsTiesToEvenAtChosenBoundaries) {
  struct Case {
    float value;
    std::uint16_t expected;
  };
  const Case cases[] = {
      {1.0f, 0x3c00},
      {1.0f + 0x1p-11f, 0x3c00},             // tie, 1.0 is even
      {1.0f + 0x1p-11f + 0x1p-20f, 0x3c01},  // just above the tie
      {1.0f + 3 * 0x1p-11f, 0x3c02},         // tie, 1 + 2^-9 is even
      {1.0f - 0x1p-12f, 0x3c00},             // tie below 1 (ulp 2^-11 there): to even 1.0
      {65504.0f, 0x7bff},                    // largest finite half
      {65519.0f, 0x7bff},                    // below the tie with 65536
      {65520.0f, 0x7c00},                    // tie with 65536, which is even: overflow
      {1e6f, 0x7c00},
      {-1e6f, 0xfc00},
      {std::numeric_limits<float>::max(), 0x7c00},
      {std::numeric_limits<float>::infinity(), 0x7c00},
      {-std::numeric_limits<float>::infinity(), 0xfc00},
      {0x1p-14f, 0x0400},             // smallest normal
      {0x1p-14f - 0x1p-25f, 0x0400},  // 1023.5 units: tie, to even 1024 = 0x0400
      {0x1p-14f - 0x1p-24f, 0x03ff},  // largest subnormal
      {0x1p-24f, 0x0001},             // smallest subnormal
      {0x1p-25f, 0x0000},             // half a unit: tie, to even 0
      {0x1p-25f + 0x1p-40f, 0x0001},  // just above the tie
      {3 * 0x1p-25f, 0x0002},         // 1.5 units: tie, to even 2
      {-0x1p-25f, 0x8000},            // sign kept on underflow
      {0.0f, 0x0000},
      {-0.0f, 0x8000},
      {std::numeric_limits<float>::denorm_min(), 0x0000},
      {-std::numeric_limits<float>::denorm_min(), 0x8000},
  };
  for (const Case& test_case : cases) {
    EXPECT_EQ(float_to_half(test_case.value), test_case.expected)
        << std::hexfloat << test_case.value;
    EXPECT_EQ(reference_float_to_half(test_case.value), test_case.expected)
        << "reference disagrees with the case table at " << std::hexfloat << test_case.value;
  }
}

TEST(HalfConversion, NanNeverBecomesInfinity) {
  // Truncating these to 16 bits would drop every payload bit and give inf.
  for (const std::uint32_t nan_bits :
       {0x7f800001u, 0x7f801fffu, 0xff800001u, 0x7fc00000u, 0x7fffffffu, 0xffc00000u}) {
    const std::uint16_t half = float_to_half(float_from_bits(nan_bits));
    EXPECT_EQ(half & 0x7e00u, 0x7e00u) << std::hex << nan_bits << " -> " << half;
    EXPECT_EQ((half & 0x8000u) != 0, (nan_bits & 0x80000000u) != 0) << std::hex << nan_bits;
    EXPECT_TRUE(std::isnan(half_to_float(half))) << std::hex << nan_bits;
  }
}

TEST(HalfConversion, MatchesTheReferenceOnEveryRoundingPosition) {
  ASSERT_EQ(std::fegetround(), FE_TONEAREST);
  // Every value of the upper 19 bits (sign, exponent, the 10 kept fraction
  // bits) with the tails that decide the rounding of a normal result: zero,
  // just above zero, just below/at/above the tie, just below the next unit.
  // For subnormal results the deciding bits lie inside the upper 19, which
  // this enumerates exhaustively.
  const std::uint32_t tails[] = {0x0000, 0x0001, 0x0fff, 0x1000, 0x1001, 0x1fff};
  for (std::uint32_t upper = 0; upper < (1u << 19); ++upper) {
    for (const std::uint32_t tail : tails) {
      const float value = float_from_bits((upper << 13) | tail);
      ASSERT_EQ(float_to_half(value), reference_float_to_half(value))
          << std::hexfloat << value << " bits " << std::hex << ((upper << 13) | tail);
    }
  }
  std::uint64_t state = 12345;
  for (int i = 0; i < 2'000'000; ++i) {
    const float value = float_from_bits(next_pattern(state));
    ASSERT_EQ(float_to_half(value), reference_float_to_half(value)) << std::hex << bits_of(value);
  }
}

// --- bfloat16 <-> float ------------------------------------------------------

TEST(Bf16Conversion, EveryPatternWidensExactlyAndRoundTrips) {
  for (std::uint32_t pattern = 0; pattern <= 0xffff; ++pattern) {
    const auto bf16 = static_cast<std::uint16_t>(pattern);
    const float widened = bf16_to_float(bf16);
    const bool is_nan = (pattern & 0x7f80u) == 0x7f80u && (pattern & 0x7fu) != 0;
    if (is_nan) {
      ASSERT_TRUE(std::isnan(widened)) << std::hex << pattern;
      EXPECT_EQ(bits_of(widened), (pattern << 16) | 0x00400000u) << std::hex << pattern;
      EXPECT_EQ(float_to_bf16(widened), pattern | 0x0040u) << std::hex << pattern;
      continue;
    }
    ASSERT_EQ(bits_of(widened), pattern << 16) << std::hex << pattern;
    ASSERT_EQ(float_to_bf16(widened), bf16) << std::hex << pattern;
  }
}

TEST(Bf16Conversion, RoundsTiesToEvenOverflowsAndKeepsSubnormals) {
  struct Case {
    std::uint32_t float_bits;
    std::uint16_t expected;
  };
  const Case cases[] = {
      {0x3f808000, 0x3f80},  // 1 + 2^-8: tie, 1.0 is even
      {0x3f808001, 0x3f81},  // just above the tie
      {0x3f818000, 0x3f82},  // (1 + 2^-7) + 2^-8: tie, to even 1 + 2^-6
      {0x3f817fff, 0x3f81},  // just below that tie
      {0x7f7f0000, 0x7f7f},  // largest finite bf16
      {0x7f7f7fff, 0x7f7f},  // below the tie with 2^128
      {0x7f7f8000, 0x7f80},  // tie with 2^128 (even): overflow to inf
      {0x7f7fffff, 0x7f80},  // FLT_MAX
      {0xff7fffff, 0xff80},  // -FLT_MAX
      {0x7f800000, 0x7f80},  // inf
      {0x00008000, 0x0000},  // subnormal tie, to even 0
      {0x00008001, 0x0001},
      {0x00018000, 0x0002},  // subnormal tie, to even 2
      {0x007fffff, 0x0080},  // largest float subnormal rounds up to the smallest normal
      {0x80000001, 0x8000},
      {0x7f800001, 0x7fc0},  // signalling NaN with only low payload: stays NaN
      {0xff800001, 0xffc0},
      {0x7fc00000, 0x7fc0},
  };
  for (const Case& test_case : cases) {
    const float value = float_from_bits(test_case.float_bits);
    EXPECT_EQ(float_to_bf16(value), test_case.expected) << std::hex << test_case.float_bits;
    EXPECT_EQ(reference_float_to_bf16(value), test_case.expected)
        << "reference disagrees with the case table at " << std::hex << test_case.float_bits;
  }
}

TEST(Bf16Conversion, MatchesTheReferenceOnEveryRoundingPosition) {
  ASSERT_EQ(std::fegetround(), FE_TONEAREST);
  const std::uint32_t tails[] = {0x0000, 0x0001, 0x7fff, 0x8000, 0x8001, 0xffff};
  for (std::uint32_t upper = 0; upper <= 0xffff; ++upper) {
    for (const std::uint32_t tail : tails) {
      const float value = float_from_bits((upper << 16) | tail);
      ASSERT_EQ(float_to_bf16(value), reference_float_to_bf16(value))
          << std::hex << ((upper << 16) | tail);
    }
  }
  std::uint64_t state = 67890;
  for (int i = 0; i < 2'000'000; ++i) {
    const float value = float_from_bits(next_pattern(state));
    ASSERT_EQ(float_to_bf16(value), reference_float_to_bf16(value)) << std::hex << bits_of(value);
  }
}

// --- load_element / store_element ---------------------------------------------

TEST(ElementAccess, StoreThenLoadRoundsOnceToTheElementType) {
  std::vector<std::uint64_t> storage(4, 0);  // 8-byte aligned, room for 4 f64
  void* buffer = storage.data();
  for (const DType dtype : kAllDTypes) {
    store_element(dtype, buffer, 1, 0.5);
    EXPECT_EQ(load_element(dtype, buffer, 1), 0.5) << to_string(dtype);
    store_element(dtype, buffer, 2, -3.25);
    EXPECT_EQ(load_element(dtype, buffer, 2), -3.25) << to_string(dtype);
    EXPECT_EQ(load_element(dtype, buffer, 1), 0.5) << to_string(dtype) << " neighbour changed";
    store_element(dtype, buffer, 0, std::numeric_limits<double>::quiet_NaN());
    EXPECT_TRUE(std::isnan(load_element(dtype, buffer, 0))) << to_string(dtype);
  }
  // 16-bit stores go through float, as documented: 1 + 2^-11 + 2^-30 first
  // becomes the float 1 + 2^-11 (a tie for f16), which then rounds to even.
  // 2^-20 above the tie survives the float step and rounds up.
  store_element(DType::f16, buffer, 0, 1.0 + 0x1p-11 + 0x1p-30);
  EXPECT_EQ(load_element(DType::f16, buffer, 0), 1.0);
  store_element(DType::f16, buffer, 0, 1.0 + 0x1p-11 + 0x1p-20);
  EXPECT_EQ(load_element(DType::f16, buffer, 0), 1.0 + 0x1p-10);
  store_element(DType::bf16, buffer, 0, 1.0 + 0x1p-8);
  EXPECT_EQ(load_element(DType::bf16, buffer, 0), 1.0);
  store_element(DType::f32, buffer, 0, 1.0 + 0x1p-40);
  EXPECT_EQ(load_element(DType::f32, buffer, 0), 1.0);
  store_element(DType::f64, buffer, 0, 1.0 + 0x1p-40);
  EXPECT_EQ(load_element(DType::f64, buffer, 0), 1.0 + 0x1p-40);
}

TEST(ElementAccess, UnknownDTypeThrows) {
  std::uint64_t storage = 0;
  EXPECT_THROW((void)load_element(static_cast<DType>(4), &storage, 0), std::invalid_argument);
  EXPECT_THROW(store_element(static_cast<DType>(4), &storage, 0, 1.0), std::invalid_argument);
}

}  // namespace
}  // namespace collbench
