// Reduction kernels: element-wise sum/min/max and the final average scaling.
//
// Shape: one switch per call picks a function from a table; each function is
// a flat loop that GCC auto-vectorizes. The same loops are compiled once per
// instruction-set variant (baseline x86-64, AVX2, AVX-512) by inlining a
// generic template into functions with a target attribute, and the best
// variant the CPU supports is chosen at the first call. Cluster nodes differ,
// so nothing here relies on -march=native.
//
// 16-bit types are widened to f32, combined in f32 and narrowed once with
// round-to-nearest-even. The portable path converts with branch-free integer
// code (so it vectorizes for any ISA); the AVX2 and AVX-512 variants convert
// f16 with F16C instructions. Every path must give the scalar conversions of
// dtype.cpp bit for bit; reduce_test.cpp checks every variant against them.
#include "collbench/core/reduce.h"

#include <fmt/format.h>

#include <atomic>
#include <bit>
#include <cstdint>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <type_traits>

#if defined(__x86_64__)
#include <cpuid.h>
#include <immintrin.h>
#endif

namespace collbench {
namespace {

#define COLLBENCH_ALWAYS_INLINE [[gnu::always_inline]] inline

// ---------------------------------------------------------------------------
// Branch-free conversions on 32-bit integers (16-bit values in the low half).
// Every lane computes every case and a select picks one, which is what lets
// GCC turn the loops into straight vector code.
//
// A case computed with float arithmetic is selected with a bit mask, not with
// ?:, because GCC would sink that arithmetic into the branch that uses it and
// then refuse to if-convert it (it may raise FP flags under -ftrapping-math),
// leaving a loop with control flow that does not vectorize.
//
// The widening functions do not set the quiet bit of a NaN as the scalar ones
// do: every kernel result passes through a narrowing function, which quiets
// NaNs and keeps the same payload bits, and f32 arithmetic quiets a signalling
// NaN itself, so the stored results are the same bits either way.

COLLBENCH_ALWAYS_INLINE std::uint32_t all_ones_if(bool condition) {
  return 0u - static_cast<std::uint32_t>(condition);
}

COLLBENCH_ALWAYS_INLINE float widen_half(std::uint32_t half_bits) {
  const std::uint32_t sign = (half_bits & 0x8000u) << 16;
  const std::uint32_t magnitude = half_bits & 0x7fffu;
  // Normal: rebias the exponent from 15 to 127 (112 = 127 - 15).
  const std::uint32_t normal = (magnitude << 13) + (112u << 23);
  // Infinity and NaN: exponent all ones, fraction moved up.
  const std::uint32_t inf_or_nan = (magnitude << 13) | 0x7f800000u;
  // Subnormal (and zero): fraction * 2^-24, exact in float arithmetic.
  const std::uint32_t subnormal = std::bit_cast<std::uint32_t>(
      static_cast<float>(static_cast<std::int32_t>(magnitude)) * 0x1p-24f);
  const std::uint32_t not_subnormal = magnitude >= 0x7c00u ? inf_or_nan : normal;
  const std::uint32_t subnormal_mask = all_ones_if(magnitude < 0x0400u);
  return std::bit_cast<float>(sign | (subnormal & subnormal_mask) |
                              (not_subnormal & ~subnormal_mask));
}

COLLBENCH_ALWAYS_INLINE std::uint32_t narrow_to_half(float value) {
  const std::uint32_t bits = std::bit_cast<std::uint32_t>(value);
  const std::uint32_t sign = (bits >> 16) & 0x8000u;
  const std::uint32_t magnitude = bits & 0x7fffffffu;
  // NaN: quiet, top of the payload kept.
  const std::uint32_t nan = 0x7e00u | ((magnitude >> 13) & 0x3ffu);
  // Normal half: rebias, then round the 13 dropped bits to nearest even with
  // integer adds; a carry walks into the exponent and at the top to infinity.
  const std::uint32_t odd = (magnitude >> 13) & 1u;
  const std::uint32_t normal = (magnitude - (112u << 23) + 0xfffu + odd) >> 13;
  // Subnormal half: adding 0.5f (whose ulp is 2^-24, the half subnormal unit)
  // makes the FPU round to that unit; the low bits are then the result.
  const std::uint32_t subnormal =
      std::bit_cast<std::uint32_t>(std::bit_cast<float>(magnitude) + 0.5f) - 0x3f000000u;
  const std::uint32_t not_subnormal = magnitude > 0x7f800000u    ? nan
                                      : magnitude >= 0x47800000u ? 0x7c00u  // >= 65536: infinity
                                                                 : normal;
  const std::uint32_t subnormal_mask = all_ones_if(magnitude < 0x38800000u);  // < 2^-14
  return sign | (subnormal & subnormal_mask) | (not_subnormal & ~subnormal_mask);
}

COLLBENCH_ALWAYS_INLINE float widen_bf16(std::uint32_t bf16_bits) {
  return std::bit_cast<float>(bf16_bits << 16);
}

COLLBENCH_ALWAYS_INLINE std::uint32_t narrow_to_bf16(float value) {
  const std::uint32_t bits = std::bit_cast<std::uint32_t>(value);
  const std::uint32_t nan = (bits >> 16) | 0x0040u;
  const std::uint32_t rounded = (bits + 0x7fffu + ((bits >> 16) & 1u)) >> 16;
  return (bits & 0x7fffffffu) > 0x7f800000u ? nan : rounded;
}

// ---------------------------------------------------------------------------
// Element types: how a stored element becomes a value to combine and back.
// The 16-bit ones convert from and to 32-bit integers so that the loops can
// work on pairs of elements (see PackedPair below).

struct F32Element {
  using Storage = float;
  using Compute = float;
  static constexpr bool kSixteenBit = false;
  COLLBENCH_ALWAYS_INLINE static Compute widen(Storage value) { return value; }
  COLLBENCH_ALWAYS_INLINE static Storage narrow(Compute value) { return value; }
};

struct F64Element {
  using Storage = double;
  using Compute = double;
  static constexpr bool kSixteenBit = false;
  COLLBENCH_ALWAYS_INLINE static Compute widen(Storage value) { return value; }
  COLLBENCH_ALWAYS_INLINE static Storage narrow(Compute value) { return value; }
};

struct F16Element {
  using Storage = std::uint16_t;
  using Compute = float;
  static constexpr bool kSixteenBit = true;
  COLLBENCH_ALWAYS_INLINE static Compute widen(std::uint32_t bits) { return widen_half(bits); }
  COLLBENCH_ALWAYS_INLINE static std::uint32_t narrow(Compute value) {
    return narrow_to_half(value);
  }
};

struct Bf16Element {
  using Storage = std::uint16_t;
  using Compute = float;
  static constexpr bool kSixteenBit = true;
  COLLBENCH_ALWAYS_INLINE static Compute widen(std::uint32_t bits) { return widen_bf16(bits); }
  COLLBENCH_ALWAYS_INLINE static std::uint32_t narrow(Compute value) {
    return narrow_to_bf16(value);
  }
};

// ---------------------------------------------------------------------------
// Operations. min/max return `a` when it is NaN or strictly better, else `b`:
// a NaN on either side wins (std::min would drop a NaN in `a`), the compare
// and select map onto vector compare + blend, and for equal operands such as
// +0 and -0 the second operand is returned.

enum class OpKind { sum, min, max };

struct SumOp {
  static constexpr OpKind kKind = OpKind::sum;
  template <class T>
  COLLBENCH_ALWAYS_INLINE static T apply(T a, T b) {
    return a + b;
  }
};

struct MinOp {
  static constexpr OpKind kKind = OpKind::min;
  template <class T>
  COLLBENCH_ALWAYS_INLINE static T apply(T a, T b) {
    const bool a_wins = (a < b) | (a != a);
    return a_wins ? a : b;
  }
};

struct MaxOp {
  static constexpr OpKind kKind = OpKind::max;
  template <class T>
  COLLBENCH_ALWAYS_INLINE static T apply(T a, T b) {
    const bool a_wins = (a > b) | (a != a);
    return a_wins ? a : b;
  }
};

// ---------------------------------------------------------------------------
// 16-bit elements are processed two at a time as one 32-bit word: the low
// and high halves are split with a mask and a shift, converted, combined, and
// put back in the same positions. Everything stays in 32-bit lanes, so the
// vectorized loop needs no 16<->32-bit unpack/pack shuffles (SSE2 has no
// unsigned 32->16 pack at all); which half holds the even element does not
// matter because both operands and the result use the same positions.

struct PackedPair {
  COLLBENCH_ALWAYS_INLINE static std::uint32_t load(const std::uint16_t* elements) {
    std::uint32_t word = 0;
    std::memcpy(&word, elements, sizeof word);  // no alias or alignment assumption
    return word;
  }
  COLLBENCH_ALWAYS_INLINE static void store(std::uint16_t* elements, std::uint32_t word) {
    std::memcpy(elements, &word, sizeof word);
  }
  COLLBENCH_ALWAYS_INLINE static std::uint32_t low(std::uint32_t word) { return word & 0xffffu; }
  COLLBENCH_ALWAYS_INLINE static std::uint32_t high(std::uint32_t word) { return word >> 16; }
  COLLBENCH_ALWAYS_INLINE static std::uint32_t join(std::uint32_t low, std::uint32_t high) {
    return low | (high << 16);
  }
};

// ---------------------------------------------------------------------------
// One element or one packed pair through widen -> op -> narrow.

template <class Element, class Op>
COLLBENCH_ALWAYS_INLINE typename Element::Storage combine_one(typename Element::Storage a,
                                                              typename Element::Storage b) {
  using Storage = typename Element::Storage;
  return static_cast<Storage>(Element::narrow(Op::apply(Element::widen(a), Element::widen(b))));
}

template <class Element, class Op>
COLLBENCH_ALWAYS_INLINE std::uint32_t combine_pair(std::uint32_t a_word, std::uint32_t b_word) {
  using E = Element;
  const float low = Op::apply(E::widen(PackedPair::low(a_word)), E::widen(PackedPair::low(b_word)));
  const float high =
      Op::apply(E::widen(PackedPair::high(a_word)), E::widen(PackedPair::high(b_word)));
  return PackedPair::join(E::narrow(low), E::narrow(high));
}

template <class Element>
COLLBENCH_ALWAYS_INLINE typename Element::Storage divide_one(typename Element::Storage value,
                                                             typename Element::Compute divisor) {
  using Storage = typename Element::Storage;
  return static_cast<Storage>(Element::narrow(Element::widen(value) / divisor));
}

template <class Element>
COLLBENCH_ALWAYS_INLINE std::uint32_t divide_pair(std::uint32_t word, float divisor) {
  using E = Element;
  return PackedPair::join(E::narrow(E::widen(PackedPair::low(word)) / divisor),
                          E::narrow(E::widen(PackedPair::high(word)) / divisor));
}

// ---------------------------------------------------------------------------
// Loops. Every pointer that is written is __restrict: the aliasing cases of
// the public API are routed to the loop whose contract they meet, so GCC
// needs no run-time overlap checks and no scalar fallback. 16-bit types run
// pairs, then the odd last element on its own.

// dst[i] = op(a[i], b[i])
template <class Element, class Op>
COLLBENCH_ALWAYS_INLINE void combine_loop(typename Element::Storage* __restrict dst,
                                          const typename Element::Storage* __restrict a,
                                          const typename Element::Storage* __restrict b,
                                          std::size_t count) {
  std::size_t done = 0;
  if constexpr (Element::kSixteenBit) {
    for (; done + 2 <= count; done += 2) {
      PackedPair::store(dst + done, combine_pair<Element, Op>(PackedPair::load(a + done),
                                                              PackedPair::load(b + done)));
    }
  }
  for (; done < count; ++done) {
    dst[done] = combine_one<Element, Op>(a[done], b[done]);
  }
}

// dst[i] = op(dst[i], src[i]), or op(src[i], dst[i]) when dst holds the
// second operand (reduce_into with dst == b keeps the operand order).
template <class Element, class Op, bool kDstIsFirstOperand>
COLLBENCH_ALWAYS_INLINE void accumulate_loop(typename Element::Storage* __restrict dst,
                                             const typename Element::Storage* __restrict src,
                                             std::size_t count) {
  std::size_t done = 0;
  if constexpr (Element::kSixteenBit) {
    for (; done + 2 <= count; done += 2) {
      const std::uint32_t mine = PackedPair::load(dst + done);
      const std::uint32_t theirs = PackedPair::load(src + done);
      PackedPair::store(dst + done, kDstIsFirstOperand ? combine_pair<Element, Op>(mine, theirs)
                                                       : combine_pair<Element, Op>(theirs, mine));
    }
  }
  for (; done < count; ++done) {
    dst[done] = kDstIsFirstOperand ? combine_one<Element, Op>(dst[done], src[done])
                                   : combine_one<Element, Op>(src[done], dst[done]);
  }
}

// dst[i] = op(dst[i], dst[i]): reduce_into with dst == a == b.
template <class Element, class Op>
COLLBENCH_ALWAYS_INLINE void self_combine_loop(typename Element::Storage* __restrict dst,
                                               std::size_t count) {
  std::size_t done = 0;
  if constexpr (Element::kSixteenBit) {
    for (; done + 2 <= count; done += 2) {
      const std::uint32_t word = PackedPair::load(dst + done);
      PackedPair::store(dst + done, combine_pair<Element, Op>(word, word));
    }
  }
  for (; done < count; ++done) {
    dst[done] = combine_one<Element, Op>(dst[done], dst[done]);
  }
}

template <class Element>
COLLBENCH_ALWAYS_INLINE void scale_loop(typename Element::Storage* __restrict data,
                                        std::size_t count, typename Element::Compute divisor) {
  std::size_t done = 0;
  if constexpr (Element::kSixteenBit) {
    for (; done + 2 <= count; done += 2) {
      PackedPair::store(data + done, divide_pair<Element>(PackedPair::load(data + done), divisor));
    }
  }
  for (; done < count; ++done) {
    data[done] = divide_one<Element>(data[done], divisor);
  }
}

// ---------------------------------------------------------------------------
// Hardware f16 conversion. F16C converts 8 (AVX-512F: 16) halves per
// instruction where the branch-free integer code above costs ~25 instructions
// per vector, which made f16 kernels compute-bound. Rounding is fixed to
// nearest-even in the instruction (not taken from MXCSR); NaNs come out quiet
// with the top of the payload kept, exactly like narrow_to_half/widen_half
// (the tests compare every variant bit for bit). The operations are spelled
// with intrinsics because a generic template operating on __m256 could not be
// inlined into these target-specific functions.
//
// A block type supplies kLanes, load/store (16-bit memory <-> f32 vector),
// apply<Op> and divide; kLanes == 0 means "no hardware path".

struct NoHalfBlock {
  static constexpr std::size_t kLanes = 0;
};

#if defined(__x86_64__)
#define COLLBENCH_AVX2_F16C [[gnu::always_inline, gnu::target("avx2,f16c")]] inline
struct Avx2HalfBlock {
  static constexpr std::size_t kLanes = 8;
  COLLBENCH_AVX2_F16C static __m256 load(const std::uint16_t* source) {
    return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(source)));
  }
  COLLBENCH_AVX2_F16C static void store(std::uint16_t* destination, __m256 values) {
    _mm_storeu_si128(reinterpret_cast<__m128i*>(destination),
                     _mm256_cvtps_ph(values, _MM_FROUND_TO_NEAREST_INT));
  }
  template <class Op>
  COLLBENCH_AVX2_F16C static __m256 apply(__m256 a, __m256 b) {
    if constexpr (Op::kKind == OpKind::sum) {
      return _mm256_add_ps(a, b);
    } else {
      // Same rule as MinOp/MaxOp: a wins if strictly better or NaN.
      constexpr int kBetter = Op::kKind == OpKind::min ? _CMP_LT_OQ : _CMP_GT_OQ;
      const __m256 a_wins =
          _mm256_or_ps(_mm256_cmp_ps(a, b, kBetter), _mm256_cmp_ps(a, a, _CMP_UNORD_Q));
      return _mm256_blendv_ps(b, a, a_wins);
    }
  }
  COLLBENCH_AVX2_F16C static __m256 divide(__m256 values, float divisor) {
    return _mm256_div_ps(values, _mm256_set1_ps(divisor));
  }
};
#undef COLLBENCH_AVX2_F16C

#define COLLBENCH_AVX512_F16C [[gnu::always_inline, gnu::target("avx512f")]] inline
struct Avx512HalfBlock {
  static constexpr std::size_t kLanes = 16;
  COLLBENCH_AVX512_F16C static __m512 load(const std::uint16_t* source) {
    // The zero-masked forms with a full mask (here and in store) are the same
    // instructions; the plain ones trip GCC 12's -Wmaybe-uninitialized on
    // their _mm512_undefined_*() pass-through operand.
    return _mm512_maskz_cvtph_ps(__mmask16{0xffff},
                                 _mm256_loadu_si256(reinterpret_cast<const __m256i*>(source)));
  }
  COLLBENCH_AVX512_F16C static void store(std::uint16_t* destination, __m512 values) {
    _mm256_storeu_si256(
        reinterpret_cast<__m256i*>(destination),
        _mm512_maskz_cvtps_ph(__mmask16{0xffff}, values, _MM_FROUND_TO_NEAREST_INT));
  }
  template <class Op>
  COLLBENCH_AVX512_F16C static __m512 apply(__m512 a, __m512 b) {
    if constexpr (Op::kKind == OpKind::sum) {
      return _mm512_add_ps(a, b);
    } else {
      constexpr int kBetter = Op::kKind == OpKind::min ? _CMP_LT_OQ : _CMP_GT_OQ;
      const __mmask16 a_wins =
          _mm512_cmp_ps_mask(a, b, kBetter) | _mm512_cmp_ps_mask(a, a, _CMP_UNORD_Q);
      return _mm512_mask_blend_ps(a_wins, b, a);
    }
  }
  COLLBENCH_AVX512_F16C static __m512 divide(__m512 values, float divisor) {
    return _mm512_div_ps(values, _mm512_set1_ps(divisor));
  }
};
#undef COLLBENCH_AVX512_F16C
#endif  // __x86_64__

// ---------------------------------------------------------------------------
// Instruction-set variants. A function template cannot take its target
// attribute from a template argument, so this macro stamps out one struct of
// entry points per variant; each entry point inlines the generic loop and is
// compiled (and vectorized) for that variant's target. For f16, a variant
// with a HalfBlock runs whole blocks through it and leaves the remainder
// (fewer than kLanes elements) to the generic loop. HalfBlock is a defaulted
// template parameter only so that the unused block branch stays a dependent,
// discarded statement for NoHalfBlock.

#define COLLBENCH_DEFINE_KERNEL_VARIANT(VariantName, TARGET_ATTRIBUTE, HalfBlockType)              \
  struct VariantName {                                                                             \
    template <class Element, class HalfBlock>                                                      \
    static constexpr bool kUsesHalfBlock =                                                         \
        HalfBlock::kLanes > 0 && std::is_same_v<Element, F16Element>;                              \
                                                                                                   \
    template <class Element, class Op, class HalfBlock = HalfBlockType>                            \
    TARGET_ATTRIBUTE static void combine(void* dst_bytes, const void* a_bytes,                     \
                                         const void* b_bytes, std::size_t count) {                 \
      using Storage = typename Element::Storage;                                                   \
      auto* __restrict dst = static_cast<Storage*>(dst_bytes);                                     \
      const auto* __restrict a = static_cast<const Storage*>(a_bytes);                             \
      const auto* __restrict b = static_cast<const Storage*>(b_bytes);                             \
      std::size_t done = 0;                                                                        \
      if constexpr (kUsesHalfBlock<Element, HalfBlock>) {                                          \
        for (; done + HalfBlock::kLanes <= count; done += HalfBlock::kLanes) {                     \
          HalfBlock::store(dst + done, HalfBlock::template apply<Op>(HalfBlock::load(a + done),    \
                                                                     HalfBlock::load(b + done)));  \
        }                                                                                          \
      }                                                                                            \
      combine_loop<Element, Op>(dst + done, a + done, b + done, count - done);                     \
    }                                                                                              \
                                                                                                   \
    template <class Element, class Op, bool kDstIsFirstOperand, class HalfBlock = HalfBlockType>   \
    TARGET_ATTRIBUTE static void accumulate(void* dst_bytes, const void* src_bytes,                \
                                            std::size_t count) {                                   \
      using Storage = typename Element::Storage;                                                   \
      auto* __restrict dst = static_cast<Storage*>(dst_bytes);                                     \
      const auto* __restrict src = static_cast<const Storage*>(src_bytes);                         \
      std::size_t done = 0;                                                                        \
      if constexpr (kUsesHalfBlock<Element, HalfBlock>) {                                          \
        for (; done + HalfBlock::kLanes <= count; done += HalfBlock::kLanes) {                     \
          const auto mine = HalfBlock::load(dst + done);                                           \
          const auto theirs = HalfBlock::load(src + done);                                         \
          if constexpr (kDstIsFirstOperand) {                                                      \
            HalfBlock::store(dst + done, HalfBlock::template apply<Op>(mine, theirs));             \
          } else {                                                                                 \
            HalfBlock::store(dst + done, HalfBlock::template apply<Op>(theirs, mine));             \
          }                                                                                        \
        }                                                                                          \
      }                                                                                            \
      accumulate_loop<Element, Op, kDstIsFirstOperand>(dst + done, src + done, count - done);      \
    }                                                                                              \
                                                                                                   \
    template <class Element, class Op, class HalfBlock = HalfBlockType>                            \
    TARGET_ATTRIBUTE static void self_combine(void* dst_bytes, std::size_t count) {                \
      auto* __restrict dst = static_cast<typename Element::Storage*>(dst_bytes);                   \
      std::size_t done = 0;                                                                        \
      if constexpr (kUsesHalfBlock<Element, HalfBlock>) {                                          \
        for (; done + HalfBlock::kLanes <= count; done += HalfBlock::kLanes) {                     \
          const auto value = HalfBlock::load(dst + done);                                          \
          HalfBlock::store(dst + done, HalfBlock::template apply<Op>(value, value));               \
        }                                                                                          \
      }                                                                                            \
      self_combine_loop<Element, Op>(dst + done, count - done);                                    \
    }                                                                                              \
                                                                                                   \
    template <class Element, class HalfBlock = HalfBlockType>                                      \
    TARGET_ATTRIBUTE static void scale(void* data_bytes, std::size_t count, int ranks) {           \
      auto* __restrict data = static_cast<typename Element::Storage*>(data_bytes);                 \
      const auto divisor = static_cast<typename Element::Compute>(ranks);                          \
      std::size_t done = 0;                                                                        \
      if constexpr (kUsesHalfBlock<Element, HalfBlock>) {                                          \
        for (; done + HalfBlock::kLanes <= count; done += HalfBlock::kLanes) {                     \
          HalfBlock::store(data + done, HalfBlock::divide(HalfBlock::load(data + done), divisor)); \
        }                                                                                          \
      }                                                                                            \
      scale_loop<Element>(data + done, count - done, divisor);                                     \
    }                                                                                              \
  };

COLLBENCH_DEFINE_KERNEL_VARIANT(BaselineKernels, , NoHalfBlock)
#if defined(__x86_64__)
COLLBENCH_DEFINE_KERNEL_VARIANT(Avx2Kernels, __attribute__((target("avx2,f16c"))), Avx2HalfBlock)
// The AVX-512 set of x86-64-v4 (Skylake-SP and later, Zen 4): without BW the
// 16-bit lanes of the bf16 loops stay in 256-bit registers. 512-bit vectors
// are asked for explicitly because GCC's generic tuning may stay at 256 bits,
// and these loops are bandwidth-bound streams.
#if defined(__clang__)
#define COLLBENCH_AVX512_TARGET "avx512f,avx512bw,avx512cd,avx512dq,avx512vl"
#else
#define COLLBENCH_AVX512_TARGET \
  "avx512f,avx512bw,avx512cd,avx512dq,avx512vl,prefer-vector-width=512"
#endif
COLLBENCH_DEFINE_KERNEL_VARIANT(Avx512Kernels, __attribute__((target(COLLBENCH_AVX512_TARGET))),
                                Avx512HalfBlock)
#undef COLLBENCH_AVX512_TARGET
#endif

#undef COLLBENCH_DEFINE_KERNEL_VARIANT

// ---------------------------------------------------------------------------
// Dispatch tables: [dtype][op kind]; sum and avg share the sum kernels.

using CombineFn = void (*)(void* dst, const void* a, const void* b, std::size_t count);
using AccumulateFn = void (*)(void* dst, const void* src, std::size_t count);
using SelfCombineFn = void (*)(void* dst, std::size_t count);
using ScaleFn = void (*)(void* data, std::size_t count, int ranks);

constexpr std::size_t kOpKinds = 3;  // sum (also avg), min, max
constexpr std::size_t kDTypes = std::size(kAllDTypes);

struct ElementKernels {
  CombineFn combine[kOpKinds];
  AccumulateFn accumulate[kOpKinds];           // dst = op(dst, src)
  AccumulateFn accumulate_reversed[kOpKinds];  // dst = op(src, dst)
  SelfCombineFn self_combine[kOpKinds];
  ScaleFn scale;
};

struct KernelVariant {
  std::string_view name;
  bool (*cpu_supports)();
  ElementKernels by_dtype[kDTypes];
};

template <class Variant, class Element>
constexpr ElementKernels make_element_kernels() {
  return ElementKernels{
      {&Variant::template combine<Element, SumOp>, &Variant::template combine<Element, MinOp>,
       &Variant::template combine<Element, MaxOp>},
      {&Variant::template accumulate<Element, SumOp, true>,
       &Variant::template accumulate<Element, MinOp, true>,
       &Variant::template accumulate<Element, MaxOp, true>},
      {&Variant::template accumulate<Element, SumOp, false>,
       &Variant::template accumulate<Element, MinOp, false>,
       &Variant::template accumulate<Element, MaxOp, false>},
      {&Variant::template self_combine<Element, SumOp>,
       &Variant::template self_combine<Element, MinOp>,
       &Variant::template self_combine<Element, MaxOp>},
      &Variant::template scale<Element>,
  };
}

// The order of by_dtype follows the DType enumerators (f32, f64, f16, bf16).
static_assert(static_cast<int>(DType::f32) == 0 && static_cast<int>(DType::f64) == 1 &&
              static_cast<int>(DType::f16) == 2 && static_cast<int>(DType::bf16) == 3);

template <class Variant>
constexpr KernelVariant make_variant(std::string_view name, bool (*cpu_supports)()) {
  return KernelVariant{
      name,
      cpu_supports,
      {make_element_kernels<Variant, F32Element>(), make_element_kernels<Variant, F64Element>(),
       make_element_kernels<Variant, F16Element>(), make_element_kernels<Variant, Bf16Element>()}};
}

bool always_supported() { return true; }
#if defined(__x86_64__)
// __builtin_cpu_supports also checks that the OS saves the wider registers.
// __builtin_cpu_init() makes it safe to call from static initialisers (a
// test's parameter list, say), which may run before libgcc's own.
bool cpu_has_avx2() {
  __builtin_cpu_init();
  // F16C from CPUID directly: older Clang rejects "f16c" in
  // __builtin_cpu_supports. Its registers are AVX's, which the avx2 check
  // already found saved by the OS.
  unsigned eax = 0;
  unsigned ebx = 0;
  unsigned ecx = 0;
  unsigned edx = 0;
  const bool has_f16c = __get_cpuid(1, &eax, &ebx, &ecx, &edx) != 0 && (ecx & bit_F16C) != 0;
  return __builtin_cpu_supports("avx2") && has_f16c;
}
bool cpu_has_avx512() {
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
         __builtin_cpu_supports("avx512cd") && __builtin_cpu_supports("avx512dq") &&
         __builtin_cpu_supports("avx512vl");
}
#endif

// Ordered from the most portable to the fastest.
constexpr KernelVariant kVariants[] = {
    make_variant<BaselineKernels>("baseline", &always_supported),
#if defined(__x86_64__)
    make_variant<Avx2Kernels>("avx2", &cpu_has_avx2),
    make_variant<Avx512Kernels>("avx512", &cpu_has_avx512),
#endif
};

const KernelVariant& best_supported_variant() {
  const KernelVariant* best = &kVariants[0];
  for (const KernelVariant& variant : kVariants) {
    if (variant.cpu_supports()) {
      best = &variant;
    }
  }
  return *best;
}

// Chosen once; later stores only come from select_reduce_variant(). The race
// of two first calls is benign: both store the same pointer.
std::atomic<const KernelVariant*> active_variant_pointer{nullptr};

const KernelVariant& active_variant() {
  const KernelVariant* variant = active_variant_pointer.load(std::memory_order_acquire);
  if (variant == nullptr) {
    variant = &best_supported_variant();
    active_variant_pointer.store(variant, std::memory_order_release);
  }
  return *variant;
}

// ---------------------------------------------------------------------------
// Argument checks, done once per call.

const ElementKernels& kernels_for(DType dtype) {
  if (dtype_size(dtype) == 0) {
    throw std::invalid_argument(fmt::format("reduce: unknown DType value {}; accepted: {}",
                                            static_cast<int>(dtype), dtype_names()));
  }
  return active_variant().by_dtype[static_cast<std::size_t>(dtype)];
}

std::size_t op_kind(ReduceOp op) {
  switch (op) {
    case ReduceOp::sum:
    case ReduceOp::avg:
      return 0;
    case ReduceOp::min:
      return 1;
    case ReduceOp::max:
      return 2;
  }
  throw std::invalid_argument(fmt::format("reduce: unknown ReduceOp value {}; accepted: {}",
                                          static_cast<int>(op), reduce_op_names()));
}

// Returns the byte length of the buffers; rejects null, misaligned or
// oversized buffers (the kernels access elements as typed values).
std::size_t check_buffer(std::string_view function, std::string_view what, DType dtype,
                         const void* buffer, std::size_t count) {
  const std::size_t element_size = dtype_size(dtype);
  if (count > std::numeric_limits<std::size_t>::max() / element_size) {
    throw std::invalid_argument(fmt::format("{}: count {} of {} elements overflows the byte size",
                                            function, count, to_string(dtype)));
  }
  if (buffer == nullptr) {
    throw std::invalid_argument(
        fmt::format("{}: {} is null with count {}; a null buffer is accepted only for count 0",
                    function, what, count));
  }
  if (reinterpret_cast<std::uintptr_t>(buffer) % element_size != 0) {
    throw std::invalid_argument(
        fmt::format("{}: {} at {} is not aligned to the {}-byte {} element size", function, what,
                    buffer, element_size, to_string(dtype)));
  }
  return count * element_size;
}

// Two buffers may be the same buffer or disjoint; a partial overlap would make
// the result depend on the loop order, so it is rejected.
void check_same_or_disjoint(std::string_view function, std::string_view first_name,
                            const void* first, std::string_view second_name, const void* second,
                            std::size_t bytes) {
  const auto first_address = reinterpret_cast<std::uintptr_t>(first);
  const auto second_address = reinterpret_cast<std::uintptr_t>(second);
  const bool overlap =
      first_address < second_address + bytes && second_address < first_address + bytes;
  if (overlap && first_address != second_address) {
    throw std::invalid_argument(fmt::format(
        "{}: {} ({}) and {} ({}) overlap partially over {} bytes; they must be the same buffer "
        "or disjoint",
        function, first_name, first, second_name, second, bytes));
  }
}

}  // namespace

void reduce_inplace(DType dtype, ReduceOp op, void* dst, const void* src, std::size_t count) {
  const ElementKernels& kernels = kernels_for(dtype);
  const std::size_t kind = op_kind(op);
  if (count == 0) {
    return;
  }
  const std::size_t bytes = check_buffer("reduce_inplace", "dst", dtype, dst, count);
  check_buffer("reduce_inplace", "src", dtype, src, count);
  check_same_or_disjoint("reduce_inplace", "dst", dst, "src", src, bytes);
  if (dst == src) {
    kernels.self_combine[kind](dst, count);
  } else {
    kernels.accumulate[kind](dst, src, count);
  }
}

void reduce_into(DType dtype, ReduceOp op, void* dst, const void* a, const void* b,
                 std::size_t count) {
  const ElementKernels& kernels = kernels_for(dtype);
  const std::size_t kind = op_kind(op);
  if (count == 0) {
    return;
  }
  const std::size_t bytes = check_buffer("reduce_into", "dst", dtype, dst, count);
  check_buffer("reduce_into", "a", dtype, a, count);
  check_buffer("reduce_into", "b", dtype, b, count);
  check_same_or_disjoint("reduce_into", "dst", dst, "a", a, bytes);
  check_same_or_disjoint("reduce_into", "dst", dst, "b", b, bytes);
  // a and b are only read, so they may overlap each other in any way.
  if (dst == a && dst == b) {
    kernels.self_combine[kind](dst, count);
  } else if (dst == a) {
    kernels.accumulate[kind](dst, b, count);
  } else if (dst == b) {
    kernels.accumulate_reversed[kind](dst, a, count);
  } else {
    kernels.combine[kind](dst, a, b, count);
  }
}

void scale_for_average(DType dtype, void* data, std::size_t count, int ranks) {
  const ElementKernels& kernels = kernels_for(dtype);
  // Up to 2^24 the rank count is exact as a float divisor, so every dtype
  // gets the correctly rounded quotient.
  constexpr int kMaxRanks = 1 << 24;
  if (ranks < 1 || ranks > kMaxRanks) {
    throw std::invalid_argument(
        fmt::format("scale_for_average: ranks is {}; accepted: 1 to {}", ranks, kMaxRanks));
  }
  if (count == 0) {
    return;
  }
  check_buffer("scale_for_average", "data", dtype, data, count);
  kernels.scale(data, count, ranks);
}

std::vector<std::string_view> supported_reduce_variants() {
  std::vector<std::string_view> names;
  for (const KernelVariant& variant : kVariants) {
    if (variant.cpu_supports()) {
      names.push_back(variant.name);
    }
  }
  return names;
}

std::string_view active_reduce_variant() { return active_variant().name; }

void select_reduce_variant(std::string_view name) {
  std::string supported;
  for (const KernelVariant& variant : kVariants) {
    if (!variant.cpu_supports()) {
      continue;
    }
    if (variant.name == name) {
      active_variant_pointer.store(&variant, std::memory_order_release);
      return;
    }
    supported += supported.empty() ? "" : ", ";
    supported += variant.name;
  }
  throw std::invalid_argument(fmt::format(
      "select_reduce_variant: '{}' is unknown or not supported by this CPU; accepted here: {}",
      name, supported));
}

}  // namespace collbench
