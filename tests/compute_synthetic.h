// Synthetic gemm rows (the harness's family=local, algorithm=gemm rows) of
// catalog models from a known GEMM rate, for the compute tests.
//
// Every layer's pass at batch b takes flops(b) / (peak · efficiency(b)) with
// efficiency(b) = b / (b + half_batch): the rate rises with the batch to the
// peak, as small GEMMs' does, and a whole model pass runs at exactly
// peak · efficiency(b) at a measured batch (every layer at the same rate).
// No noise: a test checks the arithmetic, not luck.
#pragma once

#include <string>
#include <vector>

#include "collbench/core/csv.h"

namespace collbench::testing {

struct GemmTruth {
  double peak_flops_per_second = 100e9;
  double half_batch = 8;  // the batch at which a GEMM runs at half the peak
  std::vector<std::string> models = {"alexnet"};
  std::vector<int> batches = {1, 2, 4, 8, 16, 32, 64, 128, 256};
  // Each benchmark's repetitions take these multiples of its time (their
  // median is 1 with the default spread).
  std::vector<double> repetition_factors = {1.0};
};

double gemm_efficiency(const GemmTruth& truth, double batch);

// The rows, with the columns the harness writes for them (results/README.md).
CsvTable synthetic_gemm_table(const GemmTruth& truth);

}  // namespace collbench::testing
