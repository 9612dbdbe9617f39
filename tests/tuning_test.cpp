// collbench-fit --export ompi-rules (benchmarks/models/tuning.cpp): every
// exported file parsed back by the rules grammar and checked, through Open
// MPI's lookup, against the choices it was made from; the grammar's own
// refusals; and the export's refusals of bad input.
#include "collbench/models/tuning.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <iterator>
#include <limits>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "collbench/collectives/collective.h"
#include "collbench/collectives/mpich_tuned.h"
#include "collbench/collectives/ompi_tuned.h"

namespace collbench {
namespace {

Measurement library_point(const std::string& collective, const std::string& algorithm, int ranks,
                          double bytes, double median, double spread = 0) {
  Measurement m;
  m.family = collective;
  m.transport = "mpi";
  m.placement = "intra";
  m.dtype = "f32";
  // As the CSV has it: no op where nothing is reduced.
  m.op = collective == "allgather" || collective == "broadcast" || collective == "alltoall" ? ""
                                                                                            : "sum";
  m.algorithm = algorithm;
  m.ranks = ranks;
  m.bytes = bytes;
  m.seconds = median;
  m.q1_seconds = median - spread;
  m.q3_seconds = median + spread;
  m.samples = 3;
  m.sources = {"synthetic.csv"};
  return m;
}

// A measurement set over every collective of the table: at each size one
// forced algorithm is fastest (which one moves with the size), the default
// sometimes fastest, sometimes within the spread.
std::vector<Measurement> synthetic_measurements() {
  std::vector<Measurement> points;
  const std::vector<double> sizes = {8, 1024, 65536, 1 << 20, 16 << 20, 64 << 20};
  for (const OmpiTunedCollective& collective : ompi_tuned_collectives()) {
    for (const int ranks : {2, 4, 8}) {
      for (std::size_t k = 0; k < sizes.size(); ++k) {
        const double base = 1e-5 * (1 + static_cast<double>(k));
        const std::size_t winner =
            (k + static_cast<std::size_t>(ranks)) % collective.algorithms.size();
        for (std::size_t a = 0; a < collective.algorithms.size(); ++a) {
          const double median = a == winner ? base : base * (2.0 + static_cast<double>(a));
          points.push_back(library_point(std::string(collective.collective),
                                         std::string(collective.algorithms[a].row), ranks, sizes[k],
                                         median, base * 0.05));
        }
        // Every third size the default is fastest; every third the winner
        // beats it only within the spread; else it is clearly slower.
        const double library = k % 3 == 0 ? base * 0.5 : k % 3 == 1 ? base * 1.08 : base * 3;
        points.push_back(library_point(std::string(collective.collective), "mpi", ranks, sizes[k],
                                       library, base * 0.05));
      }
    }
  }
  return points;
}

// Each library's forced rows are registered for every algorithm of its
// table and refuse what the library cannot force, each saying why: another
// transport, an equal-block call that p does not divide, Open MPI's two_proc
// away from 2 ranks. (Built once for both libraries in
// collectives/forced_library_rows.h; a row off by one index, or a refusal of
// one library given to the other, fails here.)
TEST(ForcedLibraryRows, RefuseWhatTheLibraryCannotForceAndSayWhy) {
  const auto reason = [](std::string_view collective, std::string_view row,
                         std::string_view transport, int ranks, std::size_t count) {
    const AlgorithmInfo* algorithm = find_collective(collective)->find_algorithm(row);
    EXPECT_NE(algorithm, nullptr) << row;
    return algorithm == nullptr ? std::string("unknown")
                                : algorithm->unsupported_reason(transport, ranks, count);
  };
  for (const OmpiTunedCollective& collective : ompi_tuned_collectives()) {
    for (const OmpiTunedAlgorithm& algorithm : collective.algorithms) {
      EXPECT_NE(find_collective(collective.collective)->find_algorithm(algorithm.row), nullptr)
          << algorithm.row;
    }
  }
  for (const MpichCollective& collective : mpich_tuned_collectives()) {
    for (const OmpiTunedAlgorithm& algorithm : collective.algorithms) {
      EXPECT_NE(find_collective(collective.collective)->find_algorithm(algorithm.row), nullptr)
          << algorithm.row;
    }
  }
  EXPECT_EQ(reason("allreduce", "ompi_ring", "inproc", 4, 8),
            "needs the mpi transport (this run uses 'inproc')");
  EXPECT_EQ(reason("allreduce", "ompi_ring", "mpi", 4, 8), "");
  EXPECT_EQ(reason("alltoall", "ompi_pairwise", "mpi", 3, 7),
            "coll_tuned_alltoall_algorithm governs the equal-block call only, and 7 elements do "
            "not divide into 3 ranks");
  EXPECT_EQ(reason("alltoall", "ompi_two_proc", "mpi", 2, 8), "");
  EXPECT_EQ(reason("alltoall", "ompi_two_proc", "mpi", 4, 8),
            "Open MPI's alltoall two_proc runs on 2 ranks only");
  EXPECT_EQ(reason("reduce_scatter", "mpich_pairwise", "mpi", 3, 7),
            "MPIR_CVAR_REDUCE_SCATTER_BLOCK_INTRA_ALGORITHM governs the equal-block call only, "
            "and 7 elements do not divide into 3 ranks");
  EXPECT_NE(reason("reduce_scatter", "mpich_pairwise", "mpi", 3, 8), "");
  EXPECT_EQ(reason("reduce_scatter", "mpich_pairwise", "mpi", 3, 9), "");
  EXPECT_EQ(reason("broadcast", "mpich_binomial", "sim", 2, 8),
            "needs the mpi transport (this run uses 'sim')");
}

TEST(OmpiRules, EveryExportParsesBackToItsChoices) {
  const std::vector<Measurement> points = synthetic_measurements();
  const OmpiRulesExport exported = export_ompi_rules(points, {});
  const RulesFile parsed = parse_ompi_rules(exported.text, "exported");
  ASSERT_EQ(parsed.collectives.size(), ompi_tuned_collectives().size());
  int forced = 0, kept = 0;
  for (const LibraryChoice& choice : exported.choices) {
    const OmpiTunedCollective& collective = *find_ompi_tuned(choice.collective);
    const auto bytes = static_cast<std::uint64_t>(choice.bytes);
    // The measured point itself, and every size up to the next one measured.
    EXPECT_EQ(ompi_rules_algorithm(parsed, collective.rules_id, choice.ranks, bytes),
              choice.algorithm)
        << choice.collective << " p=" << choice.ranks << " " << bytes;
    const bool last = bytes == (64u << 20);
    EXPECT_EQ(ompi_rules_algorithm(parsed, collective.rules_id, choice.ranks, bytes + 1),
              last ? 0 : choice.algorithm)
        << choice.collective << " p=" << choice.ranks << " " << bytes + 1;
    // Each spread is 5% of the fastest median: the ranges overlap when the
    // default is within 10% of it.
    if (choice.chosen == "mpi") {
      ++kept;
      EXPECT_EQ(choice.algorithm, 0);
      EXPECT_GE(choice.fastest_seconds * 1.1, choice.default_seconds) << "kept on evidence only";
    } else {
      ++forced;
      EXPECT_LT(choice.fastest_seconds * 1.1, choice.default_seconds);
      EXPECT_EQ(choice.algorithm, find_ompi_tuned_algorithm(collective, choice.chosen)->id);
    }
  }
  EXPECT_GT(forced, 0);
  EXPECT_GT(kept, 0);
  // Beyond what was measured: the fixed decision.
  for (const OmpiTunedCollective& collective : ompi_tuned_collectives()) {
    for (const int ranks : {2, 4, 8}) {
      EXPECT_EQ(ompi_rules_algorithm(parsed, collective.rules_id, ranks, 4), 0) << "below 8 B";
      EXPECT_EQ(ompi_rules_algorithm(parsed, collective.rules_id, ranks, (64u << 20) + 1), 0)
          << "above 64 MiB";
    }
    for (const int ranks : {1, 3, 5, 9, 1000}) {
      EXPECT_EQ(ompi_rules_algorithm(parsed, collective.rules_id, ranks, 1024), 0)
          << "unmeasured communicator size " << ranks;
    }
  }
}

TEST(OmpiRules, ChoicesFollowTheRule) {
  // Two repetitions' worth of spread: a forced algorithm 10% faster within
  // overlapping ranges keeps the default; 3x faster replaces it.
  std::vector<Measurement> points = {
      library_point("allreduce", "ompi_ring", 2, 1024, 0.9e-5, 0.1e-5),
      library_point("allreduce", "mpi", 2, 1024, 1e-5, 0.1e-5),
      library_point("allreduce", "ompi_basic_linear", 2, 4096, 1e-5, 0.1e-5),
      library_point("allreduce", "ompi_ring", 2, 4096, 2e-5, 0.1e-5),
      library_point("allreduce", "mpi", 2, 4096, 3e-5, 0.1e-5),
  };
  const OmpiRulesExport exported = export_ompi_rules(points, {});
  ASSERT_EQ(exported.choices.size(), 2u);
  EXPECT_EQ(exported.choices[0].chosen, "mpi");
  EXPECT_EQ(exported.choices[1].chosen, "ompi_basic_linear");
  EXPECT_EQ(exported.choices[1].algorithm, 1);
  const RulesFile parsed = parse_ompi_rules(exported.text, "exported");
  ASSERT_EQ(parsed.collectives.size(), 1u);
  EXPECT_EQ(parsed.collectives[0].id, 2);
  // Ranks 1 (fixed), 2 (the choices), 3 (fixed again).
  ASSERT_EQ(parsed.collectives[0].communicators.size(), 3u);
  EXPECT_EQ(parsed.collectives[0].communicators[0].ranks, 1);
  EXPECT_EQ(parsed.collectives[0].communicators[2].ranks, 3);
  const std::vector<RulesMessage> expected = {
      {0, 0, 0, 0}, {4096, 1, kOmpiForcedFanout, kOmpiForcedSegmentBytes}, {4097, 0, 0, 0}};
  EXPECT_EQ(parsed.collectives[0].communicators[1].messages, expected);
  EXPECT_NE(exported.text.find("not evidence for a network"), std::string::npos);
}

// `export_rows` throws std::runtime_error with `text` in its message.
template <typename Export>
void expect_refused(const Export& export_rows, std::string_view text) {
  try {
    export_rows();
    ADD_FAILURE() << "exported; expected an error with '" << text << "'";
  } catch (const std::runtime_error& error) {
    EXPECT_NE(std::string(error.what()).find(text), std::string::npos) << error.what();
  }
}

TEST(OmpiRules, RefusesInputWithoutForcedAlgorithms) {
  EXPECT_THROW(export_ompi_rules({}, {}), std::runtime_error);
  const std::vector<Measurement> only_default = {library_point("allreduce", "mpi", 2, 1024, 1e-5)};
  EXPECT_THROW(export_ompi_rules(only_default, {}), std::runtime_error);
  // allreduce has forced rows, broadcast only the default.
  const std::vector<Measurement> one_missing = {
      library_point("allreduce", "ompi_ring", 2, 1024, 1e-5),
      library_point("broadcast", "mpi", 2, 1024, 1e-5)};
  expect_refused([&] { export_ompi_rules(one_missing, {}); },
                 "broadcast has measurements of the library (mpi) but none");
  std::vector<Measurement> mixed = {library_point("allreduce", "ompi_ring", 2, 1024, 1e-5),
                                    library_point("allreduce", "ompi_ring", 2, 2048, 1e-5)};
  mixed[1].dtype = "f64";
  EXPECT_THROW(export_ompi_rules(mixed, {}), std::runtime_error);
  mixed[1].dtype = "f32";
  mixed[1].op = "max";
  EXPECT_THROW(export_ompi_rules(mixed, {}), std::runtime_error);
  // A row named as a forced algorithm that the table lacks, as MPICH's.
  const std::vector<Measurement> unknown = {library_point("allreduce", "ompi_ring", 2, 1024, 1),
                                            library_point("allreduce", "ompi_bogus", 2, 1024, 1)};
  expect_refused([&] { export_ompi_rules(unknown, {}); },
                 "unknown Open MPI algorithm 'ompi_bogus' for allreduce (Open MPI 4.1's are "
                 "ompi_basic_linear, ");
}

// Rows of allreduce on 2 ranks: (algorithm, bytes, median µs, loaded).
NamedTable library_rows(
    const std::vector<std::tuple<std::string, int, double, std::string>>& rows) {
  CsvTable t;
  t.header = {"family", "transport", "provider", "algorithm", "ranks", "dtype", "op",
              "bytes",  "placement", "nodes",    "median_us", "check", "loaded"};
  for (const auto& [algorithm, bytes, us, loaded] : rows) {
    t.rows.push_back({"allreduce", "mpi", "", algorithm, "2", "f32", "sum", std::to_string(bytes),
                      "", "1", fmt::format("{}", us), "ok", loaded});
  }
  return {"library.csv", t};
}

TEST(LoadedRows, AreLeftOutWhereQuietRowsMeasureEveryPoint) {
  // ompi_ring's two loaded rows would make it beat mpi; its quiet row does not.
  const std::vector<NamedTable> tables = {library_rows({{"mpi", 1024, 10, "no"},
                                                        {"mpi", 1024, 10, "no"},
                                                        {"mpi", 1024, 10, "no"},
                                                        {"ompi_ring", 1024, 5, "yes"},
                                                        {"ompi_ring", 1024, 5, "yes"},
                                                        {"ompi_ring", 1024, 12, "no"},
                                                        {"ring", 1024, 1, "yes"}})};
  const LoadedRows kept = leave_out_loaded(tables, false);
  EXPECT_EQ(kept.loaded, 2u);  // ring is collbench's own: not the library's, not counted
  EXPECT_EQ(kept.header,
            "2 of the library's 6 rows were measured under load (loaded = yes) and are left out; "
            "every choice rests on quiet rows");
  const OmpiRulesExport exported =
      export_ompi_rules(aggregate_measurements(kept.tables), kept.tables, kept.header);
  ASSERT_EQ(exported.choices.size(), 1u);
  EXPECT_EQ(exported.choices[0].chosen, "mpi");
  EXPECT_NE(exported.text.find("# 2 of the library's 6 rows"), std::string::npos) << exported.text;
}

TEST(LoadedRows, AChoiceOnLoadedRowsAloneIsRefusedUnlessAllowed) {
  const std::vector<NamedTable> tables = {library_rows({{"mpi", 1024, 10, "no"},
                                                        {"ompi_ring", 1024, 5, "yes"},
                                                        {"ompi_ring", 1024, 5, "yes"},
                                                        {"mpi", 2048, 10, "no"},
                                                        {"ompi_ring", 2048, 12, "no"}})};
  try {
    leave_out_loaded(tables, false);
    ADD_FAILURE() << "a choice resting on loaded rows was exported";
  } catch (const std::runtime_error& error) {
    EXPECT_EQ(std::string(error.what()),
              "the choice of allreduce at 1 size (2 rows) rests on rows measured under load only "
              "(column loaded = yes: other work kept the machine busy; 2 of the library's 5 rows "
              "are marked): measure them again on a quiet machine, or pass --allow-loaded to "
              "export from them");
  }
  const LoadedRows kept = leave_out_loaded(tables, true);
  EXPECT_EQ(kept.tables.front().table.rows.size(), 5u);
  const OmpiRulesExport exported =
      export_ompi_rules(aggregate_measurements(kept.tables), kept.tables, kept.header);
  EXPECT_NE(exported.text.find("# --allow-loaded: 2 of the library's 5 rows were measured under "
                               "load (loaded = yes) and are included; 1 collective's choices "
                               "rest on them"),
            std::string::npos)
      << exported.text;
  EXPECT_EQ(exported.choices.front().chosen, "ompi_ring");
}

TEST(LoadedRows, ACsvWithoutTheColumnHasNone) {
  NamedTable named = library_rows({{"mpi", 1024, 10, "yes"}, {"ompi_ring", 1024, 5, "yes"}});
  named.table.header.pop_back();
  for (auto& row : named.table.rows) row.pop_back();
  const std::vector<NamedTable> tables = {named};
  const LoadedRows kept = leave_out_loaded(tables, false);
  EXPECT_EQ(kept.loaded, 0u);
  EXPECT_EQ(kept.header, "");
  EXPECT_EQ(kept.tables.front().table.rows.size(), 2u);
}

// The grammar: a well-formed file, then one broken thing at a time.
TEST(OmpiRules, GrammarRefusesWhatOpenMpiWouldNotRead) {
  const std::string good =
      "# comment\n1 # one collective\n2\n1\n2\n2\n0 0 0 0\n1024 4 4 0 # ring\n";
  const RulesFile parsed = parse_ompi_rules(good, "good");
  ASSERT_EQ(parsed.collectives.size(), 1u);
  EXPECT_EQ(ompi_rules_algorithm(parsed, 2, 2, 1023), 0);
  EXPECT_EQ(ompi_rules_algorithm(parsed, 2, 2, 1024), 4);
  EXPECT_EQ(ompi_rules_algorithm(parsed, 2, 64, 1 << 30), 4);
  EXPECT_EQ(ompi_rules_algorithm(parsed, 3, 2, 1024), 0);
  const std::vector<std::pair<std::string, std::string>> bad = {
      {"1\n2\n1\n2\n2\n8 0 0 0\n1024 4 4 0\n", "first message size"},
      {"1\n2\n1\n2\n2\n0 0 0 0\n0 4 4 0\n", "ascend"},
      {"1\n2\n2\n4\n1\n0 0 0 0\n2\n1\n0 0 0 0\n", "ascend"},
      {"1\n2\n1\n2\n2\n0 0 0 0\n1024 4 4\n", "ends"},
      {"1\n2\n1\n2\n1\n0 0 0 0\n7\n", "after the last"},
      {"1\n2\n1\n2\n1\n0 -1 0 0\n", "non-negative"},
      {"1\n2\n1\n2\n1\n0 ring 0 0\n", "non-negative"},
      {"2\n2\n1\n2\n1\n0 0 0 0\n2\n1\n2\n1\n0 0 0 0\n", "twice"},
      {"1\n22\n1\n2\n1\n0 0 0 0\n", "collective id"},
      {"0\n", "collectives"},
      {"1\n2\n0\n", "no communicator size"},
      {"1\n2\n1\n2\n0\n", "no message size"},
  };
  for (const auto& [text, why] : bad) {
    try {
      parse_ompi_rules(text, "bad");
      ADD_FAILURE() << "accepted: " << text;
    } catch (const std::runtime_error& error) {
      EXPECT_NE(std::string(error.what()).find(why), std::string::npos)
          << error.what() << " (expected '" << why << "')";
    }
  }
}

}  // namespace
}  // namespace collbench

namespace collbench {
namespace {

std::string read_text(const std::string& path) {
  std::ifstream file(path);
  EXPECT_TRUE(file) << "cannot read " << path;
  return {std::istreambuf_iterator<char>(file), std::istreambuf_iterator<char>()};
}

// What Open MPI runs from an entry: its algorithm, fan-in/out and segment
// size (not the size it starts at).
std::tuple<int, int, int> runs(const RulesMessage& entry) {
  return {entry.algorithm, entry.fan, entry.segment};
}

// The committed files of results/tuning/: both read by the grammar, and the
// canary the real file with one entry changed (allreduce, 2 ranks, exactly
// 1 MiB: ompi_segmented_ring in 64-byte segments).
TEST(OmpiRules, CommittedFilesParseAndTheCanaryDiffersAtOneSize) {
  const std::string folder = std::string(COLLBENCH_SOURCE_DIR) + "/results/tuning/";
  const RulesFile real = parse_ompi_rules(read_text(folder + "collbench.rules"), "collbench.rules");
  const RulesFile canary = parse_ompi_rules(read_text(folder + "canary.rules"), "canary.rules");
  const int allreduce = find_ompi_tuned("allreduce")->rules_id;
  const RulesMessage slow = ompi_rules_entry(canary, allreduce, 2, 1 << 20);
  EXPECT_EQ(runs(slow), std::make_tuple(5, 4, 64));
  EXPECT_NE(runs(ompi_rules_entry(real, allreduce, 2, 1 << 20)), runs(slow));
  for (const OmpiTunedCollective& collective : ompi_tuned_collectives()) {
    for (std::uint64_t bytes = 1; bytes <= (std::uint64_t{1} << 27); bytes *= 2) {
      for (const std::uint64_t at : {bytes - 1, bytes, bytes + 1}) {
        if (collective.rules_id == allreduce && at == (1u << 20)) continue;
        EXPECT_EQ(runs(ompi_rules_entry(canary, collective.rules_id, 2, at)),
                  runs(ompi_rules_entry(real, collective.rules_id, 2, at)))
            << collective.collective << " " << at;
      }
    }
  }
}

}  // namespace
}  // namespace collbench

// collbench-fit --export mpich-json: the same choices in MPICH's selection
// file, parsed back and walked as MPICH does; every collective of MPICH's own
// file kept; the export's refusals.
namespace collbench {
namespace {

std::vector<Measurement> synthetic_mpich_measurements() {
  std::vector<Measurement> points;
  const std::vector<double> sizes = {8, 1024, 65536, 1 << 20, 16 << 20, 64 << 20};
  for (const MpichCollective& collective : mpich_tuned_collectives()) {
    for (const int ranks : {2, 4, 8}) {
      for (std::size_t k = 0; k < sizes.size(); ++k) {
        const double base = 1e-5 * (1 + static_cast<double>(k));
        const std::size_t winner =
            (k + static_cast<std::size_t>(ranks)) % collective.algorithms.size();
        for (std::size_t a = 0; a < collective.algorithms.size(); ++a) {
          const double median = a == winner ? base : base * (2.0 + static_cast<double>(a));
          points.push_back(library_point(std::string(collective.collective),
                                         std::string(collective.algorithms[a].row), ranks, sizes[k],
                                         median, base * 0.05));
        }
        const double library = k % 3 == 0 ? base * 0.5 : k % 3 == 1 ? base * 1.08 : base * 3;
        points.push_back(library_point(std::string(collective.collective), "mpi", ranks, sizes[k],
                                       library, base * 0.05));
      }
    }
  }
  return points;
}

std::vector<std::string> top_keys(const SelectionNode& root) {
  std::vector<std::string> keys;
  for (const auto& [key, value] : root.children) keys.push_back(key);
  return keys;
}

TEST(MpichJson, EveryExportParsesBackToItsChoices) {
  const MpichJsonExport exported = export_mpich_json(synthetic_mpich_measurements(), {});
  const SelectionNode parsed = parse_mpich_selection(exported.text, "exported");
  const SelectionNode defaults = parse_mpich_selection(mpich_default_selection(), "defaults");
  // MPICH aborts on a collective the file lacks: all of its own are there.
  EXPECT_EQ(top_keys(parsed), top_keys(defaults));
  EXPECT_EQ(top_keys(defaults).size(), 44u);
  int forced = 0, kept = 0;
  for (const LibraryChoice& choice : exported.choices) {
    const MpichCollective& collective = *find_mpich_tuned(choice.collective);
    // A kept default leaves the call to MPICH's own selection.
    const auto expected = [&](double at) {
      return choice.algorithm == 0
                 ? mpich_selection_algorithm(defaults, collective, choice.ranks, at)
                 : fmt::format("MPIR_{}_{}_{}", collective.json_name,
                               choice.chosen == "mpich_nb" ? "allcomm" : "intra",
                               choice.chosen.substr(kMpichRowPrefix.size()));
    };
    // The measured point, and the sizes up to the next one measured.
    for (const double at : {choice.bytes, choice.bytes * 1.5}) {
      if (at > (64 << 20)) continue;
      EXPECT_EQ(mpich_selection_algorithm(parsed, collective, choice.ranks, at), expected(at))
          << choice.collective << " p=" << choice.ranks << " " << at;
    }
    ++(choice.algorithm == 0 ? kept : forced);
  }
  EXPECT_GT(forced, 0);
  EXPECT_GT(kept, 0);
  // Beyond what was measured: MPICH's own selection (the walk meets its
  // conditions, or lands on its leaves, never on a measured choice).
  for (const MpichCollective& collective : mpich_tuned_collectives()) {
    for (const int ranks : {2, 4, 8}) {
      EXPECT_EQ(mpich_selection_algorithm(parsed, collective, ranks, 4),
                mpich_selection_algorithm(defaults, collective, ranks, 4));
      EXPECT_EQ(mpich_selection_algorithm(parsed, collective, ranks, 128 << 20),
                mpich_selection_algorithm(defaults, collective, ranks, 128 << 20));
    }
    for (const int ranks : {1, 3, 5, 9, 1000}) {
      EXPECT_EQ(mpich_selection_algorithm(parsed, collective, ranks, 1024),
                mpich_selection_algorithm(defaults, collective, ranks, 1024))
          << collective.collective << " on unmeasured " << ranks << " ranks";
    }
  }
}

TEST(MpichJson, SizesAreMpichs) {
  // allgather's avg_msg_size is one rank's block: 4 MiB over 4 ranks is
  // 1 MiB; reduce_scatter's is total_msg_size, the whole vector.
  const std::vector<Measurement> points = {
      library_point("allgather", "mpich_ring", 4, 4 << 20, 1e-5),
      library_point("allgather", "mpi", 4, 4 << 20, 3e-5),
      library_point("reduce_scatter", "mpich_pairwise", 4, 4 << 20, 1e-5),
      library_point("reduce_scatter", "mpi", 4, 4 << 20, 3e-5),
  };
  const MpichJsonExport exported = export_mpich_json(points, {});
  EXPECT_NE(exported.text.find("\"avg_msg_size<=1048576\""), std::string::npos) << exported.text;
  EXPECT_NE(exported.text.find("\"total_msg_size<=4194304\""), std::string::npos);
  EXPECT_NE(exported.text.find("MPIR_Allgather_intra_ring"), std::string::npos);
  EXPECT_NE(exported.text.find("not evidence for a network"), std::string::npos);
}

TEST(MpichJson, RefusesBadInput) {
  EXPECT_THROW(export_mpich_json({}, {}), std::runtime_error);
  const std::vector<Measurement> unknown = {library_point("allreduce", "mpich_bogus", 2, 1024, 1),
                                            library_point("allreduce", "mpi", 2, 1024, 1)};
  expect_refused([&] { export_mpich_json(unknown, {}); }, "unknown MPICH algorithm 'mpich_bogus'");
  const std::vector<Measurement> one_missing = {
      library_point("allreduce", "mpich_smp", 2, 1024, 1e-5),
      library_point("broadcast", "mpi", 2, 1024, 1e-5)};
  expect_refused([&] { export_mpich_json(one_missing, {}); },
                 "broadcast has measurements of the library (mpi) but none");
  // Open MPI's rows are not MPICH's.
  const std::vector<Measurement> ompi = {library_point("allreduce", "ompi_ring", 2, 1024, 1e-5)};
  EXPECT_THROW(export_mpich_json(ompi, {}), std::runtime_error);
  std::vector<Measurement> mixed = {library_point("allreduce", "mpich_smp", 2, 1024, 1e-5),
                                    library_point("allreduce", "mpich_smp", 2, 2048, 1e-5)};
  mixed[1].dtype = "f64";
  expect_refused([&] { export_mpich_json(mixed, {}); }, "a selection file is for one of each");
}

TEST(MpichJson, ReaderRefusesBrokenFiles) {
  for (const std::string text :
       {"{", "{\"a\": {}", "{\"a\" {}}", "{\"a\": {}} x", "/* {}", "{\"a\": 1}"}) {
    EXPECT_THROW(parse_mpich_selection(text, "bad"), std::runtime_error) << text;
  }
  EXPECT_EQ(
      parse_mpich_selection("/* c */ {\"a\": {\"b\": {}}, \"c\": {}}", "good").children.size(), 2u);
}

}  // namespace
}  // namespace collbench

namespace collbench {
namespace {

// The committed MPICH files of results/tuning/: both read by the selection
// reader, and the canary the real file with one entry added (alltoall on 2
// ranks at 64 KiB, 32 KiB a rank: MPICH's in-place algorithm on a call that
// is not in place, whose wrong elements --check sees at that size only).
TEST(MpichJson, CommittedFilesParseAndTheCanaryDiffersAtOneSize) {
  const std::string folder = std::string(COLLBENCH_SOURCE_DIR) + "/results/tuning/";
  const SelectionNode real =
      parse_mpich_selection(read_text(folder + "collbench.json"), "collbench.json");
  const SelectionNode canary =
      parse_mpich_selection(read_text(folder + "canary.json"), "canary.json");
  const SelectionNode defaults = parse_mpich_selection(mpich_default_selection(), "defaults");
  EXPECT_EQ(top_keys(real), top_keys(defaults));
  EXPECT_EQ(top_keys(canary), top_keys(defaults));
  const MpichCollective& alltoall = *find_mpich_tuned("alltoall");
  EXPECT_EQ(mpich_selection_algorithm(canary, alltoall, 2, 65536),
            "MPIR_Alltoall_intra_pairwise_sendrecv_replace");
  EXPECT_NE(mpich_selection_algorithm(real, alltoall, 2, 65536),
            "MPIR_Alltoall_intra_pairwise_sendrecv_replace");
  for (const MpichCollective& collective : mpich_tuned_collectives()) {
    for (const int ranks : {2, 3, 4}) {
      for (double bytes = 1; bytes <= (1 << 27); bytes *= 2) {
        for (const double at : {bytes - 1, bytes, bytes + 1}) {
          // MPICH's size here is one rank's block, in whole bytes.
          if (&collective == &alltoall && ranks == 2 &&
              static_cast<std::uint64_t>(at) / 2 == 32768) {
            continue;
          }
          EXPECT_EQ(mpich_selection_algorithm(canary, collective, ranks, at),
                    mpich_selection_algorithm(real, collective, ranks, at))
              << collective.collective << " p=" << ranks << " " << at;
        }
      }
    }
  }
}

}  // namespace
}  // namespace collbench
