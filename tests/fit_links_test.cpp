// Steps 1 and 2 of collbench-fit (fit_links.cpp): the ping-pong's two lines
// at the protocol switch, the sendrecv's α and β at its rank count (all
// ranks busy) and where the bottom-up prediction takes them, and the link
// matrix's line.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "collbench/models/fit.h"
#include "fit_test_support.h"
#include "models_synthetic.h"

namespace collbench {
namespace {

using testing::expect_within;
using testing::find_fit;
using testing::find_fits;
using testing::links_table;
using testing::small_table;
using testing::synthetic_points;
using testing::synthetic_table;
using testing::SyntheticTruth;

// A ping-pong with a protocol switch (Open MPI's vader: eager copies below
// 4 KiB, a rendezvous with its own start-up cost from there), 2% noise.
// With `cache_bytes`, the rendezvous copies run at half that per-byte cost
// up to that size (cache-resident), as this machine's do up to ~256 KiB.
CsvTable switched_ping_pong(double step, double switch_bytes, double cache_bytes = 0) {
  CsvTable t = small_table();
  t.rows.clear();
  const double pattern[] = {1.02, 0.98, 1.01, 0.99, 1.0};
  int i = 0;
  for (double n = 8; n <= 64.0 * 1024 * 1024; n *= step) {
    const double cached = std::min(n, cache_bytes);
    const double us =
        n < switch_bytes ? 0.5 + n * 0.8e-3 : 4.5 + cached * 0.035e-3 + (n - cached) * 0.07e-3;
    t.rows.push_back({"p2p", "mpi", "", "pingpong", "2", "", "", fmt::format("{:.0f}", n), "intra",
                      "1", fmt::format("{:.6f}", us * pattern[i++ % 5]), "ok"});
  }
  return t;
}

TEST(PingPong, AlphaBelowTheProtocolSwitchBetaAboveIt) {
  for (const double step : {4.0, 8.0}) {
    SCOPED_TRACE(step);
    const std::vector<NamedTable> tables = {{"switch.csv", switched_ping_pong(step, 4096)}};
    const FitResults results = fit_measurements(aggregate_measurements(tables));
    const ModelFit* hockney = find_fit(results, "hockney");
    ASSERT_NE(hockney, nullptr);
    // The first size of the grid at or above 4 KiB.
    EXPECT_EQ(hockney->switch_bytes, step == 4 ? 8192.0 : 4096.0);
    expect_within(hockney->params.alpha, 0.5e-6, 0.05, "α, the eager line's");
    expect_within(hockney->params.beta, 0.07e-9, 0.05, "β, the rendezvous line's");
    // Each point on its own side's line.
    EXPECT_LT(hockney->quality.max_rel_err, 0.05);
    EXPECT_NE(hockney->note.find("protocol switch"), std::string::npos) << hockney->note;
  }
}

TEST(PingPong, BetaFollowsTheLargestSizesWhereTheRateBends) {
  // Above the switch the per-byte cost doubles past 256 KiB: β is the
  // large sizes' (a line by relative error would split the difference and
  // miss 64 MiB by 12%).
  const std::vector<NamedTable> tables = {{"bend.csv", switched_ping_pong(4, 4096, 262144)}};
  const std::vector<Measurement> points = aggregate_measurements(tables);
  const FitResults results = fit_measurements(points);
  const ModelFit* hockney = find_fit(results, "hockney");
  ASSERT_NE(hockney, nullptr);
  EXPECT_EQ(hockney->switch_bytes, 8192.0);
  expect_within(hockney->params.alpha, 0.5e-6, 0.05, "α");
  expect_within(hockney->params.beta, 0.07e-9, 0.05, "β");
  // The test: the line at the smallest and the largest size.
  for (const Measurement& m : points) {
    if (m.bytes != 8 && m.bytes != 64.0 * 1024 * 1024) continue;
    expect_within(hockney->params.alpha + m.bytes * hockney->params.beta, m.seconds, 0.05,
                  fmt::format("α + nβ at {} B", m.bytes));
  }
}

TEST(PingPong, OneLineWhereTooFewSizesToSplit) {
  CsvTable t = switched_ping_pong(8, 4096);
  t.rows.resize(5);
  const std::vector<NamedTable> tables = {{"five.csv", t}};
  const FitResults results = fit_measurements(aggregate_measurements(tables));
  const ModelFit* hockney = find_fit(results, "hockney");
  ASSERT_NE(hockney, nullptr);
  EXPECT_TRUE(std::isnan(hockney->switch_bytes));
  EXPECT_NE(hockney->note.find("one line through every size"), std::string::npos) << hockney->note;
}

// --------------------------------------------------- sendrecv (all ranks busy)

// Median |relative error| of the bottom-up predictions at `ranks` and at
// least 1 MiB, where β dominates every algorithm's time.
double bottom_up_error_at(const FitResults& results, int ranks) {
  std::vector<double> errors;
  for (const PointPrediction& p : results.predictions) {
    if (p.model == "bottom_up" && p.point.ranks == ranks && p.point.bytes >= (1 << 20)) {
      errors.push_back(std::abs(p.rel_err()));
    }
  }
  EXPECT_FALSE(errors.empty());
  std::sort(errors.begin(), errors.end());
  return errors.empty() ? 0 : errors[errors.size() / 2];
}

SyntheticTruth contended_at_four() {
  // β when all 4 ranks send at once is twice the ping-pong's; at 2 ranks no
  // sendrecv rows were measured.
  SyntheticTruth truth;
  truth.ranks = {2, 4};
  truth.sendrecv_ranks = {4};
  truth.sendrecv_beta = 2 * truth.beta;
  truth.algorithms = {"ring",         "tree",       "recursive_doubling",
                      "rabenseifner", "ps_central", "ps_sharded"};
  return truth;
}

TEST(Sendrecv, BottomUpUsesItsBetaAtItsRankCountAndThePingPongElsewhere) {
  const SyntheticTruth truth = contended_at_four();
  const FitResults results = fit_measurements(synthetic_points(truth));

  const ModelFit* ping_pong = find_fit(results, "hockney");
  ASSERT_NE(ping_pong, nullptr);
  expect_within(ping_pong->params.beta, truth.beta, 0.05, "ping-pong β");  // sendrecv not mixed in
  const std::vector<const ModelFit*> exchanges = find_fits(results, "hockney_sendrecv", "sendrecv");
  ASSERT_EQ(exchanges.size(), 1u);
  const ModelFit& exchange = *exchanges.front();
  EXPECT_EQ(exchange.family, "p2p");
  EXPECT_EQ(exchange.terms, "alpha+n*beta");
  EXPECT_EQ(exchange.ranks, std::vector<int>{4});
  expect_within(exchange.params.alpha, truth.sendrecv_alpha, 0.05, "sendrecv α");
  expect_within(exchange.params.beta, truth.sendrecv_beta, 0.05, "sendrecv β");

  for (const std::string& algorithm : truth.algorithms) {
    SCOPED_TRACE(algorithm);
    // α, β differ by rank count: one bottom-up fit per rank count.
    const std::vector<const ModelFit*> bottom = find_fits(results, "bottom_up", algorithm);
    ASSERT_EQ(bottom.size(), 2u);
    const ModelFit& two = *bottom[0];
    const ModelFit& four = *bottom[1];
    EXPECT_EQ(two.ranks, std::vector<int>{2});
    EXPECT_EQ(two.link_model, "hockney");
    EXPECT_EQ(two.params.beta, ping_pong->params.beta);
    EXPECT_EQ(two.note,
              "α, β from the inter p2p ping-pong fit (no sendrecv rows at 2 ranks), γ from the "
              "local reduce f32 sum");
    EXPECT_EQ(four.ranks, std::vector<int>{4});
    EXPECT_EQ(four.link_model, "hockney_sendrecv");
    EXPECT_EQ(four.params.alpha, exchange.params.alpha);
    EXPECT_EQ(four.params.beta, exchange.params.beta);
    EXPECT_EQ(four.note,
              "α, β from the inter sendrecv fit at 4 ranks, γ from the local reduce f32 sum");
    // The synthetic allreduce at 4 ranks runs at the sendrecv β: predicted.
    EXPECT_LT(two.quality.median_rel_err, 0.04);
    EXPECT_LT(four.quality.median_rel_err, 0.04);
  }
  // Every bottom-up point is its own rank count's model.
  for (const PointPrediction& p : results.predictions) {
    if (p.model != "bottom_up") continue;
    const ModelFit& source = p.point.ranks == 4 ? exchange : *ping_pong;
    const double expected =
        model_terms("allreduce", p.point.algorithm, p.point.ranks, p.point.bytes)
            .seconds(source.params.alpha, source.params.beta,
                     find_fit(results, "reduce_gamma")->params.gamma);
    EXPECT_NEAR(p.predicted_seconds, expected, 1e-12 * expected) << p.point.algorithm;
  }
  // The selection's predicted times at 4 ranks come from the same models.
  for (const Selection& s : results.selections) {
    for (const SelectionRow& row : s.rows) {
      ASSERT_FALSE(row.predicted.empty());
      const ModelFit& source = s.ranks == 4 ? exchange : *ping_pong;
      EXPECT_NEAR(row.predicted_seconds,
                  model_terms("allreduce", row.predicted, s.ranks, row.bytes)
                      .seconds(source.params.alpha, source.params.beta,
                               find_fit(results, "reduce_gamma")->params.gamma),
                  1e-12 * row.predicted_seconds);
    }
  }
  EXPECT_LT(bottom_up_error_at(results, 4), 0.05);
  EXPECT_LT(bottom_up_error_at(results, 2), 0.05);
}

TEST(Sendrecv, WithoutItTheContendedRankCountIsMispredicted) {
  // The same measurements without the sendrecv rows: the ping-pong β
  // predicts 4 ranks far too fast, and nothing else changes.
  CsvTable table = synthetic_table(contended_at_four());
  std::erase_if(table.rows, [](const auto& row) { return row[3] == "sendrecv"; });
  const std::vector<NamedTable> tables = {{"synthetic.csv", table}};
  const FitResults results = fit_measurements(aggregate_measurements(tables));
  EXPECT_EQ(find_fit(results, "hockney_sendrecv"), nullptr);
  EXPECT_GT(bottom_up_error_at(results, 4), 0.3);
  EXPECT_LT(bottom_up_error_at(results, 2), 0.05);
  for (const std::string& algorithm : contended_at_four().algorithms) {
    const std::vector<const ModelFit*> bottom = find_fits(results, "bottom_up", algorithm);
    ASSERT_EQ(bottom.size(), 1u) << algorithm;  // as before sendrecv existed
    EXPECT_EQ(bottom.front()->ranks, (std::vector<int>{2, 4}));
    EXPECT_EQ(bottom.front()->note, "α, β from the inter p2p fit, γ from the local reduce f32 sum");
  }
}

TEST(Sendrecv, PredictsWithoutPingPongAndSkipsRankCountsWithNeither) {
  SyntheticTruth truth;
  truth.ranks = {2, 3, 4};
  truth.sendrecv_ranks = {2, 4};
  truth.algorithms = {"ring"};
  CsvTable table = synthetic_table(truth);
  std::erase_if(table.rows, [](const auto& row) { return row[3] == "pingpong"; });
  const std::vector<NamedTable> tables = {{"no_pingpong.csv", table}};
  const FitResults results = fit_measurements(aggregate_measurements(tables));
  const std::vector<const ModelFit*> bottom = find_fits(results, "bottom_up", "ring");
  ASSERT_EQ(bottom.size(), 2u);
  EXPECT_EQ(bottom[0]->ranks, std::vector<int>{2});
  EXPECT_EQ(bottom[1]->ranks, std::vector<int>{4});
  EXPECT_NE(std::find(results.notes.begin(), results.notes.end(),
                      "bottom-up: skipped ring at 3 ranks on transport=mpi provider=(none): no p2p "
                      "sendrecv rows at 3 ranks and no ping-pong rows for that transport and "
                      "provider"),
            results.notes.end());
  // The 3-rank selection has no prediction; the others do.
  for (const Selection& s : results.selections) {
    EXPECT_EQ(s.predicted_string.empty(), s.ranks == 3) << s.ranks;
  }
}

TEST(Sendrecv, OutputsNameWhereAlphaAndBetaCameFrom) {
  const FitResults results = fit_measurements(synthetic_points(contended_at_four()));
  const std::string dir = ::testing::TempDir();
  write_models_csv(dir + "/models_sendrecv.csv", results);
  const CsvTable models = read_csv_file(dir + "/models_sendrecv.csv");
  const auto field = [&](const std::vector<std::string>& row, const char* column) {
    return row[static_cast<std::size_t>(models.column(column))];
  };
  std::map<std::string, std::vector<std::string>> ranks_of_model;  // ring only, and p2p
  for (const auto& row : models.rows) {
    if (field(row, "algorithm") == "ring" || field(row, "family") == "p2p") {
      ranks_of_model[field(row, "model")].push_back(field(row, "ranks"));
    }
  }
  EXPECT_EQ(ranks_of_model["hockney"], std::vector<std::string>{"2"});
  EXPECT_EQ(ranks_of_model["hockney_sendrecv"], std::vector<std::string>{"4"});
  EXPECT_EQ(ranks_of_model["bottom_up"], (std::vector<std::string>{"2", "4"}));
  EXPECT_EQ(ranks_of_model["top_down"], std::vector<std::string>{"2;4"});
  const std::string report = format_report(results, LoadSummary{}, false);
  EXPECT_NE(report.find("Sendrecv chain, Hockney"), std::string::npos) << report;
  EXPECT_NE(report.find("bottom-up α, β from the sendrecv fit at ranks 4, from the ping-pong at "
                        "ranks 2 (no sendrecv rows)"),
            std::string::npos)
      << report;
  const std::string brief = format_brief(results);
  EXPECT_EQ(brief.rfind("p2p mpi inter: alpha ", 0), 0u) << brief;
  EXPECT_NE(brief.find("\nsendrecv mpi inter ranks=4: alpha "), std::string::npos) << brief;
}

TEST(TwoLevel, LinkMatrixIsTheLineThroughItsMedianLink) {
  const double n = 4 << 20;
  // Three links; the median latency is 25 µs, the median bandwidth 0.020 GB/s
  // (each from a different link: the median of each point, not of one link).
  const std::vector<NamedTable> tables = {
      {"links.csv", links_table({{20, 0.024}, {30, 0.020}, {25, 0.012}})}};
  const std::vector<Measurement> points = aggregate_measurements(tables);
  ASSERT_EQ(points.size(), 2u);
  for (const Measurement& m : points) {
    EXPECT_EQ(m.family, "p2p");
    EXPECT_EQ(m.algorithm, "link_matrix");
    EXPECT_EQ(m.placement, "inter");
    EXPECT_EQ(m.ranks, 2);
    EXPECT_EQ(m.samples, 3);
  }
  const FitResults results = fit_measurements(points);
  const ModelFit* matrix = find_fit(results, "hockney_link_matrix");
  ASSERT_NE(matrix, nullptr);
  const double beta = (n / 0.020e9 - 25e-6) / (n - 8);
  EXPECT_NEAR(matrix->params.beta, beta, 1e-9 * beta);
  EXPECT_NEAR(matrix->params.alpha, 25e-6 - 8 * beta, 1e-9 * 25e-6);
  EXPECT_EQ(matrix->placement, "inter");
  EXPECT_NE(matrix->note.find("median of 3 directed links"), std::string::npos) << matrix->note;
}

}  // namespace
}  // namespace collbench
