// Synthetic collbench measurements from known α, β, γ, for the model tests.
//
// Every time is the exact cost model times (1 + noise·N(0,1)) with a fixed
// seed, so a test that recovers the parameters checks the fitter, not luck:
// ping-pong t = α + nβ, local reduce t = t0 + nγ, memcpy t = n/bandwidth,
// allreduce t = the algorithm's CostTerms (or the lower bound for mpi);
// optionally sendrecv t = α' + nβ' at some rank counts, where the allreduce
// then runs with α', β' (ranks that contend when all send at once).
#pragma once

#include <string>
#include <vector>

#include "collbench/core/csv.h"

namespace collbench::testing {

// The names of the allreduce algorithms (collbench/collectives/collective.h), in registry order.
std::vector<std::string> registry_algorithm_names();

struct SyntheticTruth {
  double alpha = 20e-6;             // s per message
  double beta = 1.0 / 1.25e9;       // s per byte (10 Gb/s)
  double gamma = 1.0 / 5e9;         // s per byte reduced (5 GB/s)
  double reduce_overhead = 0.5e-6;  // s per reduce call
  double copy_bandwidth = 20e9;     // B/s
  double noise = 0.03;              // relative standard deviation
  unsigned seed = 20240611;
  std::string transport = "mpi";
  std::vector<int> ranks = {2, 3, 4, 5, 6, 7, 8};
  // Rank counts with p2p/sendrecv rows (collbench --families sendrecv); at
  // these the allreduce times use sendrecv_alpha, sendrecv_beta too. Empty:
  // no sendrecv rows, every allreduce at the ping-pong's α, β.
  std::vector<int> sendrecv_ranks;
  double sendrecv_alpha = 20e-6;
  double sendrecv_beta = 2.0 / 1.25e9;
  // Default: every algorithm of the registry, in its order.
  std::vector<std::string> algorithms = registry_algorithm_names();
  // Allreduce and ping-pong sizes: 8 B .. 64 MiB in factors of 4.
  std::vector<double> sizes;
  int repetitions = 1;
};

std::vector<double> default_sizes();

// The CSV columns the harness writes that the fitter reads, plus metadata.
CsvTable synthetic_table(const SyntheticTruth& truth);

// Writes `table` as CSV text to `path` (overwriting).
void write_table(const std::string& path, const CsvTable& table);

}  // namespace collbench::testing
