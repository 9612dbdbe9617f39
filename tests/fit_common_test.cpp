// collbench-fit's library, what every step stands on: NNLS against brute
// force, the relative-error fit, the cost terms of a model, quantiles, and
// the reader of CSVs (measurements.cpp: validation, aggregation, the link
// matrix).
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "collbench/collectives/collective.h"
#include "collbench/models/fit.h"
#include "collbench/models/least_squares.h"
#include "fit_test_support.h"

namespace collbench {
namespace {

using testing::links_table;
using testing::load_error;
using testing::small_table;

// Every subset of columns solved without constraints; the best feasible one
// is the NNLS optimum (the optimum is the unconstrained solution on its
// support), so this is an independent check of the active-set method.
Eigen::VectorXd brute_force_nnls(const Eigen::MatrixXd& a, const Eigen::VectorXd& b) {
  const int n = static_cast<int>(a.cols());
  Eigen::VectorXd best = Eigen::VectorXd::Zero(n);
  double best_residual = b.squaredNorm();
  for (int mask = 1; mask < (1 << n); ++mask) {
    std::vector<int> columns;
    for (int j = 0; j < n; ++j) {
      if (mask & (1 << j)) columns.push_back(j);
    }
    Eigen::MatrixXd sub(a.rows(), static_cast<Eigen::Index>(columns.size()));
    for (std::size_t k = 0; k < columns.size(); ++k) {
      sub.col(static_cast<Eigen::Index>(k)) = a.col(columns[k]);
    }
    const Eigen::VectorXd solution = sub.colPivHouseholderQr().solve(b);
    if ((solution.array() < 0).any()) continue;
    Eigen::VectorXd x = Eigen::VectorXd::Zero(n);
    for (std::size_t k = 0; k < columns.size(); ++k) {
      x(columns[k]) = solution(static_cast<Eigen::Index>(k));
    }
    const double residual = (a * x - b).squaredNorm();
    if (residual < best_residual) {
      best_residual = residual;
      best = x;
    }
  }
  return best;
}

TEST(Nnls, MatchesBruteForceOnRandomProblems) {
  std::mt19937_64 random(7);
  std::normal_distribution<double> normal(0.0, 1.0);
  int constrained = 0;
  for (int trial = 0; trial < 200; ++trial) {
    const int rows = 4 + trial % 7, cols = 1 + trial % 4;
    Eigen::MatrixXd a(rows, cols);
    Eigen::VectorXd b(rows);
    for (int i = 0; i < rows; ++i) {
      b(i) = normal(random);
      for (int j = 0; j < cols; ++j) a(i, j) = normal(random);
    }
    const Eigen::VectorXd x = nnls(a, b);
    const Eigen::VectorXd expected = brute_force_nnls(a, b);
    ASSERT_TRUE((x.array() >= 0).all()) << "trial " << trial;
    EXPECT_NEAR((a * x - b).squaredNorm(), (a * expected - b).squaredNorm(), 1e-9)
        << "trial " << trial;
    EXPECT_LT((x - expected).norm(), 1e-6) << "trial " << trial;
    constrained += (expected.array() == 0).any() ? 1 : 0;
  }
  // The trials must exercise the constraint, or this test proves nothing.
  EXPECT_GT(constrained, 50);
}

TEST(Nnls, RecoversANonNegativeExactSolution) {
  Eigen::MatrixXd a(5, 3);
  a << 1, 2, 0, 3, 1, 1, 0, 1, 4, 2, 2, 2, 1, 0, 5;
  const Eigen::Vector3d truth(0.5, 0.0, 2.0);
  const Eigen::VectorXd x = nnls(a, a * truth);
  EXPECT_NEAR(x(0), 0.5, 1e-12);
  EXPECT_NEAR(x(1), 0.0, 1e-12);
  EXPECT_NEAR(x(2), 2.0, 1e-12);
}

TEST(Nnls, RejectsMismatchedSizesAndNaN) {
  EXPECT_THROW(nnls(Eigen::MatrixXd::Ones(3, 2), Eigen::VectorXd::Ones(2)), std::invalid_argument);
  Eigen::VectorXd b = Eigen::VectorXd::Ones(3);
  b(1) = std::nan("");
  EXPECT_THROW(nnls(Eigen::MatrixXd::Ones(3, 2), b), std::invalid_argument);
}

TEST(FitQuality, HandComputedValues) {
  const std::vector<double> measured = {1.0, 10.0, 100.0};
  const std::vector<double> predicted = {1.1, 9.0, 100.0};
  const FitQuality q = fit_quality(measured, predicted);
  EXPECT_EQ(q.points, 3);
  EXPECT_NEAR(q.median_rel_err, 0.1, 1e-12);
  EXPECT_NEAR(q.max_rel_err, 0.1, 1e-12);
  // ln t = 0, ln 10, ln 100: total = 2·ln²10; residual = ln²1.1 + ln²0.9.
  const double ln10 = std::log(10.0);
  const double expected =
      1 - (std::pow(std::log(1.1), 2) + std::pow(std::log(0.9), 2)) / (2 * ln10 * ln10);
  EXPECT_NEAR(q.r2_log, expected, 1e-12);
}

TEST(FitRelative, WeightsEveryPointByItsRelativeError) {
  // t = 10 + n exactly for small n, but the largest point is 10% high. An
  // unweighted fit would bend the line to it; the relative fit keeps the
  // intercept, because 10% is one point's error whatever its size.
  Eigen::MatrixXd terms(5, 2);
  Eigen::VectorXd seconds(5);
  const double sizes[] = {1, 10, 100, 1000, 1e6};
  for (int i = 0; i < 5; ++i) {
    terms(i, 0) = 1;
    terms(i, 1) = sizes[i];
    seconds(i) = 10 + sizes[i];
  }
  seconds(4) *= 1.1;
  const RelativeFit fit = fit_relative(terms, seconds);
  EXPECT_NEAR(fit.coefficients(0), 10.0, 0.5);
  const Eigen::VectorXd plain = terms.colPivHouseholderQr().solve(seconds);
  EXPECT_GT(std::abs(plain(0) - 10.0), 20.0);  // what the weighting prevents
}

TEST(FitRelative, FixedPartIsAddedNotFitted) {
  Eigen::MatrixXd terms(4, 1);
  Eigen::VectorXd seconds(4), fixed(4);
  for (int i = 0; i < 4; ++i) {
    terms(i, 0) = i + 1;
    fixed(i) = 0.5 * (i + 1);
    seconds(i) = 2.0 * (i + 1) + fixed(i);
  }
  const RelativeFit fit = fit_relative(terms, seconds, fixed);
  EXPECT_NEAR(fit.coefficients(0), 2.0, 1e-12);
  EXPECT_NEAR(fit.quality.max_rel_err, 0.0, 1e-12);
}

TEST(WeightedRank, SeesProportionalColumns) {
  // ring: bytes = 2(p−1)/p·n and reduce_bytes = (p−1)/p·n at every point.
  Eigen::MatrixXd terms(6, 3);
  Eigen::VectorXd seconds = Eigen::VectorXd::Ones(6);
  int row = 0;
  for (int p : {2, 4, 8}) {
    for (double n : {1e3, 1e6}) {
      const CostTerms c = model_terms("allreduce", "ring", p, n);
      terms.row(row++) << c.messages, c.bytes, c.reduce_bytes;
    }
  }
  EXPECT_EQ(weighted_rank(terms, seconds), 2);
  terms(5, 2) *= 1.5;  // break the proportionality
  EXPECT_EQ(weighted_rank(terms, seconds), 3);
}

TEST(ModelTerms, MpiAndUnknownAlgorithmsUseTheLowerBound) {
  bool own = true;
  const CostTerms mpi = model_terms("allreduce", "mpi", 6, 600.0, &own);
  EXPECT_FALSE(own);
  EXPECT_DOUBLE_EQ(mpi.messages, 3);  // ⌈lg 6⌉
  EXPECT_DOUBLE_EQ(mpi.bytes, 2 * 5.0 / 6 * 600);
  EXPECT_DOUBLE_EQ(mpi.reduce_bytes, 5.0 / 6 * 600);
  model_terms("allreduce", "mpi_bare", 6, 600.0, &own);
  EXPECT_FALSE(own);
  const CostTerms ring = model_terms("allreduce", "ring", 6, 600.0, &own);
  EXPECT_TRUE(own);
  const CostTerms registry = find_collective("allreduce")->find_algorithm("ring")->cost(6, 600.0);
  EXPECT_EQ(ring.messages, registry.messages);
  EXPECT_EQ(ring.bytes, registry.bytes);
  EXPECT_EQ(ring.reduce_bytes, registry.reduce_bytes);
}

TEST(Quantile, LinearBetweenOrderStatistics) {
  EXPECT_DOUBLE_EQ(quantile({3, 1, 2}, 0.25), 1.5);
  EXPECT_DOUBLE_EQ(quantile({3, 1, 2}, 0.5), 2);
  EXPECT_DOUBLE_EQ(quantile({3, 1, 2}, 0.75), 2.5);
  EXPECT_DOUBLE_EQ(quantile({3, 1, 2}, 1), 3);
  EXPECT_DOUBLE_EQ(quantile({7}, 0.25), 7);
  EXPECT_THROW(quantile({}, 0.5), std::invalid_argument);
}

// ------------------------------------------------------ CSV validation

TEST(Measurements, MedianOverRepetitionsAndFiles) {
  CsvTable second = small_table();
  second.rows.resize(1);
  second.rows[0][10] = "11";
  const std::vector<NamedTable> tables = {{"a.csv", small_table()}, {"b.csv", second}};
  LoadSummary summary;
  const std::vector<Measurement> points = aggregate_measurements(tables, &summary);
  ASSERT_EQ(points.size(), 2u);
  const Measurement& allreduce = points[0];
  EXPECT_EQ(allreduce.family, "allreduce");
  EXPECT_EQ(allreduce.placement, "inter");     // from nodes = 4
  EXPECT_DOUBLE_EQ(allreduce.seconds, 50e-6);  // the "wrong" row is left out
  const Measurement& p2p = points[1];
  EXPECT_EQ(p2p.family, "p2p");
  EXPECT_EQ(p2p.samples, 4);
  EXPECT_DOUBLE_EQ(p2p.seconds, 11.5e-6);  // median of 10, 11, 12, 30
  // Type-7 quartiles: h = 3/4 and 9/4 between the sorted values.
  EXPECT_DOUBLE_EQ(p2p.q1_seconds, 10.75e-6);
  EXPECT_DOUBLE_EQ(p2p.q3_seconds, 16.5e-6);
  EXPECT_DOUBLE_EQ(allreduce.q1_seconds, 50e-6);  // one row: no spread
  EXPECT_DOUBLE_EQ(allreduce.q3_seconds, 50e-6);
  EXPECT_EQ(p2p.sources, (std::vector<std::string>{"a.csv", "b.csv"}));
  EXPECT_EQ(p2p.dtype, "");
  EXPECT_EQ(summary.rows_read, 7u);
  EXPECT_EQ(summary.rows_used, 5u);
  EXPECT_EQ(summary.ignored.size(), 2u);  // check=wrong and family=exchange
}

TEST(Measurements, ReduceOnEveryRankIsLoadedPerRankCountWithItsType) {
  CsvTable t = small_table();
  t.rows.push_back(
      {"local", "local", "", "reduce_all", "2", "f32", "sum", "4096", "", "1", "3", "ok"});
  t.rows.push_back(
      {"local", "local", "", "reduce_all", "4", "f32", "sum", "4096", "", "1", "5", "ok"});
  const std::vector<NamedTable> tables = {{"a.csv", t}};
  const std::vector<Measurement> points = aggregate_measurements(tables);
  std::vector<std::pair<int, double>> reduce_all;  // ranks, µs
  for (const Measurement& m : points) {
    if (m.algorithm == "reduce_all") reduce_all.emplace_back(m.ranks, std::round(m.seconds * 1e6));
  }
  EXPECT_EQ(reduce_all, (std::vector<std::pair<int, double>>{{2, 3}, {4, 5}}));
  t.rows.back()[5] = "";
  EXPECT_NE(load_error(t).find("dtype is empty"), std::string::npos) << load_error(t);
}

TEST(Measurements, UntimedRowsAreLeftOutNotErrors) {
  CsvTable t = small_table();
  t.rows[1][10] = "";  // the harness writes no statistics for a failed benchmark
  t.rows.push_back({"local", "local", "", "memcpy", "4", "", "", "4096", "", "1", "2", "skipped"});
  const std::vector<NamedTable> tables = {{"a.csv", t}};
  LoadSummary summary;
  const std::vector<Measurement> points = aggregate_measurements(tables, &summary);
  ASSERT_EQ(points.size(), 3u);
  EXPECT_EQ(points[1].algorithm, "memcpy");  // no dtype needed to copy bytes
  EXPECT_EQ(points[2].samples, 2);
  EXPECT_DOUBLE_EQ(points[2].seconds, 11e-6);
  EXPECT_NE(std::find(summary.ignored.begin(), summary.ignored.end(),
                      "median_us empty (benchmark not timed): 1 row"),
            summary.ignored.end());
}

TEST(Measurements, ErrorsNameTheFileAndWhatIsMissing) {
  CsvTable missing = small_table();
  missing.header[10] = "mean_us";
  EXPECT_EQ(load_error(missing).rfind("bad.csv: missing column median_us; collbench-fit needs", 0),
            0u)
      << load_error(missing);

  EXPECT_NE(load_error(CsvTable{}).find("bad.csv: empty file"), std::string::npos);

  CsvTable header_only = small_table();
  header_only.rows.clear();
  EXPECT_NE(load_error(header_only).find("bad.csv: no data rows"), std::string::npos);

  for (const char* bad : {"nan", "NaN", "inf", "12us", "-3", "0"}) {
    CsvTable t = small_table();
    t.rows[1][10] = bad;
    EXPECT_EQ(
        load_error(t),
        fmt::format("bad.csv: data row 2: median_us is '{}'; expected a finite number of µs > 0 "
                    "and <= 3.1536e+13",
                    bad));
  }
  CsvTable bad_bytes = small_table();
  bad_bytes.rows[3][7] = "1.5";
  EXPECT_NE(load_error(bad_bytes).find("data row 4: bytes is '1.5'"), std::string::npos);
  CsvTable bad_ranks = small_table();
  bad_ranks.rows[3][4] = "0";
  EXPECT_NE(load_error(bad_ranks).find("data row 4: ranks is '0'"), std::string::npos);
  CsvTable mixed_sync = small_table();
  mixed_sync.header.push_back("sync");
  for (auto& row : mixed_sync.rows) row.push_back("barrier");
  mixed_sync.rows[2].back() = "none";
  EXPECT_EQ(load_error(mixed_sync),
            "bad.csv: data row 3: sync is 'none' but bad.csv data row 1 has sync 'barrier'; fit "
            "one sync mode at a time");
  CsvTable bad_placement = small_table();
  bad_placement.rows[0][8] = "remote";
  EXPECT_NE(load_error(bad_placement).find("placement is 'remote'; expected intra or inter"),
            std::string::npos);
}

// The checks of scripts/collbench_csv.py, with its messages: every row,
// also those the fit leaves out (another family, a wrong result), and every
// column of results/README.md with a range, also those the fit does not use.
TEST(Measurements, EveryRowAndColumnIsCheckedAsTheScriptsCheckThem) {
  CsvTable exchange = small_table();
  exchange.rows[5][10] = "nan";  // family=exchange: not fitted
  EXPECT_EQ(load_error(exchange),
            "bad.csv: data row 6: median_us is 'nan'; expected a finite number of µs > 0 and <= "
            "3.1536e+13");
  CsvTable wrong = small_table();
  wrong.rows[4][4] = "four";  // check=wrong: not fitted
  EXPECT_EQ(
      load_error(wrong),
      "bad.csv: data row 5: ranks is 'four'; expected a whole number of ranks >= 1 and <= 1e+09");
  CsvTable busbw = small_table();
  busbw.header.push_back("busbw_GBps");
  for (auto& row : busbw.rows) row.push_back("1.5");
  busbw.rows[2].back() = "-1";
  EXPECT_EQ(load_error(busbw),
            "bad.csv: data row 3: busbw_GBps is '-1'; expected a finite number of GB/s >= 0");
  for (const char* text : {"+5", " 5", "1_000", "0x10"}) {
    CsvTable t = small_table();
    t.rows[0][7] = text;
    EXPECT_EQ(load_error(t), fmt::format("bad.csv: data row 1: bytes is '{}'; expected a whole "
                                         "number of bytes >= 0 and <= 1e+15",
                                         text));
  }
  // Beyond what collbench writes: 1e23 bytes once fitted β = inf.
  CsvTable huge = small_table();
  huge.rows[0][7] = "99999999999999999999999";
  EXPECT_EQ(load_error(huge),
            "bad.csv: data row 1: bytes is '99999999999999999999999'; expected a whole number of "
            "bytes >= 0 and <= 1e+15");
  huge.rows[0][7] = "1000000000000000";  // the bound itself is accepted
  EXPECT_EQ(load_error(huge), "no error");
  CsvTable slow = small_table();
  slow.rows[4][10] = "4e13";  // more than a year, in a row the fit leaves out
  EXPECT_EQ(load_error(slow),
            "bad.csv: data row 5: median_us is '4e13'; expected a finite number of µs > 0 and <= "
            "3.1536e+13");
  // No collbench row has 0 bytes; a fitted one is refused in a sentence.
  CsvTable empty_message = small_table();
  empty_message.rows[3][7] = "0";
  EXPECT_EQ(load_error(empty_message),
            "bad.csv: data row 4: bytes is 0; collbench never times an empty message (its "
            "smallest size is 1 byte), so the row is not a measurement to fit");
  // A file cut while its header was written: not "only the header".
  CsvTable torn = small_table();
  torn.rows.clear();
  torn.header_complete = false;
  EXPECT_EQ(load_error(torn),
            "bad.csv: the header line is cut short (no line break ends it, and no row follows): "
            "the file was torn while it was written; nothing to fit");
  CsvTable binary = small_table();
  binary.rows[3][1] = std::string("m\0i", 3);
  EXPECT_EQ(load_error(binary), "bad.csv: binary data (a NUL byte); expected a CSV text file");
  // A stray byte, a sequence cut short, a surrogate, an overlong '/'.
  const std::pair<const char*, unsigned> not_utf8[] = {
      {"\xff", 0xff}, {"caf\xc3", 0xc3}, {"\xed\xa0\x80", 0xed}, {"\xc0\xaf", 0xc0}};
  for (const auto& [bytes, first_bad] : not_utf8) {
    CsvTable latin = small_table();
    latin.rows[2][2] = bytes;
    EXPECT_EQ(load_error(latin),
              fmt::format("bad.csv: not UTF-8 text (byte 0x{:02x}); expected a CSV text file",
                          first_bad));
  }
  CsvTable utf8 = small_table();
  utf8.rows[2][2] = "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80";  // é € 😀
  EXPECT_EQ(load_error(utf8), "no error");
}

TEST(Fit, TooFewPointsNamesTheFileAndTheGroup) {
  CsvTable t = small_table();
  const std::vector<NamedTable> tables = {{"few.csv", t}};
  const std::vector<Measurement> points = aggregate_measurements(tables);
  try {
    fit_measurements(points);
    FAIL() << "expected an error";
  } catch (const std::runtime_error& e) {
    EXPECT_EQ(std::string(e.what()),
              "few.csv: too few points for the Hockney fit of the p2p ping-pong transport=mpi "
              "provider=(none) placement=inter: 1 distinct point (8 B); needs at least 3 distinct "
              "sizes: 2 parameters and at least one point to judge the fit");
  }
}

TEST(Fit, TooFewAllreducePointsNameTheAlgorithmGroup) {
  CsvTable t = small_table();
  t.rows.resize(3);  // the three ping-pongs at 8 B: still one size
  for (double n : {16.0, 64.0}) {
    t.rows.push_back({"p2p", "mpi", "", "pingpong", "2", "", "", fmt::format("{}", n), "inter", "2",
                      "12", "ok"});
  }
  t.rows.push_back({"allreduce", "mpi", "", "tree", "4", "f32", "sum", "64", "", "4", "50", "ok"});
  t.rows.push_back({"allreduce", "mpi", "", "tree", "4", "f32", "sum", "256", "", "4", "60", "ok"});
  const std::vector<NamedTable> tables = {{"two.csv", t}};
  try {
    fit_measurements(aggregate_measurements(tables));
    FAIL() << "expected an error";
  } catch (const std::runtime_error& e) {
    EXPECT_EQ(std::string(e.what()).rfind(
                  "two.csv: too few points for the top-down fit of allreduce algorithm=tree "
                  "transport=mpi provider=(none) placement=inter dtype=f32 op=sum: 2 distinct "
                  "points (64 B at 4 ranks, 256 B at 4 ranks); needs at least 3",
                  0),
              0u)
        << e.what();
  }
}

TEST(Measurements, LinkMatrixThatCannotGiveALineIsRefused) {
  CsvTable no_bytes = links_table({{20, 0.024}});
  no_bytes.header[7] = "size";
  EXPECT_EQ(load_error(no_bytes, "links.csv"),
            "links.csv: a collbench-linkmatrix links CSV without column bandwidth_bytes; "
            "collbench-fit needs src, dst, transport, provider, latency_bytes, latency_us, "
            "bandwidth_bytes, bandwidth_GBps");
  EXPECT_EQ(load_error(links_table({{20, 0.024}}, 8, 8), "links.csv"),
            "links.csv: data row 1: bandwidth_bytes 8 is not above latency_bytes 8; a Hockney "
            "line needs two sizes (collbench-linkmatrix --size above --latency-size)");
  EXPECT_EQ(load_error(links_table({{20, 0.024}, {20, 0}}), "links.csv"),
            "links.csv: data row 2: bandwidth_GBps is '0'; expected a finite number of GB/s > 0");
  EXPECT_EQ(load_error(links_table({}), "links.csv"),
            "links.csv: no links (only the header); nothing to fit");
  CsvTable self = links_table({{20, 0.024}, {30, 0.020}});
  self.rows[1][1] = "h0";
  EXPECT_EQ(load_error(self, "links.csv"),
            "links.csv: data row 2: src and dst are both 'h0'; a link joins two hosts "
            "(collbench-linkmatrix measures none from a host to itself)");
  CsvTable no_src = links_table({{20, 0.024}});
  no_src.rows[0][0] = "";
  EXPECT_EQ(load_error(no_src, "links.csv"),
            "links.csv: data row 1: src is empty; expected a host name");
  CsvTable no_dst = links_table({{20, 0.024}});
  no_dst.rows[0][1] = "";
  EXPECT_EQ(load_error(no_dst, "links.csv"),
            "links.csv: data row 1: dst is empty; expected a host name");
  // A repeated link would count twice toward the median link; the same link
  // over another transport is another point.
  CsvTable twice = links_table({{20, 0.024}, {30, 0.020}, {25, 0.012}});
  twice.rows[2][1] = "h1";
  EXPECT_EQ(load_error(twice, "links.csv"),
            "links.csv: data row 3: the link h0 -> h1 repeats data row 1; each directed link is "
            "measured once per file");
  twice.rows[2][9] = "ofi";
  EXPECT_EQ(load_error(twice, "links.csv"), "no error");
  // The reverse direction is another link.
  CsvTable reverse = links_table({{20, 0.024}, {30, 0.020}});
  reverse.rows[1][0] = "h1";  // h1 -> h0 beside h0 -> h1
  reverse.rows[1][1] = "h0";
  EXPECT_EQ(load_error(reverse, "links.csv"), "no error");
  // A transfer of 4 MiB that takes less than the latency: no line.
  const std::vector<NamedTable> fast = {{"links.csv", links_table({{20, 1000}})}};
  try {
    fit_measurements(aggregate_measurements(fast));
    ADD_FAILURE() << "a matrix whose large transfer is faster than its latency was fitted";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("a Hockney line needs a larger transfer that takes "
                                         "longer"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace collbench
