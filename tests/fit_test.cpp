// collbench-fit's library: NNLS against brute force, the relative-error fit,
// CSV validation and aggregation, and recovery of known α, β, γ and of the
// known fastest algorithm from synthetic measurements with 3% noise.
#include "collbench/models/fit.h"
#include "collbench/models/least_squares.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <map>
#include <random>
#include <set>

#include "collbench/collectives/collective.h"
#include "models_synthetic.h"

namespace collbench {
namespace {

using testing::synthetic_table;
using testing::SyntheticTruth;

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

TEST(SelectionString, OneCclForm) {
  const std::vector<std::pair<double, std::string>> winners = {{1024, "recursive_doubling"},
                                                               {8192, "recursive_doubling"},
                                                               {65536, "rabenseifner"},
                                                               {1048576, "rabenseifner"},
                                                               {4194304, "ring"},
                                                               {16777216, "ring"}};
  EXPECT_EQ(selection_string(winners),
            "recursive_doubling:0-8192;rabenseifner:8193-1048576;ring:1048577-max");
  EXPECT_EQ(selection_string(std::vector<std::pair<double, std::string>>{{64, "tree"}}),
            "tree:0-max");
  EXPECT_EQ(selection_string(std::vector<std::pair<double, std::string>>{}), "");
}

TEST(SelectionString, CrossoverFoundExactlyByBisection) {
  // a(n) = 10 + n, b(n) = 100 + n/2: equal at n = 180 bytes (45 f32
  // elements, a tie, which goes to the first candidate); b wins from 46
  // elements = 184 bytes, so a's range ends at 183.
  const std::vector<std::string> candidates = {"a", "b"};
  const auto seconds = [](const std::string& name, double n) -> std::optional<double> {
    return name == "a" ? 10 + n : 100 + n / 2;
  };
  EXPECT_EQ(crossover_selection_string(candidates, 1 << 20, 4, seconds), "a:0-183;b:184-max");
  // Where b has no model, a is chosen whatever its time.
  const auto partial = [](const std::string& name, double n) -> std::optional<double> {
    if (name == "b" && n > 4000) return std::nullopt;
    return name == "a" ? 10 + n : 100 + n / 2;
  };
  EXPECT_EQ(crossover_selection_string(candidates, 1 << 20, 4, partial),
            "a:0-183;b:184-4003;a:4004-max");
}

TEST(Quantile, LinearBetweenOrderStatistics) {
  EXPECT_DOUBLE_EQ(quantile({3, 1, 2}, 0.25), 1.5);
  EXPECT_DOUBLE_EQ(quantile({3, 1, 2}, 0.5), 2);
  EXPECT_DOUBLE_EQ(quantile({3, 1, 2}, 0.75), 2.5);
  EXPECT_DOUBLE_EQ(quantile({3, 1, 2}, 1), 3);
  EXPECT_DOUBLE_EQ(quantile({7}, 0.25), 7);
  EXPECT_THROW(quantile({}, 0.5), std::invalid_argument);
}

// ------------------------------------------------- statistical selection

TimeSpread spread(double median, double half_iqr, int repetitions = 5) {
  return {median, median - half_iqr, median + half_iqr, repetitions};
}

std::vector<std::string> chosen_names(const std::vector<Choice>& choices) {
  std::vector<std::string> names;
  for (const Choice& c : choices) names.push_back(c.chosen);
  return names;
}

TEST(ChooseSignificant, TiesAreTheAlgorithmsNoOneBeats) {
  // d has the lowest median. f and a overlap it and no one's q3 lies below
  // their q1: ties. e overlaps d too, but f's q3 (9.7) lies below e's q1
  // (9.8): f is faster beyond noise, so e is no tie although it overlaps
  // the choice. c lies wholly above a; g was never measured.
  const std::vector<std::string> candidates = {"a", "c", "d", "e", "f", "g"};
  TimesBySize times;
  times[8] = {{"a", spread(10, 1)},
              {"c", spread(12, 0.5)},
              {"d", spread(9.5, 0.4)},
              {"e", spread(10.2, 0.4)},
              {"f", spread(9.6, 0.1)}};
  const std::vector<Choice> choices = choose_significant(candidates, times);
  EXPECT_EQ(choices[0].chosen, "d");
  EXPECT_EQ(choices[0].ties, (std::vector<std::string>{"a", "f"}));
  EXPECT_TRUE(choices[0].same.empty());
  // A tolerance of 10%: f's q3 raised by it (10.67) is no longer below e's
  // q1, a tie now; c stays beaten (d's 9.9 raised: 10.89 < 11.5). a's
  // median is within 10% of d's (10 <= 10.45) and a comes first: chosen.
  const std::vector<Choice> tolerant = choose_significant(candidates, times, {}, 0.1);
  EXPECT_EQ(tolerant[0].chosen, "a");
  EXPECT_EQ(tolerant[0].ties, (std::vector<std::string>{"d", "e", "f"}));
}

TEST(ChooseSignificant, EquivalentAlgorithmsAreOneCandidateNamedByTheFirst) {
  // x and y are one exchange (same_exchanges), z another. y has the lowest
  // median, x is within noise of it: the choice is x (the exchange's first
  // contender), y is `same`, not a tie; z, within noise, is. At 16 B y
  // beats x beyond noise: x is no contender and the exchange is named y.
  const std::vector<std::string> candidates = {"x", "y", "z"};
  const std::vector<std::size_t> exchange = {0, 0, 2};
  TimesBySize times;
  times[8] = {{"x", spread(10, 1)}, {"y", spread(9.5, 1)}, {"z", spread(10.5, 1)}};
  times[16] = {{"x", spread(20, 1)}, {"y", spread(9.5, 1)}, {"z", spread(10.5, 1)}};
  const std::vector<Choice> choices = choose_significant(candidates, times, exchange);
  EXPECT_EQ(chosen_names(choices), (std::vector<std::string>{"x", "y"}));
  EXPECT_EQ(choices[0].same, std::vector<std::string>{"y"});
  EXPECT_EQ(choices[0].ties, std::vector<std::string>{"z"});
  EXPECT_TRUE(choices[1].same.empty());
  EXPECT_EQ(choices[1].ties, std::vector<std::string>{"z"});
  EXPECT_EQ(choices[1].previous, "x");
  // Without the exchanges y is chosen at 8 B and x is a tie.
  const std::vector<Choice> apart = choose_significant(candidates, times);
  EXPECT_EQ(apart[0].chosen, "y");
  EXPECT_EQ(apart[0].ties, (std::vector<std::string>{"x", "z"}));
}

TEST(ChooseSignificant, TheChoiceDoesNotDependOnTheSizeBefore) {
  // a and b take turns at the lowest median within noise of each other; c
  // and d are one exchange and take turns too. Each size's choice is the
  // one it gets alone: the lowest median's exchange, named by its first
  // contender (c wherever it is one, whichever of c and d is faster).
  const std::vector<std::string> candidates = {"a", "b", "c", "d"};
  const std::vector<std::size_t> exchange = {0, 1, 2, 2};
  TimesBySize times;
  for (int i = 0; i < 8; ++i) {
    const double wiggle = i % 2 == 0 ? 0.2 : -0.2;
    times[8 << i] = {{"a", spread(10, 1)},
                     {"b", spread(10 + wiggle, 1.1)},
                     {"c", spread(i < 4 ? 20 : 5, 0.5)},
                     {"d", spread((i < 4 ? 20 : 5) - wiggle, 0.5)}};
  }
  const std::vector<Choice> choices = choose_significant(candidates, times, exchange);
  EXPECT_EQ(chosen_names(choices),
            (std::vector<std::string>{"a", "b", "a", "b", "c", "c", "c", "c"}));
  for (const Choice& c : choices) {
    TimesBySize alone;
    alone[c.bytes] = times.at(c.bytes);
    EXPECT_EQ(choose_significant(candidates, alone, exchange)[0].chosen, c.chosen) << c.bytes;
    EXPECT_EQ(c.same, c.chosen == "c" ? std::vector<std::string>{"d"} : std::vector<std::string>{})
        << c.bytes;
  }
  EXPECT_EQ(choices[0].ties, std::vector<std::string>{"b"});
  EXPECT_EQ(choices[1].ties, std::vector<std::string>{"a"});
  EXPECT_TRUE(choices[4].ties.empty());
}

TEST(ChooseSignificant, WithinTheToleranceOfTheLowestMedianTheOrderDecides) {
  // b has the lowest median at both sizes, a is within noise of it; at 8 B
  // a's median is within 5% of b's (10.3 <= 10.5) and a comes first; at
  // 16 B it is not (10.6): b.
  const std::vector<std::string> candidates = {"a", "b"};
  TimesBySize times;
  times[8] = {{"a", spread(10.3, 1)}, {"b", spread(10, 1)}};
  times[16] = {{"a", spread(10.6, 1)}, {"b", spread(10, 1)}};
  const std::vector<Choice> choices = choose_significant(candidates, times, {}, 0.05);
  EXPECT_EQ(chosen_names(choices), (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(choices[0].ties, std::vector<std::string>{"b"});
  EXPECT_EQ(choices[1].ties, std::vector<std::string>{"a"});
  EXPECT_EQ(chosen_names(choose_significant(candidates, times)),
            (std::vector<std::string>{"b", "b"}));  // no tolerance: the lowest median
}

TEST(ChooseSignificant, ARealCrossoverIsFoundAtItsSize) {
  // b's time falls through a's at 64 B, its IQR far below a's from there.
  const std::vector<std::string> candidates = {"a", "b"};
  TimesBySize times;
  for (int i = 0; i < 8; ++i) {
    const double bytes = 8 << i;
    times[bytes] = {{"a", spread(10, 0.5)}, {"b", spread(i < 3 ? 20 : 5, 0.5)}};
  }
  const std::vector<Choice> choices = choose_significant(candidates, times);
  EXPECT_EQ(chosen_names(choices),
            (std::vector<std::string>{"a", "a", "a", "b", "b", "b", "b", "b"}));
  ASSERT_TRUE(choices[3].changed());
  EXPECT_EQ(choices[3].previous, "a");
  EXPECT_DOUBLE_EQ(choices[3].margin, 10.0 / 5.0);  // previous median / new median
  EXPECT_DOUBLE_EQ(choices[3].gap, 9.5 / 5.5);      // previous q1 / new q3
  for (std::size_t i = 0; i < choices.size(); ++i) EXPECT_EQ(choices[i].changed(), i == 3) << i;
}

TEST(ChooseSignificant, ACrossoverWithinNoiseIsATieAtItsSize) {
  // At 64 B b is faster by less than the spread: chosen, with a as a tie;
  // at 128 B beyond it.
  const std::vector<std::string> candidates = {"a", "b"};
  TimesBySize times;
  const std::vector<double> b_median = {20, 15, 12, 9.6, 7, 5};
  for (std::size_t i = 0; i < b_median.size(); ++i) {
    times[8 << i] = {{"a", spread(10, 0.5)}, {"b", spread(b_median[i], 0.5)}};
  }
  const std::vector<Choice> choices = choose_significant(candidates, times);
  EXPECT_EQ(chosen_names(choices), (std::vector<std::string>{"a", "a", "a", "b", "b", "b"}));
  EXPECT_EQ(choices[3].ties, std::vector<std::string>{"a"});
  EXPECT_TRUE(choices[4].ties.empty());
}

TEST(ChooseSignificant, AnUnmeasuredAlgorithmIsSkipped) {
  // a cannot run at 32 B (e.g. a power-of-two algorithm): the lowest median
  // there is chosen, with no margin to report; at 64 B a is back.
  const std::vector<std::string> candidates = {"a", "b", "c"};
  TimesBySize times;
  times[8] = {{"a", spread(10, 1)}, {"b", spread(12, 1)}, {"c", spread(13, 1)}};
  times[32] = {{"b", spread(12, 1)}, {"c", spread(11.5, 1)}};
  times[64] = {{"a", spread(10, 1)}, {"b", spread(12, 1)}, {"c", spread(11.5, 1)}};
  const std::vector<Choice> choices = choose_significant(candidates, times);
  EXPECT_EQ(chosen_names(choices), (std::vector<std::string>{"a", "c", "a"}));
  EXPECT_EQ(choices[1].previous, "a");
  EXPECT_TRUE(std::isnan(choices[1].margin));
  EXPECT_TRUE(std::isnan(choices[1].gap));
  EXPECT_EQ(choices[0].ties, std::vector<std::string>{"b"});  // c: a's q3 11 < its q1 12
}

TEST(ChooseSignificant, OneRepetitionChoosesTheLowestMedian) {
  const std::vector<std::string> candidates = {"a", "b"};
  TimesBySize times;
  times[8] = {{"a", spread(10, 0, 1)}, {"b", spread(10.1, 0, 1)}};
  times[16] = {{"a", spread(10, 0, 1)}, {"b", spread(9.9, 0, 1)}};
  times[32] = {{"a", spread(10, 0, 1)}, {"b", spread(10, 0, 1)}};  // equal: the first
  EXPECT_EQ(chosen_names(choose_significant(candidates, times)),
            (std::vector<std::string>{"a", "b", "a"}));
}

// The one rule, over random spreads and exchanges: the chosen exchange is
// the first with a median within the tolerance of the lowest; nothing
// beats the choice beyond noise; the ties
// are exactly the other exchanges' algorithms no one beats, `same` its own
// exchange's after it; and a size's choice is the one it gets alone.
TEST(ChooseSignificant, TheChoiceIsTheFirstNearTheLowestMedianAndTiesAreTheUnbeaten) {
  const std::vector<std::string> candidates = {"a", "b", "c", "d"};
  std::mt19937 random(43);
  std::uniform_real_distribution<double> median(5, 15), half(0, 3), chance(0, 1);
  for (int trial = 0; trial < 200; ++trial) {
    const double tolerance = trial % 2 == 0 ? 0 : 0.05;
    const std::vector<std::size_t> exchange = {0, trial % 3 == 0 ? 0u : 1u, 2, 2};
    TimesBySize times;
    for (int i = 0; i < 12; ++i) {
      for (const std::string& name : candidates) {
        if (chance(random) < 0.1) continue;  // not measured at this size
        times[8 << i][name] = spread(median(random), half(random));
      }
    }
    const std::vector<Choice> choices = choose_significant(candidates, times, exchange, tolerance);
    for (const Choice& c : choices) {
      const auto& here = times.at(c.bytes);
      if (here.empty()) continue;
      const auto index = [&](const std::string& name) {
        return static_cast<std::size_t>(std::find(candidates.begin(), candidates.end(), name) -
                                        candidates.begin());
      };
      const auto beaten = [&](const TimeSpread& x) {
        return std::any_of(here.begin(), here.end(), [&](const auto& other) {
          return other.second.q3 * (1 + tolerance) < x.q1;
        });
      };
      double lowest = here.begin()->second.median;
      for (const auto& [name, time] : here) lowest = std::min(lowest, time.median);
      // The first candidate within noise and within the tolerance of the
      // lowest median gives the exchange.
      std::string first_near;
      for (const std::string& name : candidates) {
        const auto it = here.find(name);
        if (it != here.end() && !beaten(it->second) &&
            it->second.median <= lowest * (1 + tolerance)) {
          first_near = name;
          break;
        }
      }
      EXPECT_EQ(exchange[index(c.chosen)], exchange[index(first_near)]) << c.bytes;
      EXPECT_FALSE(beaten(here.at(c.chosen))) << c.chosen << " at " << c.bytes;
      for (const auto& [name, time] : here) {
        if (name == c.chosen) continue;
        const bool tie = std::count(c.ties.begin(), c.ties.end(), name) > 0;
        const bool same = std::count(c.same.begin(), c.same.end(), name) > 0;
        const bool one_exchange = exchange[index(name)] == exchange[index(c.chosen)];
        EXPECT_EQ(tie, !one_exchange && !beaten(time)) << name << " at " << c.bytes;
        EXPECT_EQ(same, one_exchange && !beaten(time)) << name << " at " << c.bytes;
        if (one_exchange && !beaten(time)) {
          EXPECT_LT(index(c.chosen), index(name));
        }
      }
      TimesBySize alone;
      alone[c.bytes] = here;
      EXPECT_EQ(choose_significant(candidates, alone, exchange, tolerance)[0].chosen, c.chosen);
    }
  }
}

TEST(SameExchanges, EqualCostTermsAtEverySizeOfTheRankCount) {
  // At 2 ranks recursive doubling and swing_latency exchange the whole
  // vector once, ring, Rabenseifner and swing_bandwidth each half of it
  // twice; at 4 ranks the ring takes 6 steps and Rabenseifner 4. The
  // library's algorithms have no cost terms of their own: never merged.
  const std::vector<std::string> names = {
      "ring", "recursive_doubling", "rabenseifner", "swing_latency", "swing_bandwidth", "ompi_ring",
      "mpi"};
  const std::vector<double> sizes = {8, 4096, 1 << 22};
  EXPECT_EQ(same_exchanges("allreduce", "intra", 2, names, sizes),
            (std::vector<std::size_t>{0, 1, 0, 1, 0, 5, 6}));
  const std::vector<std::size_t> four = same_exchanges("allreduce", "intra", 4, names, sizes);
  EXPECT_NE(four[2], 0u);  // Rabenseifner is no ring at 4 ranks
  EXPECT_EQ(four[3], 1u);  // on a flat network swing_latency is recursive doubling
  EXPECT_EQ(four[6], 6u);
}

TEST(SameExchanges, EveryMeasuredSizeMustAgree) {
  // At 0 bytes every allreduce of two ranks that sends twice costs 2α:
  // the ring and the tree agree there and nowhere else.
  const std::vector<std::string> names = {"ring", "tree"};
  const CostTerms ring = model_terms("allreduce", "ring", 2, 0);
  const CostTerms tree = model_terms("allreduce", "tree", 2, 0);
  ASSERT_EQ(ring.messages, tree.messages);
  ASSERT_EQ(ring.bytes + ring.reduce_bytes, 0);
  ASSERT_EQ(tree.bytes + tree.reduce_bytes, 0);
  EXPECT_EQ(same_exchanges("allreduce", "intra", 2, names, std::vector<double>{0}),
            (std::vector<std::size_t>{0, 0}));
  EXPECT_EQ(same_exchanges("allreduce", "intra", 2, names, std::vector<double>{0, 4096}),
            (std::vector<std::size_t>{0, 1}));
}

// Three repetitions per point at 2 ranks, `base` giving each algorithm's
// median at size index i; the repetitions lie 1 µs either side of it.
CsvTable three_repetitions(const std::vector<std::string>& algorithms,
                           double (*base)(const std::string&, int)) {
  CsvTable t;
  t.header = {"family", "transport", "provider",  "algorithm", "ranks",     "dtype",
              "op",     "bytes",     "placement", "nodes",     "median_us", "check"};
  for (int i = 0; i < 6; ++i) {
    for (const double offset : {-1.0, 0.0, 1.0}) {
      for (const std::string& algorithm : algorithms) {
        t.rows.push_back({"allreduce", "mpi", "", algorithm, "2", "f32", "sum",
                          fmt::format("{}", 1024 << i), "", "1",
                          fmt::format("{}", base(algorithm, i) + offset), "ok"});
      }
    }
  }
  return t;
}

TEST(Selection, RepetitionsWithinNoiseAreTiesAndTheCsvSaysWhy) {
  // ring and tree (different exchanges at 2 ranks) take turns at the lowest
  // median by less than their spread and 1.5%; mpi is far slower. Within
  // the default tolerance (5%) ring, first in table order, is the choice
  // at every size: one range, tree its tie.
  const auto base = [](const std::string& algorithm, int i) {
    return algorithm == "mpi" ? 40.0 : 20 + (algorithm == "tree") * (i % 2 ? -0.3 : 0.3);
  };
  const std::vector<NamedTable> tables = {
      {"noise.csv", three_repetitions({"ring", "tree", "mpi"}, base)}};
  const FitResults results = fit_measurements(aggregate_measurements(tables));
  ASSERT_EQ(results.selections.size(), 1u);
  const Selection& s = results.selections.front();
  const std::string path = ::testing::TempDir() + "/selections_test.csv";
  write_selections_csv(path, results);
  const CsvTable csv = read_csv_file(path);
  EXPECT_EQ(csv.header, selections_csv_columns());
  ASSERT_EQ(csv.rows.size(), s.rows.size());
  const auto at = [&](std::size_t row, std::string_view column) {
    return csv.rows[row][static_cast<std::size_t>(csv.column(column))];
  };
  EXPECT_EQ(s.measured_string, "ring:0-max");
  for (std::size_t r = 0; r < csv.rows.size(); ++r) {
    EXPECT_EQ(at(r, "chosen"), "ring");
    EXPECT_EQ(at(r, "lowest_median"), r % 2 ? "tree" : "ring");
    EXPECT_EQ(at(r, "boundary"), "0");
    EXPECT_EQ(at(r, "repetitions"), "3");
    EXPECT_EQ(at(r, "mpi_median_us"), "40");
    EXPECT_EQ(at(r, "ties"), "tree");
    EXPECT_EQ(at(r, "same"), "");
    EXPECT_DOUBLE_EQ(std::stod(at(r, "chosen_q3_us")) - std::stod(at(r, "chosen_q1_us")), 1.0);
  }
}

TEST(Selection, TheLibraryIsTheBaselineNotACandidate) {
  // mpi beats ring beyond noise at sizes 0 and 3, is within noise of it at
  // 1 and 4, and slower at 2 and 5; tree is beaten everywhere. ring is the
  // choice at every size, mpi never the choice nor a tie, and the CSV says
  // how mpi compares with the choice.
  const auto base = [](const std::string& algorithm, int i) {
    if (algorithm == "mpi") return i % 3 == 0 ? 10.0 : i % 3 == 1 ? 20.2 : 40.0;
    return algorithm == "ring" ? 20.0 : 30.0;
  };
  const std::vector<NamedTable> tables = {
      {"library.csv", three_repetitions({"ring", "tree", "mpi"}, base)}};
  const FitResults results = fit_measurements(aggregate_measurements(tables));
  ASSERT_EQ(results.selections.size(), 1u);
  const Selection& s = results.selections.front();
  EXPECT_EQ(s.candidates, (std::vector<std::string>{"ring", "tree"}));
  EXPECT_EQ(s.measured_string, "ring:0-max");
  const std::string path = ::testing::TempDir() + "/selections_library_test.csv";
  write_selections_csv(path, results);
  const CsvTable csv = read_csv_file(path);
  ASSERT_EQ(csv.rows.size(), 6u);
  const auto at = [&](std::size_t row, std::string_view column) {
    return csv.rows[row][static_cast<std::size_t>(csv.column(column))];
  };
  const char* verdicts[] = {"faster", "tie", "slower"};
  const char* ratios[] = {"0.5", "1.01", "2"};
  for (std::size_t r = 0; r < csv.rows.size(); ++r) {
    SCOPED_TRACE(r);
    EXPECT_EQ(at(r, "chosen"), "ring");
    EXPECT_EQ(at(r, "lowest_median"), "ring");
    EXPECT_EQ(at(r, "ties"), "");
    EXPECT_EQ(at(r, "mpi_verdict"), verdicts[r % 3]);
    EXPECT_EQ(at(r, "vs_mpi"), ratios[r % 3]);
  }
  const std::string report = format_report(results, {}, false);
  EXPECT_NE(report.find("mpi faster beyond noise at 2 of 6 sizes"), std::string::npos) << report;
}

TEST(Selection, NoSelectionFromTheLibraryAlone) {
  const auto base = [](const std::string&, int i) { return 10.0 + i; };
  const std::vector<NamedTable> tables = {{"mpi.csv", three_repetitions({"mpi"}, base)}};
  const FitResults results = fit_measurements(aggregate_measurements(tables));
  EXPECT_TRUE(results.selections.empty());
  ASSERT_FALSE(results.notes.empty());
  EXPECT_NE(results.notes.back().find("no selection for allreduce at 2 ranks"), std::string::npos)
      << results.notes.back();
}

TEST(Selection, TheSameExchangeIsOneChoiceUnderItsFirstName) {
  // At 2 ranks swing_latency is recursive doubling (same cost terms):
  // slightly faster by noise, it is named with it, not chosen nor a tie.
  const auto base = [](const std::string& algorithm, int i) {
    return algorithm == "swing_latency" ? 19.7 + 0.1 * i : 20.0 + 0.1 * i;
  };
  const std::vector<NamedTable> tables = {
      {"same.csv", three_repetitions({"recursive_doubling", "swing_latency"}, base)}};
  const FitResults results = fit_measurements(aggregate_measurements(tables));
  ASSERT_EQ(results.selections.size(), 1u);
  const Selection& s = results.selections.front();
  EXPECT_EQ(s.measured_string, "recursive_doubling:0-max");
  const std::string path = ::testing::TempDir() + "/selections_same_test.csv";
  write_selections_csv(path, results);
  const CsvTable csv = read_csv_file(path);
  ASSERT_EQ(csv.rows.size(), 6u);
  for (const auto& row : csv.rows) {
    EXPECT_EQ(row[static_cast<std::size_t>(csv.column("lowest_median"))], "swing_latency");
    EXPECT_EQ(row[static_cast<std::size_t>(csv.column("same"))], "swing_latency");
    EXPECT_EQ(row[static_cast<std::size_t>(csv.column("ties"))], "");
  }
}

// ------------------------------------------------------ CSV validation

CsvTable small_table() {
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

std::string load_error(const CsvTable& table, const std::string& name = "bad.csv") {
  const std::vector<NamedTable> tables = {{name, table}};
  try {
    aggregate_measurements(tables);
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "no error";
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

// ------------------------------------------------- synthetic recovery

const ModelFit* find_fit(const FitResults& results, const std::string& model,
                         const std::string& algorithm = "") {
  for (const ModelFit& f : results.fits) {
    if (f.model == model && (algorithm.empty() || f.algorithm == algorithm)) return &f;
  }
  return nullptr;
}

std::vector<Measurement> synthetic_points(const SyntheticTruth& truth) {
  const std::vector<NamedTable> tables = {{"synthetic.csv", synthetic_table(truth)}};
  return aggregate_measurements(tables);
}

void expect_within(double fitted, double truth, double tolerance, const std::string& what) {
  EXPECT_LE(std::abs(fitted - truth), tolerance * truth)
      << what << ": fitted " << fitted << ", truth " << truth;
}

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

// --------------------------------------------------- sendrecv (all ranks busy)

std::vector<const ModelFit*> find_fits(const FitResults& results, const std::string& model,
                                       const std::string& algorithm) {
  std::vector<const ModelFit*> found;
  for (const ModelFit& f : results.fits) {
    if (f.model == model && f.algorithm == algorithm) found.push_back(&f);
  }
  return found;
}

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

// True times of the candidates at one size; the winner is known when every
// algorithm that is not (within rounding) the fastest is 15% slower or more,
// far beyond what 3% noise can flip.
std::optional<std::set<std::string>> known_winners(const SyntheticTruth& truth, int ranks,
                                                   double bytes) {
  std::map<std::string, double> times;
  for (const std::string& a : truth.algorithms) {
    times[a] =
        model_terms("allreduce", a, ranks, bytes).seconds(truth.alpha, truth.beta, truth.gamma);
  }
  double best = 1e300;
  for (const auto& [a, t] : times) best = std::min(best, t);
  std::set<std::string> winners;
  for (const auto& [a, t] : times) {
    if (t <= best * (1 + 1e-9)) {
      winners.insert(a);
    } else if (t < best * 1.15) {
      return std::nullopt;
    }
  }
  return winners;
}

TEST(Selection, PicksTheKnownWinner) {
  SyntheticTruth truth;
  truth.algorithms = {"ring",         "tree",       "recursive_doubling",
                      "rabenseifner", "ps_central", "ps_sharded"};
  const FitResults results = fit_measurements(synthetic_points(truth));
  ASSERT_EQ(results.selections.size(), truth.ranks.size());
  int decisive = 0;
  for (const Selection& s : results.selections) {
    SCOPED_TRACE(fmt::format("ranks {}", s.ranks));
    for (const SelectionRow& row : s.rows) {
      const auto winners = known_winners(truth, s.ranks, row.bytes);
      if (!winners) continue;
      ++decisive;
      EXPECT_TRUE(winners->contains(row.measured)) << row.bytes << " measured " << row.measured;
      EXPECT_TRUE(winners->contains(row.predicted)) << row.bytes << " predicted " << row.predicted;
      EXPECT_TRUE(winners->contains(row.fitted)) << row.bytes << " fitted " << row.fitted;
    }
    // The bottom-up string names the same algorithms, in the same order, as
    // the string of the true parameters; crossovers move with the fit error.
    const auto exact = [&](const std::string& name, double bytes) -> std::optional<double> {
      return model_terms("allreduce", name, s.ranks, bytes)
          .seconds(truth.alpha, truth.beta, truth.gamma);
    };
    const std::string expected =
        crossover_selection_string(s.candidates, s.rows.back().bytes, 4, exact);
    const auto names = [](const std::string& selection) {
      std::vector<std::string> out;
      for (std::size_t start = 0; start < selection.size();) {
        const std::size_t colon = selection.find(':', start);
        out.push_back(selection.substr(start, colon - start));
        const std::size_t semicolon = selection.find(';', colon);
        start = semicolon == std::string::npos ? selection.size() : semicolon + 1;
      }
      return out;
    };
    EXPECT_EQ(names(s.predicted_string), names(expected))
        << s.predicted_string << " vs " << expected;
  }
  EXPECT_GT(decisive, 40);  // most sizes have a clear winner
  // At 2 ranks recursive doubling (1 message) wins small sizes and ring
  // (half the reduction) large ones; they cross at n = 2α/γ = 200 kB.
  const Selection& two = results.selections.front();
  ASSERT_EQ(two.ranks, 2);
  EXPECT_EQ(two.predicted_string.substr(0, two.predicted_string.find(';')).substr(0, 21),
            "recursive_doubling:0-");
  const double boundary =
      std::stod(two.predicted_string.substr(21, two.predicted_string.find(';') - 21));
  expect_within(boundary, 2 * truth.alpha / truth.gamma, 0.15, "2-rank crossover");
}

TEST(Output, ModelsAndPredictionsCsvAreComplete) {
  const SyntheticTruth truth;
  const FitResults results = fit_measurements(synthetic_points(truth));
  const std::string dir = ::testing::TempDir();
  write_models_csv(dir + "/models_test.csv", results);
  write_predictions_csv(dir + "/predictions_test.csv", results);
  const CsvTable models = read_csv_file(dir + "/models_test.csv");
  const CsvTable predictions = read_csv_file(dir + "/predictions_test.csv");
  EXPECT_EQ(models.header, models_csv_columns());
  EXPECT_EQ(models.rows.size(), results.fits.size());
  EXPECT_EQ(predictions.header, predictions_csv_columns());
  EXPECT_EQ(predictions.rows.size(), results.predictions.size());
  // The hockney row carries α in µs and the bandwidth in GB/s.
  for (const auto& row : models.rows) {
    if (row[0] != "hockney") continue;
    expect_within(std::stod(row[static_cast<std::size_t>(models.column("alpha_us"))]),
                  truth.alpha * 1e6, 0.05, "alpha_us");
    expect_within(std::stod(row[static_cast<std::size_t>(models.column("beta_GBps"))]),
                  1e-9 / truth.beta, 0.05, "beta_GBps");
  }
  // Sizes are written whole, so they read back exactly (1048576, not
  // 1.04858e+06): the point's bytes, and each fit's size range.
  const auto bytes_column = static_cast<std::size_t>(predictions.column("bytes"));
  for (std::size_t i = 0; i < predictions.rows.size(); ++i) {
    EXPECT_EQ(predictions.rows[i][bytes_column],
              std::to_string(static_cast<std::uint64_t>(results.predictions[i].point.bytes)));
  }
  const auto max_bytes_column = static_cast<std::size_t>(models.column("max_bytes"));
  for (std::size_t i = 0; i < models.rows.size(); ++i) {
    EXPECT_EQ(models.rows[i][max_bytes_column],
              std::to_string(static_cast<std::uint64_t>(results.fits[i].max_bytes)));
  }
  // Rows in registry order of the algorithms, the order (and so the colour)
  // the plots give them in every figure.
  std::vector<std::string> first_seen, registry_order;
  for (const PointPrediction& p : results.predictions) {
    if (find_collective("allreduce")->find_algorithm(p.point.algorithm) == nullptr) continue;
    if (std::find(first_seen.begin(), first_seen.end(), p.point.algorithm) == first_seen.end()) {
      first_seen.push_back(p.point.algorithm);
    }
  }
  for (const AlgorithmInfo& info : find_collective("allreduce")->algorithms) {
    if (std::find(first_seen.begin(), first_seen.end(), info.name) != first_seen.end()) {
      registry_order.emplace_back(info.name);
    }
  }
  EXPECT_GE(first_seen.size(), 3u);
  EXPECT_EQ(first_seen, registry_order);
  const std::string report = format_report(results, LoadSummary{}, false);
  EXPECT_NE(report.find("measured:  "), std::string::npos);
  EXPECT_NE(report.find("Point-to-point"), std::string::npos);
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

// A β fitted to 0 is a value: models.csv says 0, which collbench-predict
// refuses as "no bandwidth", not an empty field it would refuse as missing.
TEST(ModelsCsv, ABetaOfZeroIsWrittenAsZero) {
  FitResults results;
  ModelFit hockney;
  hockney.model = "hockney";
  hockney.params = {20e-6, 0, 0};
  ModelFit reduce;
  reduce.model = "reduce_gamma";
  reduce.gamma_source = "fitted";
  reduce.params = {1e-6, 0, 0.2e-9};
  results.fits = {hockney, reduce};
  const std::string path = ::testing::TempDir() + "/models_beta_zero.csv";
  write_models_csv(path, results);
  const CsvTable table = read_csv_file(path);
  const auto beta = static_cast<std::size_t>(table.column("beta_ns_per_byte"));
  ASSERT_EQ(table.rows.size(), 2u);
  EXPECT_EQ(table.rows[0][beta], "0");
  EXPECT_EQ(table.rows[1][beta], "");  // t0 + n·γ has no β
}

}  // namespace
}  // namespace collbench

namespace collbench {
namespace {

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

// A links CSV of collbench-linkmatrix with one row per (latency µs,
// bandwidth GB/s) of `links`, between hosts h0 and h<i+1>.
CsvTable links_table(const std::vector<std::pair<double, double>>& links, double latency_bytes = 8,
                     double bandwidth_bytes = 4 << 20) {
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

// The matrix row of a link that is exactly t(n) = α + n·β.
std::pair<double, double> exact_link(double alpha, double beta, double bandwidth_bytes) {
  return {(alpha + 8 * beta) * 1e6, bandwidth_bytes / (alpha + bandwidth_bytes * beta) * 1e-9};
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
