// The gemm family's names and OpenBLAS set-up (gemm_family.cpp), for main
// and the reporter.
#pragma once

#include <cstdint>
#include <string>

#include "aligned_buffer.h"
#include "collbench/catalog/catalog.h"
#include "collbench/core/check.h"

namespace collbench::harness {

// The pass column of gemm rows.
inline constexpr const char* kGemmForward = "forward";
inline constexpr const char* kGemmBackward = "backward";
inline constexpr const char* kGemmPeak = "peak";
// The peak's square side: 2048³ multiply-adds (17 GFLOP) are well past the
// size where OpenBLAS's blocking reaches its rate on one core, and take a
// fraction of a second.
inline constexpr std::int64_t kGemmPeakSide = 2048;

// One layer's products at one batch, on buffers of their own (the gemm and
// train families'): `shape` is the batched forward product (GemmLayer::
// at_batch), `data_gradient` whether backward computes dA. Buffers: A (m x
// k), B (k x n), C (m x n) and, when `backward`, dB (k x n), `count` of
// each; the data gradient is written over A, which backprop no longer needs
// once the weight gradient has read it. Inputs are integers in {-1, 0, 1},
// so every sum (at most a million terms) is exact in f32 whatever order
// OpenBLAS adds in, and check() compares sampled outputs with exact dot
// products. They never grow: C (dC in backward), B and A (forward) are
// never written by the pass that reads them, and the backward's dA depends
// on dC and B only.
class GemmProducts {
 public:
  GemmProducts(const GemmShape& shape, bool data_gradient, bool backward);
  // C = A·B, `count` times.
  void forward() const;
  // dB = Aᵀ·dC, then dA = dC·Bᵀ (without data_gradient: dB only).
  void backward() const;
  // Fills the inputs from their pattern, so that check() knows them.
  void fill() const;
  // After one forward() (backward false) or backward() since fill():
  // kCheckedOutputs outputs of every product against exact dot products.
  CheckResult check(bool backward);
  std::uint64_t bytes() const;

 private:
  GemmShape shape_;
  bool data_gradient_;
  AlignedBuffer a_;
  AlignedBuffer b_;
  AlignedBuffer c_;
  AlignedBuffer weight_gradient_;
};

// The bytes of GemmProducts(shape, ..., backward)'s buffers.
std::uint64_t gemm_operand_bytes(const GemmShape& shape, bool backward);

// OpenBLAS's threads for this process (--blas-threads).
void configure_blas(int threads);
// The gemm rows' blas column: OpenBLAS's build configuration, the kernel it
// picked for this CPU, its threads and OPENBLAS_CORETYPE (which overrides
// that pick), e.g. "OpenBLAS 0.3.21 DYNAMIC_ARCH NO_AFFINITY Haswell
// MAX_THREADS=64 (Haswell kernel); 1 thread; OPENBLAS_CORETYPE=unset".
std::string blas_description();

}  // namespace collbench::harness
