// What every local kernel's prepared case shares (local_family.cpp,
// gemm_family.cpp): its timed calls run on rank 0 alone, or on every rank at
// once, and when rank 0 runs alone the others wait in a sleeping poll so
// that they do not steal its core.
#pragma once

#include <benchmark/benchmark.h>

#include <cstdint>

#include "families.h"
#include "family.h"

namespace collbench::harness {

class LocalKernelCase : public PreparedCase {
 public:
  LocalKernelCase(RunContext& context, bool every_rank)
      : context_(context),
        options_(context.options()),
        rank_(context.rank()),
        every_rank_(every_rank) {}

 protected:
  // `calls` calls of `kernel` where it runs (inlined: no call through a
  // pointer inside the timed loop), then the sleeping barrier when rank 0
  // runs alone. A sample makes calls_per_sample calls; a check one (its
  // result is that of one call, and --interleave checks again in every
  // round, after calibration).
  template <typename Kernel>
  double time_calls(std::uint64_t calls, Kernel kernel) {
    double elapsed = 0;
    if (runs_kernel()) {
      const double start = context_.now();
      for (std::uint64_t i = 0; i < calls; ++i) {
        kernel();
        benchmark::ClobberMemory();
      }
      elapsed = context_.now() - start;
    }
    if (!every_rank_) context_.wait_for_all_ranks_sleeping();
    return elapsed;
  }

  // Whether this rank runs the kernel, and so has a result to check.
  bool runs_kernel() const { return rank_ == 0 || every_rank_; }

  RunContext& context_;
  const Options& options_;
  const int rank_;
  const bool every_rank_;
};

}  // namespace collbench::harness
