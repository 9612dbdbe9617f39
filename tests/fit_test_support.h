// What the fitter's test files (fit_*_test.cpp) share: small CSV tables, the
// message a table is refused with, synthetic points, and finding a fit in
// the results.
#pragma once

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "collbench/models/fit.h"
#include "models_synthetic.h"

namespace collbench::testing {

inline TimeSpread spread(double median, double half_iqr, int repetitions = 5) {
  return {median, median - half_iqr, median + half_iqr, repetitions};
}

inline CsvTable small_table() {
  CsvTable t;
  t.header = {"family", "transport", "provider",  "algorithm", "ranks",     "dtype",
              "op",     "bytes",     "placement", "nodes",     "median_us", "check"};
  t.rows = {
      {"p2p", "mpi", "", "pingpong", "2", "f32", "sum", "8", "inter", "2", "10", "ok"},
      {"p2p", "mpi", "", "pingpong", "2", "f32", "sum", "8", "inter", "2", "30", "ok"},
      {"p2p", "mpi", "", "pingpong", "2", "f32", "sum", "8", "inter", "2", "12", "ok"},
      {"allreduce", "mpi", "", "ring", "4", "f32", "sum", "64", "", "4", "50", "ok"},
      {"allreduce", "mpi", "", "ring", "4", "f32", "sum", "64", "", "4", "900", "wrong"},
      {"exchange", "mpi", "", "ring", "4", "f32", "sum", "64", "", "4", "50", "ok"},
  };
  return t;
}

inline std::string load_error(const CsvTable& table, const std::string& name = "bad.csv") {
  const std::vector<NamedTable> tables = {{name, table}};
  try {
    aggregate_measurements(tables);
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "no error";
}

inline const ModelFit* find_fit(const FitResults& results, const std::string& model,
                                const std::string& algorithm = "") {
  for (const ModelFit& f : results.fits) {
    if (f.model == model && (algorithm.empty() || f.algorithm == algorithm)) return &f;
  }
  return nullptr;
}

inline std::vector<Measurement> synthetic_points(const SyntheticTruth& truth) {
  const std::vector<NamedTable> tables = {{"synthetic.csv", synthetic_table(truth)}};
  return aggregate_measurements(tables);
}

inline void expect_within(double fitted, double truth, double tolerance, const std::string& what) {
  EXPECT_LE(std::abs(fitted - truth), tolerance * truth)
      << what << ": fitted " << fitted << ", truth " << truth;
}

inline std::vector<const ModelFit*> find_fits(const FitResults& results, const std::string& model,
                                              const std::string& algorithm) {
  std::vector<const ModelFit*> found;
  for (const ModelFit& f : results.fits) {
    if (f.model == model && f.algorithm == algorithm) found.push_back(&f);
  }
  return found;
}

// A links CSV of collbench-linkmatrix with one row per (latency µs,
// bandwidth GB/s) of `links`, between hosts h0 and h<i+1>.
inline CsvTable links_table(const std::vector<std::pair<double, double>>& links,
                            double latency_bytes = 8, double bandwidth_bytes = 4 << 20) {
  CsvTable t;
  t.header = {"src",           "dst",        "src_rank",        "dst_rank",       "round",
              "latency_bytes", "latency_us", "bandwidth_bytes", "bandwidth_GBps", "transport",
              "provider",      "mode"};
  for (std::size_t i = 0; i < links.size(); ++i) {
    t.rows.push_back({"h0", fmt::format("h{}", i + 1), "0", fmt::to_string(i + 1), "0",
                      fmt::format("{:.0f}", latency_bytes), fmt::format("{:.17g}", links[i].first),
                      fmt::format("{:.0f}", bandwidth_bytes),
                      fmt::format("{:.17g}", links[i].second), "mpi", "", "rounds"});
  }
  return t;
}

}  // namespace collbench::testing
