// Step 5 of collbench-fit (fit_selection.cpp): the statistical choice per
// size, the exchanges that are one, the selection strings, and the known
// fastest algorithm recovered from synthetic measurements.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "collbench/models/fit.h"
#include "fit_test_support.h"
#include "models_synthetic.h"

namespace collbench {
namespace {

using testing::expect_within;
using testing::spread;
using testing::synthetic_points;
using testing::SyntheticTruth;

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

// ------------------------------------------------- statistical selection

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
  // Chosen as x or as y, the exchange is x's.
  for (const Choice& c : choices) {
    EXPECT_EQ(c.exchange, "x") << c.bytes;
    EXPECT_EQ(c.tie_exchanges, std::vector<std::string>{"z"}) << c.bytes;
  }
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
      // Named by the exchange's first candidate, beaten or unmeasured here or not.
      EXPECT_EQ(c.exchange, candidates[exchange[index(c.chosen)]]) << c.bytes;
      std::set<std::size_t> tie_exchanges;
      for (const std::string& name : c.ties) tie_exchanges.insert(exchange[index(name)]);
      std::vector<std::string> tie_exchange_names;
      for (const std::size_t i : tie_exchanges) tie_exchange_names.push_back(candidates[i]);
      EXPECT_EQ(c.tie_exchanges, tie_exchange_names) << c.bytes;
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

TEST(Selection, TheExchangeIsNamedByItsFirstAlgorithmWhenAnotherIsChosen) {
  // recursive_doubling beaten beyond noise by swing_latency, its equivalent
  // at 2 ranks: swing_latency is chosen, the exchange still named
  // recursive_doubling. ring, within noise but not within the tolerance of
  // the lowest median, is a tie of the ring's exchange.
  const auto base = [](const std::string& algorithm, int i) {
    const double lowest = 20.0 + i;
    return algorithm == "recursive_doubling" ? lowest + 10
           : algorithm == "ring"             ? lowest * 1.05 + 0.5
                                             : lowest;
  };
  const std::vector<NamedTable> tables = {
      {"named.csv", three_repetitions({"ring", "recursive_doubling", "swing_latency"}, base)}};
  const FitResults results = fit_measurements(aggregate_measurements(tables));
  const std::string path = ::testing::TempDir() + "/selections_exchange_test.csv";
  write_selections_csv(path, results);
  const CsvTable csv = read_csv_file(path);
  ASSERT_EQ(csv.rows.size(), 6u);
  for (const auto& row : csv.rows) {
    const auto at = [&](std::string_view column) {
      return row[static_cast<std::size_t>(csv.column(column))];
    };
    EXPECT_EQ(at("chosen"), "swing_latency");
    EXPECT_EQ(at("exchange"), "recursive_doubling");
    EXPECT_EQ(at("same"), "");
    EXPECT_EQ(at("ties"), "ring");
    EXPECT_EQ(at("tie_exchanges"), "ring");
  }
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

}  // namespace
}  // namespace collbench
