// Reduction kernels: the γ term of every cost model.
//
// All kernels are element-wise over `count` elements. For f16 and bf16 each
// call converts both operands to f32, combines them, and rounds the result
// once (round-to-nearest-even): "16-bit types accumulate in f32 inside a step
// and round once per step". NaN propagates through sum, min and max.
//
// ReduceOp::avg combines like sum; the division by the rank count happens
// once at the end of the collective, in scale_for_average().
//
// Kernels are written so that GCC vectorizes them at -O3 for the baseline
// ISA, with multi-versioned clones (AVX2/F16C, AVX-512) picked at run time:
// cluster nodes differ, so the default build never uses -march=native.
#pragma once

#include <cstddef>

#include "collbench/dtype.h"

namespace collbench {

// dst[i] = op(dst[i], src[i])
void reduce_inplace(DType dtype, ReduceOp op, void* dst, const void* src, std::size_t count);

// dst[i] = op(a[i], b[i]); dst may alias a or b.
void reduce_into(DType dtype, ReduceOp op, void* dst, const void* a, const void* b,
                 std::size_t count);

// data[i] /= ranks for ReduceOp::avg (16-bit types through f32, rounded once).
void scale_for_average(DType dtype, void* data, std::size_t count, int ranks);

}  // namespace collbench
