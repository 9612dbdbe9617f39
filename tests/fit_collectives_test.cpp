// Steps 3 and 4 of collbench-fit (fit_collectives.cpp): recovery of known
// α, β, γ from synthetic measurements with 3% noise, the bottom-up
// prediction by size, and over two levels (several nodes of several ranks).
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "collbench/collectives/collective.h"
#include "collbench/models/fit.h"
#include "fit_test_support.h"
#include "models_synthetic.h"

namespace collbench {
namespace {

using testing::expect_within;
using testing::find_fit;
using testing::find_fits;
using testing::links_table;
using testing::synthetic_points;
using testing::synthetic_table;
using testing::SyntheticTruth;

TEST(SyntheticRecovery, EveryParameterWithinFivePercentAtThreePercentNoise) {
  const SyntheticTruth truth;
  ASSERT_DOUBLE_EQ(truth.noise, 0.03);
  const FitResults results = fit_measurements(synthetic_points(truth));

  const ModelFit* hockney = find_fit(results, "hockney");
  ASSERT_NE(hockney, nullptr);
  expect_within(hockney->params.alpha, truth.alpha, 0.05, "hockney α");
  expect_within(hockney->params.beta, truth.beta, 0.05, "hockney β");
  EXPECT_GT(hockney->quality.r2_log, 0.99);

  const ModelFit* gamma = find_fit(results, "reduce_gamma");
  ASSERT_NE(gamma, nullptr);
  expect_within(gamma->params.gamma, truth.gamma, 0.05, "local γ");

  const ModelFit* copy = find_fit(results, "memcpy");
  ASSERT_NE(copy, nullptr);
  // The ceiling is the best point, so noise can only push it up (≤ ~3σ).
  expect_within(1 / copy->params.beta, truth.copy_bandwidth, 0.1, "memcpy ceiling");

  for (const std::string& algorithm : truth.algorithms) {
    SCOPED_TRACE(algorithm);
    const ModelFit* top = find_fit(results, "top_down", algorithm);
    ASSERT_NE(top, nullptr);
    expect_within(top->params.alpha, truth.alpha, 0.05, "top-down α");
    expect_within(top->params.beta, truth.beta, 0.05, "top-down β");
    expect_within(top->params.gamma, truth.gamma, 0.05, "top-down γ");
    EXPECT_EQ(top->terms, algorithm == "mpi" ? "lower_bound" : "own");
    // 3% Gaussian noise has median |error| 2%.
    EXPECT_LT(top->quality.median_rel_err, 0.04);
    EXPECT_GT(top->quality.r2_log, 0.99);
    const ModelFit* bottom = find_fit(results, "bottom_up", algorithm);
    if (algorithm == "mpi") {
      EXPECT_EQ(bottom, nullptr);  // no cost model of its own to predict from
    } else {
      ASSERT_NE(bottom, nullptr);
      EXPECT_LT(bottom->quality.median_rel_err, 0.04);
      EXPECT_LT(bottom->quality.max_rel_err, 0.2);
    }
  }
  // ring's bytes and reduce_bytes are proportional: its γ cannot be its own.
  EXPECT_EQ(find_fit(results, "top_down", "ring")->gamma_source, "local");
}

TEST(SyntheticRecovery, GammaIsFittedWhereThePointsSeparateIt) {
  // Without noise, recursive doubling's fold steps at non-powers of two
  // change the ratio of reduce_bytes to bytes, so γ is identifiable.
  SyntheticTruth truth;
  truth.noise = 0;
  truth.algorithms = {"recursive_doubling"};
  const FitResults results = fit_measurements(synthetic_points(truth));
  const ModelFit* top = find_fit(results, "top_down", "recursive_doubling");
  ASSERT_NE(top, nullptr);
  EXPECT_EQ(top->gamma_source, "fitted");
  expect_within(top->params.gamma, truth.gamma, 1e-4, "fitted γ");
  expect_within(top->params.beta, truth.beta, 1e-4, "fitted β");
}

// Noise-free ring rows of `truth` without the local reduce rows that give
// the fitter its γ.
CsvTable ring_table_without_local_rows(SyntheticTruth& truth) {
  truth.noise = 0;
  truth.algorithms = {"ring"};
  CsvTable table = synthetic_table(truth);
  std::erase_if(table.rows, [](const auto& row) { return row[0] == "local"; });
  return table;
}

TEST(SyntheticRecovery, GammaAbsorbedIntoBetaWithoutLocalRows) {
  SyntheticTruth truth;
  const CsvTable table = ring_table_without_local_rows(truth);
  const std::vector<NamedTable> tables = {{"no_local.csv", table}};
  const FitResults results = fit_measurements(aggregate_measurements(tables));
  const ModelFit* top = find_fit(results, "top_down", "ring");
  ASSERT_NE(top, nullptr);
  EXPECT_EQ(top->gamma_source, "absorbed");
  // ring: 2(p−1)/p·n·β + (p−1)/p·n·γ = 2(p−1)/p·n·(β + γ/2).
  expect_within(top->params.beta, truth.beta + truth.gamma / 2, 1e-4, "β + γ/2");
  EXPECT_EQ(find_fit(results, "bottom_up", "ring"), nullptr);
}

TEST(SyntheticRecovery, AllgatherNeedsNoGammaNorLocalRows) {
  // allgather reduces nothing: without local rows it still gets its
  // bottom-up prediction and a top-down fit of α and β, with no γ.
  SyntheticTruth truth;
  CsvTable table = ring_table_without_local_rows(truth);
  const auto column = [&](std::string_view name) {
    return static_cast<std::size_t>(table.column(name));
  };
  const std::size_t rows = table.rows.size();
  for (std::size_t r = 0; r < rows; ++r) {
    std::vector<std::string> row = table.rows[r];
    if (row[column("family")] != "allreduce") continue;
    const int p = std::stoi(row[column("ranks")]);
    const double n = std::stod(row[column("bytes")]);
    row[column("family")] = "allgather";
    row[column("op")] = "";
    row[column("median_us")] = fmt::format(
        "{:.6f}", model_terms("allgather", "ring", p, n).seconds(truth.alpha, truth.beta, 0) * 1e6);
    table.rows.push_back(row);
  }
  const std::vector<NamedTable> tables = {{"allgather.csv", table}};
  const FitResults results = fit_measurements(aggregate_measurements(tables));
  const ModelFit* bottom_up = nullptr;
  const ModelFit* top_down = nullptr;
  for (const ModelFit& f : results.fits) {
    if (f.family != "allgather") continue;
    if (f.model == "bottom_up") bottom_up = &f;
    if (f.model == "top_down") top_down = &f;
  }
  ASSERT_NE(bottom_up, nullptr) << "no bottom-up prediction for allgather without local rows";
  EXPECT_EQ(bottom_up->gamma_source, "none");
  EXPECT_LT(bottom_up->quality.median_rel_err, 1e-6);
  ASSERT_NE(top_down, nullptr);
  EXPECT_EQ(top_down->gamma_source, "none");
  expect_within(top_down->params.beta, truth.beta, 1e-4, "allgather β");
  expect_within(top_down->params.alpha, truth.alpha, 1e-4, "allgather α");
}

TEST(SyntheticRecovery, AlltoallFitsEveryAlgorithmAndSelectsByCrossover) {
  // alltoall rows of every algorithm (mpi at the lower bound), no local
  // rows: each algorithm's α and β come back top-down, every hand-written
  // one has its bottom-up prediction, and the predicted selection string
  // switches from bruck (⌈lg p⌉ messages) to pairwise (each byte once) at
  // their models' crossover.
  SyntheticTruth truth;
  CsvTable table = ring_table_without_local_rows(truth);
  std::erase_if(table.rows, [](const auto& row) { return row[0] == "allreduce"; });
  const auto column = [&](std::string_view name) {
    return static_cast<std::size_t>(table.column(name));
  };
  const std::vector<std::string> pingpong = table.rows.front();
  const CollectiveInfo& alltoall = *find_collective("alltoall");
  for (const AlgorithmInfo& algorithm : alltoall.algorithms) {
    if (algorithm.forced_library_algorithm) continue;  // `mpi` again for a fit
    for (const int p : truth.ranks) {
      for (const double n : testing::default_sizes()) {
        std::vector<std::string> row = pingpong;
        row[column("family")] = "alltoall";
        row[column("algorithm")] = std::string(algorithm.name);
        row[column("ranks")] = std::to_string(p);
        row[column("nodes")] = std::to_string(p);
        row[column("op")] = "";
        row[column("peer")] = "";
        row[column("placement")] = "";
        row[column("bytes")] = fmt::format("{:.0f}", n);
        row[column("count")] = fmt::format("{:.0f}", n / 4);
        const CostTerms terms = model_terms("alltoall", std::string(algorithm.name), p, n);
        row[column("median_us")] =
            fmt::format("{:.6f}", terms.seconds(truth.alpha, truth.beta, 0) * 1e6);
        table.rows.push_back(row);
      }
    }
  }
  const std::vector<NamedTable> tables = {{"alltoall.csv", table}};
  // No tie tolerance: exact times.
  FitOptions exact;
  exact.tie_tolerance = 0;
  const FitResults results = fit_measurements(aggregate_measurements(tables), exact);
  for (const AlgorithmInfo& algorithm : alltoall.algorithms) {
    if (algorithm.forced_library_algorithm) continue;
    SCOPED_TRACE(algorithm.name);
    const ModelFit* top_down = nullptr;
    const ModelFit* bottom_up = nullptr;
    for (const ModelFit& f : results.fits) {
      if (f.family != "alltoall" || f.algorithm != algorithm.name) continue;
      if (f.model == "bottom_up") bottom_up = &f;
      if (f.model == "top_down") top_down = &f;
    }
    ASSERT_NE(top_down, nullptr);
    EXPECT_EQ(top_down->gamma_source, "none");
    expect_within(top_down->params.alpha, truth.alpha, 1e-4, "alltoall α");
    expect_within(top_down->params.beta, truth.beta, 1e-4, "alltoall β");
    if (algorithm.name == kMpiLibraryAlgorithm) {
      EXPECT_EQ(bottom_up, nullptr);
    } else {
      ASSERT_NE(bottom_up, nullptr);
      EXPECT_LT(bottom_up->quality.median_rel_err, 1e-6);
    }
  }
  int selections = 0;
  for (const Selection& selection : results.selections) {
    if (selection.collective != "alltoall" || selection.ranks != 8) continue;
    ++selections;
    // mpi, timed at the bound no algorithm meets, is the baseline, not a
    // candidate: the measured choice is the models' crossover at measured
    // sizes, and mpi is faster than it at every size.
    EXPECT_EQ(selection.measured_string, "bruck:0-131072;pairwise:131073-max");
    for (const SelectionRow& row : selection.rows) EXPECT_EQ(row.mpi_verdict, "faster");
    // At p = 8, bruck (3α + 1.5nβ) against pairwise (7α + 0.875nβ; linear
    // ties and comes later): they cross at n = 4α/(0.625β) = 160000 B.
    EXPECT_EQ(selection.predicted_string, "bruck:0-159999;pairwise:160000-max");
  }
  EXPECT_EQ(selections, 1);
}

// A machine whose copy and reduce rates drop past 1 MiB (cache-resident
// against memory-bound), as shared memory does: sendrecv and reduce times
// are piecewise linear in the size, which no single Hockney line follows.
double knee_sendrecv_seconds(double m) {
  return 2e-6 + (m <= (1 << 20) ? m / 10e9 : (1 << 20) / 10e9 + (m - (1 << 20)) / 4e9);
}
double knee_reduce_seconds(double m) {
  return 0.1e-6 + (m <= (1 << 20) ? m / 40e9 : (1 << 20) / 40e9 + (m - (1 << 20)) / 12e9);
}

Measurement measured_point(const std::string& family, const std::string& algorithm, int ranks,
                           double bytes, double seconds) {
  Measurement m;
  m.family = family;
  m.transport = family == "local" ? "" : "mpi";
  m.placement = family == "local" ? "" : "intra";
  m.dtype = family == "p2p" ? "" : "f32";
  m.op = family == "p2p" ? "" : "sum";
  m.algorithm = algorithm;
  m.ranks = ranks;
  m.bytes = bytes;
  m.seconds = seconds;
  m.samples = 1;
  m.sources = {"knee.csv"};
  return m;
}

TEST(BottomUpBySize, PricesEachStepAtItsMessageSizeAndEachByteAtTheWorkingSet) {
  constexpr int kRanks = 4;
  std::vector<Measurement> points;
  for (int k = 12; k <= 26; ++k) {  // 4 KiB .. 64 MiB
    const double m = std::ldexp(1.0, k);
    points.push_back(measured_point("p2p", "sendrecv", kRanks, m, knee_sendrecv_seconds(m)));
    points.push_back(measured_point("local", "reduce", 1, m, knee_reduce_seconds(m)));
  }
  points.push_back(measured_point("p2p", "pingpong", 2, 8, 1e-6));
  points.push_back(measured_point("p2p", "pingpong", 2, 1 << 20, 1e-6 + (1 << 20) / 10e9));
  points.push_back(measured_point("p2p", "pingpong", 2, 1 << 26, 1e-6 + (1 << 26) / 10e9));
  // Ring at 4 ranks: 6 messages of n/4 and 3·n/4 bytes reduced in chunks of
  // n/4, timed exactly as the model prices them where n/4 and n were
  // measured: each byte at the rate at n (the working set, at most the
  // largest measured 64 MiB) where that is slower than at n/4, which it is
  // once n passes the 1 MiB knee.
  const auto ring_truth = [](double n) {
    const CostTerms c = model_terms("allreduce", "ring", kRanks, n);
    const double m = n / kRanks;
    const double w = std::min(n, std::ldexp(1.0, 26));
    return c.messages * std::max(knee_sendrecv_seconds(m), m * knee_sendrecv_seconds(w) / w) +
           c.reduce_bytes * std::max(knee_reduce_seconds(m) / m, knee_reduce_seconds(w) / w);
  };
  // Pricing at n/4 alone, as before the working set was counted: too fast
  // by more than 15% at n = 4 MiB (the model must tell the two apart).
  const auto message_size_only = [](double n) {
    const CostTerms c = model_terms("allreduce", "ring", kRanks, n);
    const double m = n / kRanks;
    return c.messages * knee_sendrecv_seconds(m) + c.reduce_bytes * knee_reduce_seconds(m) / m;
  };
  ASSERT_LT(message_size_only(4 << 20), 0.85 * ring_truth(4 << 20));
  ASSERT_EQ(message_size_only(256 << 10), ring_truth(256 << 10));  // below the knee: the same
  for (int k = 16; k <= 28; ++k) {                                 // n/4 from 16 KiB to 64 MiB
    const double n = std::ldexp(1.0, k);
    points.push_back(measured_point("allreduce", "ring", kRanks, n, ring_truth(n)));
  }
  // n/4 = 768 KiB and 1.5 MiB, between measured sizes: interpolated.
  points.push_back(measured_point("allreduce", "ring", kRanks, 3 << 20, ring_truth(3 << 20)));
  points.push_back(measured_point("allreduce", "ring", kRanks, 6 << 20, ring_truth(6 << 20)));
  // n/4 = 2 KiB, below the smallest sendrecv size: left out.
  points.push_back(measured_point("allreduce", "ring", kRanks, 8192, ring_truth(8192)));

  const FitResults results = fit_measurements(points);
  const std::vector<const ModelFit*> by_size = find_fits(results, "bottom_up_by_size", "ring");
  ASSERT_EQ(by_size.size(), 1u);
  EXPECT_EQ(by_size.front()->ranks, std::vector<int>{kRanks});
  EXPECT_EQ(by_size.front()->quality.points, 15);
  EXPECT_EQ(by_size.front()->link_model, "hockney_sendrecv");
  int exact = 0, interpolated = 0;
  for (const PointPrediction& p : results.predictions) {
    if (p.model != "bottom_up_by_size") continue;
    EXPECT_NE(p.point.bytes, 8192) << "outside the measured sizes, yet predicted";
    if (std::has_single_bit(static_cast<std::uint64_t>(p.point.bytes))) {
      EXPECT_NEAR(p.predicted_seconds, p.point.seconds, 1e-9 * p.point.seconds) << p.point.bytes;
      ++exact;
    } else {
      // Log-log interpolation of a piecewise linear curve: close, not exact;
      // least close across the knee (n/4 = 1.5 MiB lies between 1 and 2 MiB).
      EXPECT_LT(std::abs(p.rel_err()), p.point.bytes == (3 << 20) ? 0.03 : 0.10) << p.point.bytes;
      EXPECT_GT(std::abs(p.rel_err()), 1e-6) << p.point.bytes << ": not interpolated";
      ++interpolated;
    }
  }
  EXPECT_EQ(exact, 13);
  EXPECT_EQ(interpolated, 2);
  EXPECT_NE(std::find(results.notes.begin(), results.notes.end(),
                      "bottom-up by size: 1 of 16 ring points at 4 ranks left out: their mean "
                      "message size is outside the measured sendrecv (4096..67108864 B) or "
                      "reduce sizes"),
            results.notes.end());
  // The one-line Hockney bottom-up of the same points misses the knee: this
  // data tells the two apart.
  const ModelFit* line = find_fit(results, "bottom_up", "ring");
  ASSERT_NE(line, nullptr);
  EXPECT_GT(line->quality.max_rel_err, 0.15);
}

// Two ranks on one node reducing at once share its caches and memory
// bandwidth: past 4 MiB each takes 1.5x rank 0's time alone.
double knee_reduce_all_seconds(double m) {
  return knee_reduce_seconds(m) * (m > (4 << 20) ? 1.5 : 1.0);
}

TEST(BottomUpBySize, PricesReductionsOnEveryRankWithEveryRankReducing) {
  constexpr int kRanks = 2;
  const auto add_inputs = [](std::vector<Measurement>& points, bool with_reduce_all) {
    for (int k = 12; k <= 26; ++k) {  // 4 KiB .. 64 MiB
      const double m = std::ldexp(1.0, k);
      points.push_back(measured_point("p2p", "sendrecv", kRanks, m, knee_sendrecv_seconds(m)));
      points.push_back(measured_point("local", "reduce", kRanks, m, knee_reduce_seconds(m)));
      if (with_reduce_all) {
        points.push_back(
            measured_point("local", "reduce_all", kRanks, m, knee_reduce_all_seconds(m)));
      }
    }
    points.push_back(measured_point("p2p", "pingpong", kRanks, 8, 1e-6));
    points.push_back(measured_point("p2p", "pingpong", kRanks, 1 << 20, 1e-6 + (1 << 20) / 10e9));
    points.push_back(measured_point("p2p", "pingpong", kRanks, 1 << 26, 1e-6 + (1 << 26) / 10e9));
  };
  // Recursive doubling reduces on both ranks at once, the tree on its root
  // alone; at p = 2 each moves and reduces whole vectors (m = n).
  const auto truth = [](const std::string& algorithm, double n) {
    const CostTerms c = model_terms("allreduce", algorithm, kRanks, n);
    const double m = c.bytes / c.messages;
    const double reduce =
        algorithm == "recursive_doubling" ? knee_reduce_all_seconds(m) : knee_reduce_seconds(m);
    return c.messages * knee_sendrecv_seconds(m) + c.reduce_bytes * reduce / m;
  };
  const auto predictions = [&](bool with_reduce_all) {
    std::vector<Measurement> points;
    add_inputs(points, with_reduce_all);
    for (const std::string algorithm : {"recursive_doubling", "tree"}) {
      for (int k = 20; k <= 26; ++k) {  // 1 .. 64 MiB
        const double n = std::ldexp(1.0, k);
        points.push_back(measured_point("allreduce", algorithm, kRanks, n, truth(algorithm, n)));
      }
    }
    return fit_measurements(points);
  };

  const FitResults results = predictions(true);
  int checked = 0;
  for (const PointPrediction& p : results.predictions) {
    if (p.model != "bottom_up_by_size") continue;
    EXPECT_NEAR(p.predicted_seconds, p.point.seconds, 1e-9 * p.point.seconds)
        << p.point.algorithm << " " << p.point.bytes;
    ++checked;
  }
  EXPECT_EQ(checked, 14);
  const ModelFit* doubling = find_fit(results, "bottom_up_by_size", "recursive_doubling");
  const ModelFit* tree = find_fit(results, "bottom_up_by_size", "tree");
  ASSERT_NE(doubling, nullptr);
  ASSERT_NE(tree, nullptr);
  EXPECT_NE(doubling->note.find("local reduce_all (every rank at once, 2 ranks)"),
            std::string::npos)
      << doubling->note;
  EXPECT_NE(tree->note.find("local reduce (rank 0 alone)"), std::string::npos) << tree->note;

  // Without reduce_all rows recursive doubling is priced with rank 0 alone:
  // more than 10% fast at 16 MiB, where the reductions are a third of it.
  const FitResults alone = predictions(false);
  bool seen = false;
  for (const PointPrediction& p : alone.predictions) {
    if (p.model != "bottom_up_by_size" || p.point.algorithm != "recursive_doubling" ||
        p.point.bytes != (16 << 20)) {
      continue;
    }
    EXPECT_LT(p.predicted_seconds, 0.9 * p.point.seconds);
    seen = true;
  }
  EXPECT_TRUE(seen);
}

Measurement point(std::string family, std::string placement, std::string algorithm, int ranks,
                  double bytes, double seconds, std::string dtype = "", std::string op = "") {
  Measurement m;
  m.family = std::move(family);
  m.transport = family == "local" ? "local" : "mpi";
  m.placement = std::move(placement);
  m.dtype = std::move(dtype);
  m.op = std::move(op);
  m.algorithm = std::move(algorithm);
  m.ranks = ranks;
  m.bytes = bytes;
  m.seconds = m.q1_seconds = m.q3_seconds = seconds;
  m.samples = 1;
  m.sources = {"synthetic.csv"};
  return m;
}

TEST(TwoLevel, PlacementNamesItsLayoutAndNothingElse) {
  EXPECT_EQ(layout_placement(2, 4, "node"), "2x4:node");
  const std::optional<Layout> layout = placement_layout("3x2:slot");
  ASSERT_TRUE(layout.has_value());
  EXPECT_EQ(layout->nodes, 3);
  EXPECT_EQ(layout->per_node, 2);
  EXPECT_EQ(layout->map_by, MapBy::slot);
  EXPECT_EQ(placement_layout("2x2:node")->map_by, MapBy::node);
  for (const char* other : {"inter", "intra", "", "2x2:other", "2x2:unknown", "2x2:slotx",
                            "0x2:slot", "2x:slot", "2x2slot"}) {
    EXPECT_FALSE(placement_layout(other).has_value()) << other;
  }
}

TEST(TwoLevel, CollectiveRowsOnSeveralNodesOfSeveralRanksCarryTheirLayout) {
  CsvTable t;
  t.header = {"family", "transport", "provider", "algorithm",      "ranks",  "dtype",    "op",
              "bytes",  "placement", "nodes",    "ranks_per_node", "map_by", "median_us"};
  t.rows = {
      {"allreduce", "mpi", "", "ring", "4", "f32", "sum", "64", "", "2", "2", "node", "50"},
      {"allreduce", "mpi", "", "ring", "4", "f32", "sum", "64", "", "2", "2", "slot", "40"},
      {"allreduce", "mpi", "", "ring", "4", "f32", "sum", "64", "", "4", "1", "slot", "30"},
      {"allreduce", "mpi", "", "ring", "4", "f32", "sum", "64", "", "1", "4", "slot", "20"},
  };
  const std::vector<NamedTable> tables = {{"layouts.csv", t}};
  std::map<std::string, double> seconds;
  for (const Measurement& m : aggregate_measurements(tables)) {
    seconds[m.placement] = std::round(m.seconds * 1e6);
  }
  EXPECT_EQ(seconds, (std::map<std::string, double>{
                         {"2x2:node", 50}, {"2x2:slot", 40}, {"inter", 30}, {"intra", 20}}));
}

TEST(TwoLevel, PricesEachLevelWithItsOwnPingPong) {
  // Exact Hockney ping-pongs inside a node and between nodes, an exact
  // reduce, and allreduce points made from placed_cost with those links:
  // the two-level prediction must give them back, for both placements, and
  // the one-level bottom-up must not claim them.
  const TwoLevelLinks links{2e-6, 1.0 / 5e9, 60e-6, 1.0 / 24e6};
  const double gamma = 1.0 / 3e9, t0 = 1e-6;
  std::vector<Measurement> measurements;
  for (double bytes = 8; bytes <= (16 << 20); bytes *= 4) {
    measurements.push_back(
        point("p2p", "intra", "pingpong", 2, bytes, links.intra_alpha + bytes * links.intra_beta));
    measurements.push_back(
        point("p2p", "inter", "pingpong", 2, bytes, links.inter_alpha + bytes * links.inter_beta));
    measurements.push_back(
        point("local", "", "reduce", 1, bytes, t0 + bytes * gamma, "f32", "sum"));
  }
  const std::vector<std::string> algorithms = {"ring", "tree", "rabenseifner", "hierarchical",
                                               "hierarchical_tree"};
  for (const Layout& layout : {Layout{2, 2, MapBy::slot}, Layout{2, 2, MapBy::node}}) {
    for (const std::string& algorithm : algorithms) {
      const AlgorithmInfo& info = *find_collective("allreduce")->find_algorithm(algorithm);
      for (double bytes = 4096; bytes <= (16 << 20); bytes *= 4) {
        measurements.push_back(point(
            "allreduce", layout_placement(layout.nodes, layout.per_node, to_string(layout.map_by)),
            algorithm, 4, bytes, info.placed_cost(layout, bytes).seconds(links, gamma), "f32",
            "sum"));
      }
    }
  }
  const FitResults results = fit_measurements(measurements);
  int predicted = 0;
  for (const PointPrediction& p : results.predictions) {
    if (p.point.family != "allreduce") continue;
    EXPECT_NE(p.model, "bottom_up") << p.point.algorithm << " " << p.point.placement;
    if (p.model != "bottom_up_two_level") continue;
    ++predicted;
    EXPECT_NEAR(p.rel_err(), 0, 1e-3)
        << p.point.algorithm << " " << p.point.placement << " " << p.point.bytes;
  }
  EXPECT_EQ(predicted, 2 * 5 * 7);
  int fits = 0;
  for (const ModelFit& fit : results.fits) {
    if (fit.model != "bottom_up_two_level") continue;
    ++fits;
    EXPECT_NEAR(fit.params.beta, links.inter_beta, 1e-3 * links.inter_beta);
    EXPECT_NE(fit.note.find("2 nodes of 2 ranks by "), std::string::npos) << fit.note;
  }
  EXPECT_EQ(fits, 2 * 5);
}

TEST(TwoLevel, WithoutAnIntraPingPongItSaysWhatIsMissing) {
  std::vector<Measurement> measurements;
  for (double bytes = 8; bytes <= (1 << 20); bytes *= 4) {
    measurements.push_back(point("p2p", "inter", "pingpong", 2, bytes, 1e-5 + bytes * 4e-8));
    measurements.push_back(
        point("local", "", "reduce", 1, bytes, 1e-6 + bytes * 3e-10, "f32", "sum"));
    measurements.push_back(
        point("allreduce", "2x2:slot", "ring", 4, bytes, 2e-5 + bytes * 6e-8, "f32", "sum"));
  }
  const FitResults results = fit_measurements(measurements);
  const bool said = std::any_of(results.notes.begin(), results.notes.end(), [](const auto& note) {
    return note.find("bottom-up two-level: skipped allreduce ring on 2x2:slot") == 0 &&
           note.find("both intra and inter") != std::string::npos;
  });
  EXPECT_TRUE(said);
  for (const PointPrediction& p : results.predictions) {
    EXPECT_NE(p.model, "bottom_up_two_level");
  }
}

// The matrix row of a link that is exactly t(n) = α + n·β.
std::pair<double, double> exact_link(double alpha, double beta, double bandwidth_bytes) {
  return {(alpha + 8 * beta) * 1e6, bandwidth_bytes / (alpha + bandwidth_bytes * beta) * 1e-9};
}

TEST(TwoLevel, PricesTheNetworkWithTheLinkMatrixWhereThereIsOne) {
  // The allreduce points follow the link matrix's links; the inter
  // ping-pong says the network is twice as slow. The two-level prediction
  // must take the matrix and give the points back.
  const TwoLevelLinks links{2e-6, 1.0 / 5e9, 60e-6, 1.0 / 24e6};
  const double gamma = 1.0 / 3e9, t0 = 1e-6, n = 4 << 20;
  const std::pair<double, double> link = exact_link(links.inter_alpha, links.inter_beta, n);
  const std::vector<NamedTable> tables = {{"links.csv", links_table({link, link})}};
  std::vector<Measurement> measurements = aggregate_measurements(tables);
  for (double bytes = 8; bytes <= (16 << 20); bytes *= 4) {
    measurements.push_back(
        point("p2p", "intra", "pingpong", 2, bytes, links.intra_alpha + bytes * links.intra_beta));
    measurements.push_back(point("p2p", "inter", "pingpong", 2, bytes,
                                 2 * (links.inter_alpha + bytes * links.inter_beta)));
    measurements.push_back(
        point("local", "", "reduce", 1, bytes, t0 + bytes * gamma, "f32", "sum"));
  }
  const Layout layout{2, 2, MapBy::node};
  for (const std::string algorithm : {"ring", "hierarchical"}) {
    const AlgorithmInfo& info = *find_collective("allreduce")->find_algorithm(algorithm);
    for (double bytes = 4096; bytes <= (16 << 20); bytes *= 4) {
      measurements.push_back(point("allreduce", "2x2:node", algorithm, 4, bytes,
                                   info.placed_cost(layout, bytes).seconds(links, gamma), "f32",
                                   "sum"));
    }
  }
  const FitResults results = fit_measurements(measurements);
  int predicted = 0;
  for (const PointPrediction& p : results.predictions) {
    if (p.model != "bottom_up_two_level") continue;
    ++predicted;
    EXPECT_NEAR(p.rel_err(), 0, 1e-3) << p.point.algorithm << " " << p.point.bytes;
  }
  EXPECT_EQ(predicted, 2 * 7);
  for (const ModelFit& fit : results.fits) {
    if (fit.model != "bottom_up_two_level") continue;
    EXPECT_EQ(fit.link_model, "hockney_link_matrix");
    EXPECT_NE(fit.note.find("(link matrix)"), std::string::npos) << fit.note;
  }
}

}  // namespace
}  // namespace collbench
