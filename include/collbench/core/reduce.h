// Reduction kernels: the γ term of every cost model.
//
// All kernels are element-wise over `count` elements of buffers aligned to
// the element size; two buffers of one call are either the same buffer or
// disjoint (std::invalid_argument otherwise). For f16 and bf16 each call
// converts both operands to f32, combines them, and rounds the result once
// (round-to-nearest-even): "16-bit types accumulate in f32 inside a step and
// round once per step". NaN in either operand gives NaN for sum, avg, min and
// max; min/max of equal operands (+0 and -0) return the second operand.
//
// ReduceOp::avg combines like sum; the division by the rank count happens
// once at the end of the collective, in scale_for_average().
//
// Kernels are written so that GCC vectorizes them at -O3 for the baseline
// ISA, with multi-versioned clones (AVX2 + F16C, AVX-512) picked at run time:
// cluster nodes differ, so the default build never uses -march=native.
#pragma once

#include <cstddef>
#include <string_view>
#include <vector>

#include "collbench/core/dtype.h"

namespace collbench {

// dst[i] = op(dst[i], src[i])
void reduce_inplace(DType dtype, ReduceOp op, void* dst, const void* src, std::size_t count);

// dst[i] = op(a[i], b[i]); dst may alias a or b.
void reduce_into(DType dtype, ReduceOp op, void* dst, const void* a, const void* b,
                 std::size_t count);

// data[i] /= ranks for ReduceOp::avg (16-bit types through f32, rounded once).
// ranks must be in [1, 2^24], where it is exact as an f32 divisor.
void scale_for_average(DType dtype, void* data, std::size_t count, int ranks);

// Instruction-set variants of the kernels: "baseline" (the target's default
// ISA, SSE2 on x86-64), "avx2" (AVX2 + F16C) and "avx512" (F, BW, CD, DQ, VL
// as in x86-64-v4). All give bit-identical results. The best one this CPU
// supports is used unless another is selected.
std::vector<std::string_view> supported_reduce_variants();  // most portable first
std::string_view active_reduce_variant();                   // for run metadata
// For tests and kernel A/B runs; affects every later call in the process.
// Throws std::invalid_argument if `name` is unknown or this CPU cannot run it.
void select_reduce_variant(std::string_view name);

}  // namespace collbench
