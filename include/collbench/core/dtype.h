// Element types and reduction operations of a collective, with their names.
//
// The 16-bit types are IEEE 754 binary16 ("f16") and bfloat16 ("bf16"). They
// are stored as raw uint16_t bits: C++20 has no portable 16-bit float, and the
// kernels convert through f32 anyway (see reduce.h for the rounding rule).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace collbench {

enum class DType : std::uint8_t { f32, f64, f16, bf16 };
enum class ReduceOp : std::uint8_t { sum, avg, min, max };

inline constexpr DType kAllDTypes[] = {DType::f32, DType::f64, DType::f16, DType::bf16};
inline constexpr ReduceOp kAllReduceOps[] = {ReduceOp::sum, ReduceOp::avg, ReduceOp::min,
                                             ReduceOp::max};

std::string_view to_string(DType dtype);
std::string_view to_string(ReduceOp op);
std::optional<DType> parse_dtype(std::string_view name);
std::optional<ReduceOp> parse_reduce_op(std::string_view name);
// "f32, f64, f16, bf16" — for error messages that say what is accepted.
std::string dtype_names();
std::string reduce_op_names();

constexpr std::size_t dtype_size(DType dtype) {
  switch (dtype) {
    case DType::f32:
      return 4;
    case DType::f64:
      return 8;
    case DType::f16:
    case DType::bf16:
      return 2;
  }
  return 0;
}

// Scalar conversions, round-to-nearest-even, NaN preserved as a quiet NaN,
// overflow to infinity, subnormals kept. The vectorized paths in reduce.cpp
// produce bit-identical results (tested).
float half_to_float(std::uint16_t bits);
std::uint16_t float_to_half(float value);
float bf16_to_float(std::uint16_t bits);
std::uint16_t float_to_bf16(float value);

// Reads/writes element `index` of a buffer of `dtype` as double; for tests,
// data initialisation and result checks, never in a timed region. 16-bit
// stores round double -> float -> 16 bits (see store_element in dtype.cpp).
double load_element(DType dtype, const void* data, std::size_t index);
void store_element(DType dtype, void* data, std::size_t index, double value);

}  // namespace collbench
