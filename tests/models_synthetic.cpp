// See models_synthetic.h.
#include "models_synthetic.h"

#include <fmt/format.h>

#include <algorithm>
#include <fstream>
#include <random>
#include <stdexcept>

#include "collbench/collectives/algorithm.h"
#include "collbench/collectives/collective.h"
#include "collbench/models/fit.h"

namespace collbench::testing {

std::vector<std::string> registry_algorithm_names() {
  std::vector<std::string> names;
  // The library's forced algorithms (ompi_*) are `mpi` again for a fit:
  // priced at the lower bound, no cost model of their own.
  for (const AlgorithmInfo& info : find_collective("allreduce")->algorithms) {
    if (!info.forced_library_algorithm) names.emplace_back(info.name);
  }
  return names;
}

std::vector<double> default_sizes() {
  std::vector<double> sizes;
  for (double n = 8; n <= 64.0 * 1024 * 1024; n *= 4) sizes.push_back(n);
  return sizes;
}

CsvTable synthetic_table(const SyntheticTruth& truth) {
  CsvTable table;
  table.header = {"family",    "transport",  "provider",  "algorithm", "ranks", "ranks_per_node",
                  "nodes",     "dtype",      "op",        "bytes",     "count", "peer",
                  "placement", "repetition", "median_us", "check",     "run_id"};
  std::mt19937_64 random(truth.seed);
  std::normal_distribution<double> normal(0.0, 1.0);
  const auto noisy = [&](double seconds) {
    return fmt::format("{:.6f}", seconds * (1 + truth.noise * normal(random)) * 1e6);
  };
  const std::vector<double> sizes = truth.sizes.empty() ? default_sizes() : truth.sizes;
  const auto add = [&](std::string family, std::string transport, std::string algorithm, int ranks,
                       int nodes, std::string dtype, double bytes, std::string peer,
                       std::string placement, double seconds) {
    for (int rep = 0; rep < truth.repetitions; ++rep) {
      table.rows.push_back({family, transport, "", algorithm, std::to_string(ranks),
                            std::to_string(ranks / nodes), std::to_string(nodes), dtype, "sum",
                            fmt::format("{:.0f}", bytes), fmt::format("{:.0f}", bytes / 4), peer,
                            placement, std::to_string(rep), noisy(seconds), "ok", "synthetic"});
    }
  };
  for (double n : sizes) {
    add("p2p", truth.transport, "pingpong", 2, 2, "f32", n, "1", "inter",
        truth.alpha + n * truth.beta);
  }
  for (double n = 1024; n <= 64.0 * 1024 * 1024; n *= 4) {
    add("local", "local", "reduce", 1, 1, "f32", n, "", "",
        truth.reduce_overhead + n * truth.gamma);
    add("local", "local", "memcpy", 1, 1, "f32", n, "", "", n / truth.copy_bandwidth);
  }
  const auto contended = [&](int p) {
    return std::find(truth.sendrecv_ranks.begin(), truth.sendrecv_ranks.end(), p) !=
           truth.sendrecv_ranks.end();
  };
  for (const std::string& algorithm : truth.algorithms) {
    for (int p : truth.ranks) {
      const double alpha = contended(p) ? truth.sendrecv_alpha : truth.alpha;
      const double beta = contended(p) ? truth.sendrecv_beta : truth.beta;
      for (double n : sizes) {
        const CostTerms terms = model_terms("allreduce", algorithm, p, n);
        add("allreduce", truth.transport, algorithm, p, p, "f32", n, "", "",
            terms.seconds(alpha, beta, truth.gamma));
      }
    }
  }
  // Last, so that the noise of every other row does not depend on them.
  for (int p : truth.sendrecv_ranks) {
    for (double n : sizes) {
      add("p2p", truth.transport, "sendrecv", p, p, "f32", n, "", "inter",
          truth.sendrecv_alpha + n * truth.sendrecv_beta);
    }
  }
  return table;
}

void write_table(const std::string& path, const CsvTable& table) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << csv_line(table.header);
  for (const auto& row : table.rows) out << csv_line(row);
  out.close();
  if (!out) throw std::runtime_error(fmt::format("cannot write {}", path));
}

}  // namespace collbench::testing
