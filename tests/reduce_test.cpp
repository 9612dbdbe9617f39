// Tests of the reduction kernels (reduce.h), run once per instruction-set
// variant this CPU supports, so the baseline, AVX2 and AVX-512 code paths are
// all checked against a scalar reference built on load_element/store_element
// and against the scalar f16/bf16 conversions, bit for bit.
#include "collbench/core/reduce.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

namespace collbench {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

// Lengths that cover empty, scalar-only, one partial vector, vector bodies of
// every width with odd tails, and a long run.
constexpr std::size_t kLengths[] = {0, 1, 7, 33, 1000, 4099};

// A buffer of `count` elements of `dtype`, 8-byte aligned, followed by guard
// elements that no kernel call may touch.
class TypedBuffer {
 public:
  static constexpr std::size_t kGuardElements = 8;
  static constexpr std::uint64_t kGuardWord = 0xa5a5a5a5a5a5a5a5ull;

  TypedBuffer(DType dtype, std::size_t count)
      : dtype_(dtype),
        count_(count),
        words_(((count + kGuardElements) * dtype_size(dtype) + 7) / 8, kGuardWord) {}

  DType dtype() const { return dtype_; }
  std::size_t count() const { return count_; }
  void* data() { return words_.data(); }
  const void* data() const { return words_.data(); }
  double get(std::size_t index) const { return load_element(dtype_, data(), index); }
  void set(std::size_t index, double value) { store_element(dtype_, data(), index, value); }

  // The stored bytes of one element, for exact comparisons.
  std::uint64_t raw(std::size_t index) const {
    std::uint64_t bits = 0;
    const std::size_t size = dtype_size(dtype_);
    std::memcpy(&bits, reinterpret_cast<const unsigned char*>(data()) + index * size, size);
    return bits;
  }
  void set_raw(std::size_t index, std::uint64_t bits) {
    const std::size_t size = dtype_size(dtype_);
    std::memcpy(reinterpret_cast<unsigned char*>(data()) + index * size, &bits, size);
  }

  bool guard_intact() const {
    const auto* bytes = reinterpret_cast<const unsigned char*>(data());
    const std::size_t begin = count_ * dtype_size(dtype_);
    const std::size_t end = words_.size() * 8;
    for (std::size_t i = begin; i < end; ++i) {
      if (bytes[i] != 0xa5) {
        return false;
      }
    }
    return true;
  }

 private:
  DType dtype_;
  std::size_t count_;
  std::vector<std::uint64_t> words_;
};

// Finite values across many binades, the special values, and (for a fifth of
// the elements) raw bit patterns, which for 16-bit types reach every class.
void fill_random(TypedBuffer& buffer, std::mt19937_64& random) {
  const double specials[] = {0.0, -0.0, kInf, -kInf, kNaN, 1.0, -1.0, 65504.0, 1e-7, -3e-39};
  std::uniform_real_distribution<double> mantissa(-1.0, 1.0);
  std::uniform_int_distribution<int> exponent(-30, 30);
  std::uniform_int_distribution<int> kind(0, 9);
  for (std::size_t i = 0; i < buffer.count(); ++i) {
    switch (kind(random)) {
      case 0:
        buffer.set(i, specials[random() % std::size(specials)]);
        break;
      case 1:
      case 2:
        buffer.set_raw(i, random());
        break;
      default:
        buffer.set(i, std::ldexp(mantissa(random), exponent(random)));
    }
  }
}

// The documented semantics in double precision; storing the result rounds it
// to the element type once, which equals f32 (then 16-bit) rounding because
// double and float have more than twice the significand bits plus two.
double reference_combine(ReduceOp op, double a, double b) {
  if (std::isnan(a) || std::isnan(b)) {
    return kNaN;
  }
  switch (op) {
    case ReduceOp::sum:
    case ReduceOp::avg:
      return a + b;
    case ReduceOp::min:
      return a < b ? a : b;
    case ReduceOp::max:
      return a > b ? a : b;
  }
  return kNaN;
}

bool is_quiet_nan_bits(DType dtype, std::uint64_t bits) {
  switch (dtype) {
    case DType::f16:
      return (bits & 0x7e00u) == 0x7e00u;
    case DType::bf16:
      return (bits & 0x7fc0u) == 0x7fc0u;
    case DType::f32:
      return std::isnan(std::bit_cast<float>(static_cast<std::uint32_t>(bits)));
    case DType::f64:
      return std::isnan(std::bit_cast<double>(bits));
  }
  return false;
}

// Every element: NaN where expected is NaN (quiet for 16-bit results), the
// same bits otherwise (so -0 and +0 are told apart). Returns a description of
// the first mismatch, or "" if all match.
std::string first_mismatch(const TypedBuffer& actual, const TypedBuffer& expected) {
  for (std::size_t i = 0; i < expected.count(); ++i) {
    const bool expected_nan = std::isnan(expected.get(i));
    const bool match = expected_nan ? is_quiet_nan_bits(actual.dtype(), actual.raw(i))
                                    : actual.raw(i) == expected.raw(i);
    if (!match) {
      return "element " + std::to_string(i) + ": got " + std::to_string(actual.get(i)) + " (bits " +
             std::to_string(actual.raw(i)) + "), expected " + std::to_string(expected.get(i)) +
             " (bits " + std::to_string(expected.raw(i)) + ")";
    }
  }
  if (!actual.guard_intact()) {
    return "a kernel wrote past the last element";
  }
  return "";
}

TypedBuffer reference_result(ReduceOp op, const TypedBuffer& a, const TypedBuffer& b) {
  TypedBuffer expected(a.dtype(), a.count());
  for (std::size_t i = 0; i < a.count(); ++i) {
    expected.set(i, reference_combine(op, a.get(i), b.get(i)));
  }
  return expected;
}

TypedBuffer copy_of(const TypedBuffer& source) {
  TypedBuffer copy(source.dtype(), source.count());
  std::memcpy(copy.data(), source.data(), source.count() * dtype_size(source.dtype()));
  return copy;
}

// --- the variant fixture -------------------------------------------------------

class ReduceKernels : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    previous_variant_ = std::string(active_reduce_variant());
    select_reduce_variant(GetParam());
    ASSERT_EQ(active_reduce_variant(), GetParam());
  }
  void TearDown() override { select_reduce_variant(previous_variant_); }

 private:
  std::string previous_variant_;
};

std::vector<std::string> variants_of_this_cpu() {
  std::vector<std::string> names;
  for (const std::string_view name : supported_reduce_variants()) {
    names.emplace_back(name);
  }
  return names;
}

INSTANTIATE_TEST_SUITE_P(Variants, ReduceKernels, ::testing::ValuesIn(variants_of_this_cpu()),
                         [](const ::testing::TestParamInfo<std::string>& variant) {
                           return variant.param;
                         });

TEST_P(ReduceKernels, EveryDtypeOpAndLengthMatchesTheReference) {
  std::mt19937_64 random(2024);
  for (const DType dtype : kAllDTypes) {
    for (const ReduceOp op : kAllReduceOps) {
      for (const std::size_t count : kLengths) {
        SCOPED_TRACE(std::string(to_string(dtype)) + " " + std::string(to_string(op)) +
                     " n=" + std::to_string(count));
        TypedBuffer a(dtype, count);
        TypedBuffer b(dtype, count);
        fill_random(a, random);
        fill_random(b, random);
        const TypedBuffer expected = reference_result(op, a, b);

        TypedBuffer into(dtype, count);
        reduce_into(dtype, op, into.data(), a.data(), b.data(), count);
        EXPECT_EQ(first_mismatch(into, expected), "") << "reduce_into, dst separate";

        TypedBuffer accumulated = copy_of(a);
        reduce_inplace(dtype, op, accumulated.data(), b.data(), count);
        EXPECT_EQ(first_mismatch(accumulated, expected), "") << "reduce_inplace";

        TypedBuffer dst_is_a = copy_of(a);
        reduce_into(dtype, op, dst_is_a.data(), dst_is_a.data(), b.data(), count);
        EXPECT_EQ(first_mismatch(dst_is_a, expected), "") << "reduce_into, dst == a";

        TypedBuffer dst_is_b = copy_of(b);
        reduce_into(dtype, op, dst_is_b.data(), a.data(), dst_is_b.data(), count);
        EXPECT_EQ(first_mismatch(dst_is_b, expected), "") << "reduce_into, dst == b";

        // All three the same buffer, through both entry points.
        const TypedBuffer doubled = reference_result(op, a, a);
        TypedBuffer self_into = copy_of(a);
        reduce_into(dtype, op, self_into.data(), self_into.data(), self_into.data(), count);
        EXPECT_EQ(first_mismatch(self_into, doubled), "") << "reduce_into, dst == a == b";
        TypedBuffer self_inplace = copy_of(a);
        reduce_inplace(dtype, op, self_inplace.data(), self_inplace.data(), count);
        EXPECT_EQ(first_mismatch(self_inplace, doubled), "") << "reduce_inplace, dst == src";

        // a and b the same input buffer, dst separate.
        TypedBuffer same_inputs(dtype, count);
        reduce_into(dtype, op, same_inputs.data(), a.data(), a.data(), count);
        EXPECT_EQ(first_mismatch(same_inputs, doubled), "") << "reduce_into, a == b";
      }
    }
  }
}

TEST_P(ReduceKernels, BuffersStartingMidVectorAreHandled) {
  // Element offsets 1..3 misalign the start relative to any vector width.
  std::mt19937_64 random(7);
  for (const DType dtype : kAllDTypes) {
    for (const std::size_t offset : {1u, 2u, 3u}) {
      const std::size_t count = 257;
      TypedBuffer a(dtype, count + offset);
      TypedBuffer b(dtype, count + offset);
      fill_random(a, random);
      fill_random(b, random);
      const TypedBuffer expected = reference_result(ReduceOp::sum, a, b);
      TypedBuffer dst = copy_of(a);
      auto* dst_start = static_cast<unsigned char*>(dst.data()) + offset * dtype_size(dtype);
      const auto* b_start =
          static_cast<const unsigned char*>(b.data()) + offset * dtype_size(dtype);
      reduce_inplace(dtype, ReduceOp::sum, dst_start, b_start, count);
      for (std::size_t i = 0; i < offset; ++i) {
        EXPECT_EQ(dst.raw(i), a.raw(i)) << to_string(dtype) << " element before the range changed";
      }
      for (std::size_t i = offset; i < count + offset; ++i) {
        const bool ok =
            std::isnan(expected.get(i)) ? std::isnan(dst.get(i)) : dst.raw(i) == expected.raw(i);
        ASSERT_TRUE(ok) << to_string(dtype) << " offset " << offset << " element " << i;
      }
    }
  }
}

// The vector conversions (branch-free integer code, or F16C) against the
// scalar ones of dtype.cpp, on every 16-bit pattern as the first operand and
// a set of second operands chosen to hit ties, overflow, cancellation to
// zero and subnormal results.
TEST_P(ReduceKernels, SixteenBitKernelsMatchTheScalarConversionsBitForBit) {
  struct Format {
    DType dtype;
    float (*widen)(std::uint16_t);
    std::uint16_t (*narrow)(float);
    std::vector<std::uint16_t> second_operands;
  };
  const Format formats[] = {
      {DType::f16, &half_to_float, &float_to_half, {0x0000, 0x8000, 0x0001, 0x8001, 0x03ff,
                                                    0x0400, 0x8400, 0x1400, 0x3c00, 0xbc00,
                                                    0x3c01, 0x7bff, 0xfbff, 0x7c00, 0xfc00,
                                                    0x7e00, 0x7d00, 0x5640, 0x0200, 0x1001}},
      {DType::bf16, &bf16_to_float, &float_to_bf16, {0x0000, 0x8000, 0x0001, 0x8001, 0x007f,
                                                     0x0080, 0x8080, 0x3f80, 0xbf80, 0x3b80,
                                                     0x3f81, 0x7f7f, 0xff7f, 0x7f80, 0xff80,
                                                     0x7fc0, 0x7f81, 0x4b40, 0x0040, 0x3401}},
  };
  constexpr std::size_t kPatterns = 1u << 16;
  for (const Format& format : formats) {
    std::vector<std::uint16_t> every_pattern(kPatterns);
    for (std::size_t i = 0; i < kPatterns; ++i) {
      every_pattern[i] = static_cast<std::uint16_t>(i);
    }
    for (const std::uint16_t second : format.second_operands) {
      const std::vector<std::uint16_t> seconds(kPatterns, second);
      for (const ReduceOp op : {ReduceOp::sum, ReduceOp::min, ReduceOp::max}) {
        std::vector<std::uint16_t> result(kPatterns);
        reduce_into(format.dtype, op, result.data(), every_pattern.data(), seconds.data(),
                    kPatterns);
        for (std::size_t i = 0; i < kPatterns; ++i) {
          const float a = format.widen(every_pattern[i]);
          const float b = format.widen(second);
          const float combined = op == ReduceOp::sum   ? a + b
                                 : op == ReduceOp::min ? ((a < b || a != a) ? a : b)
                                                       : ((a > b || a != a) ? a : b);
          const std::uint16_t expected = format.narrow(combined);
          if (std::isnan(combined)) {
            ASSERT_TRUE(is_quiet_nan_bits(format.dtype, result[i]))
                << to_string(format.dtype) << " " << to_string(op) << " " << std::hex
                << every_pattern[i] << ", " << second << " -> " << result[i];
          } else {
            ASSERT_EQ(result[i], expected) << to_string(format.dtype) << " " << to_string(op) << " "
                                           << std::hex << every_pattern[i] << ", " << second;
          }
        }
      }
    }
    for (const int ranks : {1, 3, 7, 1000, 1 << 24}) {
      std::vector<std::uint16_t> scaled = every_pattern;
      scale_for_average(format.dtype, scaled.data(), kPatterns, ranks);
      for (std::size_t i = 0; i < kPatterns; ++i) {
        const float quotient = format.widen(every_pattern[i]) / static_cast<float>(ranks);
        if (std::isnan(quotient)) {
          ASSERT_TRUE(is_quiet_nan_bits(format.dtype, scaled[i]));
        } else {
          ASSERT_EQ(scaled[i], format.narrow(quotient))
              << to_string(format.dtype) << " " << std::hex << every_pattern[i] << " / " << std::dec
              << ranks;
        }
      }
    }
  }
}

TEST_P(ReduceKernels, RandomSixteenBitPairsMatchTheScalarConversions) {
  std::mt19937_64 random(99);
  constexpr std::size_t kCount = 200'003;  // odd: the last element takes the scalar tail
  for (const DType dtype : {DType::f16, DType::bf16}) {
    const auto widen = dtype == DType::f16 ? &half_to_float : &bf16_to_float;
    const auto narrow = dtype == DType::f16 ? &float_to_half : &float_to_bf16;
    std::vector<std::uint16_t> a(kCount);
    std::vector<std::uint16_t> b(kCount);
    for (std::size_t i = 0; i < kCount; ++i) {
      a[i] = static_cast<std::uint16_t>(random());
      b[i] = static_cast<std::uint16_t>(random());
    }
    std::vector<std::uint16_t> sums = a;
    reduce_inplace(dtype, ReduceOp::sum, sums.data(), b.data(), kCount);
    for (std::size_t i = 0; i < kCount; ++i) {
      const float sum = widen(a[i]) + widen(b[i]);
      if (std::isnan(sum)) {
        ASSERT_TRUE(is_quiet_nan_bits(dtype, sums[i]));
      } else {
        ASSERT_EQ(sums[i], narrow(sum))
            << to_string(dtype) << " " << std::hex << a[i] << " + " << b[i];
      }
    }
  }
}

// "Round once per step": each reduce call rounds to 16 bits, so adding half
// an ulp twice leaves 1.0 where f32 accumulation across calls would not.
TEST_P(ReduceKernels, SixteenBitResultsRoundOncePerStep) {
  struct Step {
    DType dtype;
    double start;
    double addend;
    double after_one_step;
    double after_two_steps;
  };
  const Step steps[] = {
      {DType::bf16, 1.0, 0x1p-8, 1.0, 1.0},                             // ties to even, twice
      {DType::bf16, 1.0, 0x1p-9, 1.0, 1.0},                             // a quarter ulp, twice
      {DType::bf16, 1.0, 3 * 0x1p-9, 1.0 + 0x1p-7, 1.0 + 0x1p-6},       // 0.75 ulp rounds up
      {DType::bf16, 1.0 + 0x1p-7, 0x1p-8, 1.0 + 0x1p-6, 1.0 + 0x1p-6},  // tie up to even
      {DType::f16, 1.0, 0x1p-11, 1.0, 1.0},
      {DType::f16, 1.0 + 0x1p-10, 0x1p-11, 1.0 + 0x1p-9, 1.0 + 0x1p-9},
  };
  for (const Step& step : steps) {
    for (const std::size_t count : {1u, 33u}) {  // scalar path and vector path
      TypedBuffer accumulator(step.dtype, count);
      TypedBuffer addend(step.dtype, count);
      for (std::size_t i = 0; i < count; ++i) {
        accumulator.set(i, step.start);
        addend.set(i, step.addend);
      }
      ASSERT_EQ(addend.get(0), step.addend) << "addend must be exact in " << to_string(step.dtype);
      reduce_inplace(step.dtype, ReduceOp::sum, accumulator.data(), addend.data(), count);
      for (std::size_t i = 0; i < count; ++i) {
        EXPECT_EQ(accumulator.get(i), step.after_one_step)
            << to_string(step.dtype) << " " << step.start << " + " << step.addend << " n=" << count;
      }
      reduce_inplace(step.dtype, ReduceOp::sum, accumulator.data(), addend.data(), count);
      for (std::size_t i = 0; i < count; ++i) {
        EXPECT_EQ(accumulator.get(i), step.after_two_steps)
            << to_string(step.dtype) << " second step, n=" << count;
      }
    }
  }
}

TEST_P(ReduceKernels, NanPropagatesFromEitherOperandThroughEveryOp) {
  // Partners include values min/max would otherwise prefer (±inf).
  const double partners[] = {1.0, -1.0, kInf, -kInf, 0.0};
  constexpr std::size_t kCount = 37;  // vector body and tail
  for (const DType dtype : kAllDTypes) {
    for (const ReduceOp op : kAllReduceOps) {
      for (const double partner : partners) {
        for (const bool nan_first : {true, false}) {
          TypedBuffer a(dtype, kCount);
          TypedBuffer b(dtype, kCount);
          for (std::size_t i = 0; i < kCount; ++i) {
            a.set(i, nan_first ? kNaN : partner);
            b.set(i, nan_first ? partner : kNaN);
          }
          TypedBuffer into(dtype, kCount);
          reduce_into(dtype, op, into.data(), a.data(), b.data(), kCount);
          reduce_inplace(dtype, op, a.data(), b.data(), kCount);
          for (std::size_t i = 0; i < kCount; ++i) {
            ASSERT_TRUE(is_quiet_nan_bits(dtype, into.raw(i)))
                << to_string(dtype) << " " << to_string(op) << " partner " << partner
                << (nan_first ? " NaN first" : " NaN second") << " element " << i;
            ASSERT_TRUE(is_quiet_nan_bits(dtype, a.raw(i)))
                << "inplace " << to_string(dtype) << " " << to_string(op) << " partner " << partner
                << (nan_first ? " NaN first" : " NaN second");
          }
        }
      }
    }
  }
}

TEST_P(ReduceKernels, MinAndMaxOfEqualOperandsReturnTheSecond) {
  for (const DType dtype : kAllDTypes) {
    for (const std::size_t count : {1u, 40u}) {
      TypedBuffer positive_zero(dtype, count);
      TypedBuffer negative_zero(dtype, count);
      for (std::size_t i = 0; i < count; ++i) {
        positive_zero.set(i, 0.0);
        negative_zero.set(i, -0.0);
      }
      for (const ReduceOp op : {ReduceOp::min, ReduceOp::max}) {
        TypedBuffer result(dtype, count);
        reduce_into(dtype, op, result.data(), positive_zero.data(), negative_zero.data(), count);
        EXPECT_TRUE(std::signbit(result.get(count - 1)))
            << to_string(dtype) << " " << to_string(op);
        reduce_into(dtype, op, result.data(), negative_zero.data(), positive_zero.data(), count);
        EXPECT_FALSE(std::signbit(result.get(count - 1)))
            << to_string(dtype) << " " << to_string(op);
      }
    }
  }
}

TEST_P(ReduceKernels, ScaleForAverageDividesOnceAndRoundsOnce) {
  std::mt19937_64 random(5);
  for (const DType dtype : kAllDTypes) {
    for (const int ranks : {1, 2, 3, 7, 16, 1000, 1 << 24}) {
      for (const std::size_t count : kLengths) {
        TypedBuffer data(dtype, count);
        fill_random(data, random);
        TypedBuffer expected(dtype, count);
        for (std::size_t i = 0; i < count; ++i) {
          expected.set(i, data.get(i) / ranks);
        }
        scale_for_average(dtype, data.data(), count, ranks);
        EXPECT_EQ(first_mismatch(data, expected), "")
            << to_string(dtype) << " ranks " << ranks << " n=" << count;
      }
    }
  }
}

TEST_P(ReduceKernels, SumThenScaleIsTheAverage) {
  // The avg pipeline as a collective runs it: combine with avg, then scale.
  constexpr std::size_t kCount = 100;
  constexpr int kRanks = 4;
  for (const DType dtype : kAllDTypes) {
    TypedBuffer total(dtype, kCount);
    for (std::size_t i = 0; i < kCount; ++i) {
      total.set(i, 0.0);
    }
    for (int rank = 0; rank < kRanks; ++rank) {
      TypedBuffer contribution(dtype, kCount);
      for (std::size_t i = 0; i < kCount; ++i) {
        contribution.set(i, static_cast<double>(rank) + 0.25 * static_cast<double>(i % 8));
      }
      reduce_inplace(dtype, ReduceOp::avg, total.data(), contribution.data(), kCount);
    }
    scale_for_average(dtype, total.data(), kCount, kRanks);
    for (std::size_t i = 0; i < kCount; ++i) {
      EXPECT_EQ(total.get(i), 1.5 + 0.25 * static_cast<double>(i % 8)) << to_string(dtype);
    }
  }
}

// --- argument checks (variant independent) ---------------------------------------

TEST(ReduceArguments, CountZeroAcceptsNullBuffers) {
  EXPECT_NO_THROW(reduce_inplace(DType::f32, ReduceOp::sum, nullptr, nullptr, 0));
  EXPECT_NO_THROW(reduce_into(DType::f16, ReduceOp::max, nullptr, nullptr, nullptr, 0));
  EXPECT_NO_THROW(scale_for_average(DType::bf16, nullptr, 0, 3));
}

TEST(ReduceArguments, RejectsNullMisalignedAndPartiallyOverlappingBuffers) {
  std::vector<double> storage(16, 1.0);
  double* base = storage.data();
  EXPECT_THROW(reduce_inplace(DType::f64, ReduceOp::sum, nullptr, base, 4), std::invalid_argument);
  EXPECT_THROW(reduce_into(DType::f64, ReduceOp::sum, base, base + 4, nullptr, 4),
               std::invalid_argument);
  auto* misaligned = reinterpret_cast<unsigned char*>(base) + 2;
  try {
    reduce_inplace(DType::f32, ReduceOp::sum, misaligned, base + 8, 2);
    FAIL() << "a misaligned f32 buffer was accepted";
  } catch (const std::invalid_argument& error) {
    EXPECT_NE(std::string(error.what()).find("aligned"), std::string::npos) << error.what();
  }
  // Overlapping by all but one element.
  EXPECT_THROW(reduce_inplace(DType::f64, ReduceOp::sum, base + 1, base, 4), std::invalid_argument);
  EXPECT_THROW(reduce_into(DType::f64, ReduceOp::sum, base, base + 1, base + 8, 4),
               std::invalid_argument);
  EXPECT_THROW(reduce_into(DType::f64, ReduceOp::sum, base + 3, base + 8, base, 4),
               std::invalid_argument);
  // Adjacent but disjoint is fine, and so are overlapping inputs (only read).
  EXPECT_NO_THROW(reduce_inplace(DType::f64, ReduceOp::sum, base + 4, base, 4));
  EXPECT_NO_THROW(reduce_into(DType::f64, ReduceOp::sum, base + 8, base, base + 1, 4));
}

TEST(ReduceArguments, RejectsUnknownEnumsAndRankCounts) {
  std::vector<float> data(4, 1.0f);
  try {
    reduce_inplace(static_cast<DType>(9), ReduceOp::sum, data.data(), data.data() + 2, 2);
    FAIL() << "DType 9 was accepted";
  } catch (const std::invalid_argument& error) {
    EXPECT_NE(std::string(error.what()).find("f32, f64, f16, bf16"), std::string::npos)
        << error.what();
  }
  try {
    reduce_inplace(DType::f32, static_cast<ReduceOp>(9), data.data(), data.data() + 2, 2);
    FAIL() << "ReduceOp 9 was accepted";
  } catch (const std::invalid_argument& error) {
    EXPECT_NE(std::string(error.what()).find("sum, avg, min, max"), std::string::npos)
        << error.what();
  }
  for (const int ranks : {0, -1, (1 << 24) + 1}) {
    try {
      scale_for_average(DType::f32, data.data(), 4, ranks);
      FAIL() << "ranks " << ranks << " was accepted";
    } catch (const std::invalid_argument& error) {
      EXPECT_NE(std::string(error.what()).find(std::to_string(ranks)), std::string::npos)
          << error.what();
    }
  }
  EXPECT_EQ(data[0], 1.0f) << "a rejected call modified the buffer";
}

TEST(ReduceVariants, BaselineIsAlwaysSupportedAndUnknownNamesAreRejected) {
  const std::vector<std::string_view> supported = supported_reduce_variants();
  ASSERT_FALSE(supported.empty());
  EXPECT_EQ(supported.front(), "baseline");
  const std::string_view active = active_reduce_variant();
  EXPECT_NE(std::find(supported.begin(), supported.end(), active), supported.end()) << active;
  try {
    select_reduce_variant("sse9");
    FAIL() << "an unknown variant was accepted";
  } catch (const std::invalid_argument& error) {
    EXPECT_NE(std::string(error.what()).find("baseline"), std::string::npos) << error.what();
  }
  EXPECT_EQ(active_reduce_variant(), active) << "a rejected selection changed the variant";
}

TEST(ReduceVariants, DefaultIsTheMostCapableSupportedVariant) {
  // The fixture restores the previous variant after each test, so the choice
  // made at the first kernel call of the process is still the active one.
  EXPECT_EQ(active_reduce_variant(), supported_reduce_variants().back());
}

}  // namespace
}  // namespace collbench
