// Unit tests of the collbench harness pieces that need no mpirun: order
// statistics, option parsing and its error messages, the --check data and
// its closed-form expectations (against every real algorithm on the
// in-process transport), benchmark planning, the CSV row and the rank-0
// reporter.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <limits>
#include <numeric>
#include <optional>
#include <random>
#include <set>
#include <span>
#include <tuple>

#include "check_data.h"
#include "collbench/catalog/sizes.h"
#include "collbench/catalog/workload.h"
#include "collbench/collectives/algorithm.h"
#include "collbench/core/csv.h"
#include "collbench/core/reduce.h"
#include "collbench/transport/inproc_transport.h"
#include "families.h"
#include "family_registry.h"
#include "gemm_family.h"
#include "metadata.h"
#include "options.h"
#include "reporter.h"
#include "single_process.h"
#include "statistics.h"

namespace collbench::harness {
namespace {

const CollectiveInfo& allreduce() { return *find_collective("allreduce"); }

// --- statistics ---------------------------------------------------------------

TEST(Statistics, OrderStatisticsOfAShuffledRange) {
  std::vector<double> samples(200);
  std::iota(samples.begin(), samples.end(), 1.0);
  std::shuffle(samples.begin(), samples.end(), std::mt19937(42));
  const Summary summary = summarize(samples);
  EXPECT_EQ(summary.samples, 200u);
  EXPECT_EQ(summary.min, 1.0);
  EXPECT_EQ(summary.max, 200.0);
  EXPECT_EQ(summary.median, 100.5);  // mean of the 100th and 101st
  EXPECT_DOUBLE_EQ(summary.mean, 201.0 / 2);
  EXPECT_EQ(summary.p99, 198.0);  // nearest rank: ceil(0.99 * 200) = 198th
}

TEST(Statistics, P99IsAlwaysAMeasuredSample) {
  std::vector<double> samples = {3, 1, 1000, 2};
  const Summary summary = summarize(samples);
  EXPECT_EQ(summary.p99, 1000.0);  // ceil(0.99 * 4) = 4th of 4
  EXPECT_EQ(summary.median, 2.5);
  std::vector<double> one = {7};
  const Summary single = summarize(one);
  EXPECT_EQ(single.min, 7);
  EXPECT_EQ(single.p99, 7);
  EXPECT_EQ(single.max, 7);
}

TEST(Statistics, RejectsNoSamplesAndBadPercentiles) {
  std::vector<double> none;
  EXPECT_THROW(summarize(none), std::invalid_argument);
  const std::vector<double> sorted = {1, 2};
  EXPECT_THROW(nearest_rank_percentile(sorted, 0), std::invalid_argument);
  EXPECT_THROW(nearest_rank_percentile(sorted, 101), std::invalid_argument);
}

// --- options ------------------------------------------------------------------

TEST(Options, DefaultsAreTheDocumentedSweep) {
  const Options options = parse_options({});
  EXPECT_TRUE(options.all_algorithms);
  std::vector<std::uint64_t> expected;
  for (std::uint64_t size = 8; size <= (std::uint64_t{64} << 20); size *= 2) {
    expected.push_back(size);
  }
  EXPECT_EQ(options.sizes, expected);
  EXPECT_EQ(options.dtype, DType::f32);
  EXPECT_EQ(options.op, ReduceOp::sum);
  EXPECT_EQ(options.sync, SyncMode::barrier);
  EXPECT_EQ(options.transport, "mpi");
  EXPECT_EQ(options.warmup, 1);
  EXPECT_EQ(options.min_samples, 10);
  EXPECT_EQ(options.samples, 0);  // not fixed: min_time decides above the floor
  EXPECT_EQ(options.sample_floor(), 10);
  EXPECT_FALSE(options.check);
  // The registry's order (family_registry.cpp).
  EXPECT_EQ(options.families, (std::vector<std::string>{"allreduce", "exchange", "p2p", "local"}));
}

TEST(FamilyRegistry, EveryNameOnceTheDefaultsAndTheHelpFromTheTable) {
  std::set<std::string_view> seen;
  std::string defaults;
  for (const FamilyName& family : family_names()) {
    EXPECT_TRUE(seen.insert(family.name).second) << family.name << " registered twice";
    ASSERT_NE(find_family_name(family.name), nullptr) << family.name;
    EXPECT_EQ(find_family_name(family.name)->in_default_list, family.in_default_list);
    if (family.in_default_list) {
      defaults += (defaults.empty() ? "" : ",") + std::string(family.name);
    }
  }
  EXPECT_EQ(default_families(), defaults);
  EXPECT_EQ(find_family_name("gather"), nullptr);
  // Every collective of the table is a name, and "collectives" all of them.
  for (const CollectiveInfo& collective : collectives()) {
    EXPECT_TRUE(seen.count(collective.name)) << collective.name;
  }
  EXPECT_EQ(select_families({"collectives", "allreduce"}).size(), collectives().size());
  const std::string help = families_flag_help();
  for (const std::string_view name : seen) {
    EXPECT_NE(help.find(name), std::string::npos) << name << " missing from --families' help";
  }
}

// Only train calls MPI off the main thread, so only a list that selects it
// makes main ask MPI for more than MPI_THREAD_SINGLE (which costs Open MPI
// every call); a list the options refuse asks for nothing more.
TEST(FamilyRegistry, OnlyTrainCallsMpiOffTheMainThread) {
  EXPECT_TRUE(selects_mpi_off_the_main_thread({"train"}));
  EXPECT_TRUE(selects_mpi_off_the_main_thread({"allreduce", "train"}));
  EXPECT_FALSE(selects_mpi_off_the_main_thread(split_list(default_families())));
  EXPECT_FALSE(selects_mpi_off_the_main_thread({"collectives", "p2p", "local", "exchange"}));
  EXPECT_FALSE(selects_mpi_off_the_main_thread({"train", "no_such_family"}));
  EXPECT_FALSE(selects_mpi_off_the_main_thread({}));
}

TEST(Options, SamplesFixTheCountMinSamplesSetTheFloor) {
  EXPECT_EQ(parse_options({"--min-samples", "25"}).sample_floor(), 25);
  const Options fixed = parse_options({"--samples", "3"});
  EXPECT_EQ(fixed.samples, 3);
  EXPECT_EQ(fixed.sample_floor(), 3);
  // Both are part of the configuration every rank must share.
  const auto fields = configuration_fields(fixed, {});
  EXPECT_NE(std::find(fields.begin(), fields.end(),
                      std::pair<std::string, std::string>{"--samples", "3"}),
            fields.end());
  EXPECT_NE(std::find(fields.begin(), fields.end(),
                      std::pair<std::string, std::string>{"--min-samples", "10"}),
            fields.end());
}

// A transport of one process that refuses the sampling flags, as the
// simulated one will (its cases are deterministic and run once): every flag
// of kSamplingFlags is refused with its sentence, collbench's and Google
// Benchmark's alike, and a run without them is accepted.
TEST(SingleProcess, ATransportMayRefuseTheSamplingFlags) {
  const SingleProcessTransport once{"inproc", 8, "every case runs once", nullptr};
  const std::vector<std::vector<std::string>> own = {
      {"--samples", "3"}, {"--min-samples", "3"}, {"--warmup", "2"}, {"--interleave"}};
  for (std::vector<std::string> args : own) {
    const std::string flag = args.front();
    args.insert(args.end(), {"--transport", "inproc", "--ranks", "2"});
    EXPECT_THROW(
        {
          try {
            Options parsed = parse_options(args);
            validate_single_process(once, parsed, {});
          } catch (const UsageError& error) {
            EXPECT_EQ(std::string(error.what()),
                      flag + " cannot be used with --transport inproc: every case runs once");
            throw;
          }
        },
        UsageError)
        << flag;
  }
  Options plain = parse_options({"--transport", "inproc", "--ranks", "2"});
  for (const std::string flag : {"--benchmark_repetitions", "--benchmark_min_time"}) {
    EXPECT_THROW(validate_single_process(once, plain, {{flag, "2"}}), UsageError) << flag;
  }
  EXPECT_NO_THROW(validate_single_process(once, plain, {{"--benchmark_filter", "ring"}}));
  // inproc itself takes them all.
  Options with_samples = parse_options({"--transport", "inproc", "--ranks", "2", "--samples", "3"});
  EXPECT_NO_THROW(validate_single_process(with_samples, {{"--benchmark_repetitions", "2"}}));
}

TEST(Options, DefaultTimeoutGrowsWithBytesAndRanks) {
  EXPECT_LT(parse_options({}).timeout_seconds, 0);  // not given: per benchmark
  EXPECT_DOUBLE_EQ(parse_options({"--timeout", "2.5"}).timeout_seconds, 2.5);
  EXPECT_DOUBLE_EQ(default_timeout_seconds(0, 2), 60);
  EXPECT_DOUBLE_EQ(default_timeout_seconds(8, 1), 60 + 2 * 8 / 10e6);
  // 64 MiB on 4 ranks: 2·3·64 MiB at 10 MB/s on top of the minute.
  EXPECT_NEAR(default_timeout_seconds(std::uint64_t{64} << 20, 4), 60 + 6 * 67.108864 / 10, 1e-9);
  EXPECT_GT(default_timeout_seconds(1 << 20, 8), default_timeout_seconds(1 << 20, 4));
  EXPECT_LE(default_timeout_seconds(~std::uint64_t{0}, 1 << 20), 365.0 * 24 * 3600);
}

TEST(Options, ATimeoutBelowAMillisecondIsOneMillisecondNotForever) {
  using std::chrono::milliseconds;
  EXPECT_EQ(timeout_milliseconds(0.0004), milliseconds(1));  // 0 would mean "wait forever"
  EXPECT_EQ(timeout_milliseconds(1e-9), milliseconds(1));
  EXPECT_EQ(timeout_milliseconds(0), milliseconds(0));
  EXPECT_EQ(timeout_milliseconds(2.5), milliseconds(2500));
  EXPECT_EQ(timeout_milliseconds(0.3), milliseconds(300));
  EXPECT_EQ(timeout_milliseconds(365.0 * 24 * 3600), milliseconds(365LL * 24 * 3600 * 1000));
}

TEST(Options, ParsesListsAndRepeatedWorkloads) {
  const Options options = parse_options({"--algorithms",
                                         "tree, ring,tree",
                                         "--sizes",
                                         "16B,1KiB:4KiB",
                                         "--dtype",
                                         "f64",
                                         "--op",
                                         "max",
                                         "--workload",
                                         "resnet50:ddp",
                                         "--workload",
                                         "bert_base:total",
                                         "--sync",
                                         "none",
                                         "--check",
                                         "--dtype",
                                         "f64",
                                         "--warmup",
                                         "4",
                                         "--warmup",
                                         "2"});
  EXPECT_FALSE(options.all_algorithms);
  EXPECT_EQ(options.algorithms, (std::vector<std::string>{"tree", "ring"}));
  EXPECT_EQ(options.sizes, (std::vector<std::uint64_t>{16, 1024, 2048, 4096}));
  EXPECT_EQ(options.dtype, DType::f64);
  EXPECT_EQ(options.op, ReduceOp::max);
  EXPECT_EQ(options.workloads, (std::vector<std::string>{"resnet50:ddp", "bert_base:total"}));
  EXPECT_EQ(options.sync, SyncMode::none);
  EXPECT_TRUE(options.check);
  EXPECT_TRUE(options.sizes_given);
  // A repeated option: the later value wins (run.sh's defaults, then the user's).
  EXPECT_EQ(options.warmup, 2);
}

struct BadInput {
  std::vector<std::string> args;
  std::string message;  // a part of the error that says what was wrong
};

TEST(Options, BadInputSaysWhatIsWrongAndWhatIsAccepted) {
  const std::vector<BadInput> cases = {
      {{"--algorithms", "ring,rings"},
       "unknown algorithm 'rings' in --algorithms; accepted: all, or allreduce: ring, tree"},
      {{"--algorithms", ""}, "--algorithms is empty"},
      {{"--sizes", "8Q"}, "--sizes: "},
      {{"--sizes", "6B"}, "6 bytes is not a whole number of f32 elements (4 bytes each)"},
      {{"--dtype", "f64", "--sizes", "12B"}, "not a whole number of f64 elements"},
      {{"--dtype", "f8"}, "unknown --dtype 'f8'; accepted: f32, f64, f16, bf16"},
      {{"--op", "prod"}, "unknown --op 'prod'; accepted: sum, avg, min, max"},
      {{"--sync", "fence"}, "unknown --sync 'fence'; accepted: barrier, none, window"},
      {{"--debug-late-rank", "1"},
       "--debug-late-rank acts on --sync window's start times; add --sync window"},
      {{"--sync", "window", "--transport", "sim", "--ranks", "2"},
       "--sync window cannot be used with --transport sim"},
      {{"--transport", "rdma"}, "unknown --transport 'rdma'"},
      {{"--families", "allreduce,bogus"},
       "unknown family 'bogus' in --families; accepted: allreduce, reduce_scatter, allgather, "
       "broadcast, reduce, alltoall, alltoallv, "
       "exchange, mpi_bare, p2p, sendrecv, local, reduce_all"},
      {{"--gemm-batches", "0"},
       "--gemm-batches: '0' is not a batch; accepted: whole numbers from 1"},
      {{"--families", "gemm", "--gemm-batches", "8:2"}, "range 8:2 ends below its start"},
      {{"--families", "gemm", "--gemm-batches", "1e3"}, "'1e3' is not a batch"},
      {{"--families", "gemm", "--gemm-models", "resnet51"}, "--gemm-models: "},
      {{"--gemm-models", "resnet50"}, "only act on --families gemm; add gemm"},
      {{"--families", "gemm", "--gemm-models", ""}, "--gemm-models is empty; accepted: "},
      {{"--families", "gemm", "--gemm-models", " , "}, "--gemm-models is empty; accepted: "},
      {{"--blas-threads", "0"}, "--blas-threads"},
      {{"--families", "train"}, "--families train needs a --workload"},
      {{"--families", "train", "--workload", "resnet50:ddp", "--compute-scale", "0"},
       "--compute-scale 0 is not a fraction of the compute; accepted: 0 < X <= 1"},
      {{"--families", "train", "--workload", "resnet50:ddp", "--compute-scale", "1.5"},
       "--compute-scale 1.5 is not a fraction"},
      {{"--families", "train", "--workload", "resnet50:ddp", "--compute-scale", "nan"},
       "--compute-scale nan is not a fraction"},
      {{"--train-batch", "4"}, "only act on --families train; add train"},
      {{"--families", "train", "--workload", "resnet50:ddp", "--train-batch", "0"},
       "--train-batch"},
      {{"--frobnicate"}, "--frobnicate"},
      {{"--warmup", "-1"}, "--warmup"},
      {{"--append"}, "--append needs --csv PATH"},
      {{"--csv", "x.csv", "--append", "--force"}, "excludes"},
      {{"--run-id", "a/b"}, "--run-id 'a/b' has characters other than"},
      {{"--ofi-provider", "tcp"}, "--ofi-provider 'tcp' needs --transport ofi"},
      {{"--debug-slow-us", "5"}, "--debug-slow-us needs --debug-slow-rank"},
      {{"--debug-corrupt-elements", "3"}, "add --check"},
      {{"--sizes", ""}, "--sizes is empty; accepted: "},
      {{"--timeout", "-1"}, "--timeout: expected a number of seconds from 0 to 31536000, got '-1'"},
      {{"--timeout", "nan"}, "got 'nan'"},
      {{"--debug-stuck-rank", "1", "--debug-crash-rank", "2"}, "excludes"},
      {{"--debug-fault-after", "2"}, "--debug-fault-after needs --debug-stuck-rank R"},
      {{"--debug-crash-rank", "-1"}, "expected a whole number from 0 to 2147483647, got '-1'"},
      {{"--debug-slow-rank", "0", "--debug-slow-us", "1e30"},
       "--debug-slow-us: expected a number of microseconds from 0 to 60000000, got '1e30'"},
      {{"--debug-slow-rank", "0", "--debug-slow-us", "nan"}, "got 'nan'"},
      {{"--debug-slow-rank", "0", "--debug-slow-us", "inf"}, "got 'inf'"},
      {{"--timeout", "inf"}, "got 'inf'"},
      {{"--warmup", "1e9"}, "--warmup: expected a whole number of calls from 0 to 1000000"},
      {{"--warmup", "nan"}, "got 'nan'"},
      {{"--debug-corrupt-elements", "nan", "--check"}, "got 'nan'"},
      {{"--debug-fault-after", "inf", "--debug-crash-rank", "0"}, "got 'inf'"},
      {{"--debug-stuck-rank", "0", "--timeout", "0"},
       "--debug-stuck-rank with --timeout 0 would hang for ever"},
      {{"--samples", "0"}, "--samples: expected a whole number of samples from 1 to 10000000"},
      {{"--min-samples", "2.5"}, "--min-samples: expected a whole number of samples from 1"},
      {{"--samples", "5", "--min-samples", "3"}, "excludes"},
  };
  for (const BadInput& bad : cases) {
    try {
      parse_options(bad.args);
      ADD_FAILURE() << "accepted: " << fmt::format("{}", fmt::join(bad.args, " "));
    } catch (const UsageError& error) {
      EXPECT_NE(std::string(error.what()).find(bad.message), std::string::npos)
          << "for " << fmt::format("{}", fmt::join(bad.args, " ")) << ": " << error.what();
    }
  }
}

TEST(Options, DebugRanksMustBeRanksOfTheJob) {
  EXPECT_NO_THROW(validate_for_ranks(parse_options({"--debug-stuck-rank", "2"}), 3));
  // Alone, a stuck rank has nobody to time out and name it: it would hang.
  EXPECT_NO_THROW(validate_for_ranks(parse_options({"--debug-stuck-rank", "0"}), 2));
  try {
    validate_for_ranks(parse_options({"--debug-stuck-rank", "0"}), 1);
    ADD_FAILURE() << "--debug-stuck-rank 0 accepted on 1 rank";
  } catch (const UsageError& error) {
    EXPECT_NE(std::string(error.what()).find("--debug-stuck-rank needs a job of 2 ranks or more"),
              std::string::npos)
        << error.what();
  }
  for (const char* flag : {"--debug-slow-rank", "--debug-stuck-rank", "--debug-crash-rank"}) {
    try {
      validate_for_ranks(parse_options({flag, "3"}), 3);
      ADD_FAILURE() << flag << " 3 accepted on 3 ranks";
    } catch (const UsageError& error) {
      EXPECT_EQ(std::string(error.what()),
                fmt::format("{} 3: the job has 3 ranks; accepted: 0 to 2", flag));
    }
  }
}

TEST(Options, EveryGoogleBenchmarkFlagIsCheckedBeforeGoogleBenchmarkSeesIt) {
  // Google Benchmark 1.7.1 answers most of these with its usage text and
  // exit status 0, or calls a malformed number an unknown argument.
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"--benchmark_repetitions=-1", "expected a whole number of repetitions from 1 to 100000"},
      {"--benchmark_repetitions=2.5", "expected a whole number of repetitions from 1 to"},
      {"--benchmark_repetitions=1e3", "expected a whole number of repetitions from 1 to"},
      {"--benchmark_repetitions=99999999999", "expected a whole number of repetitions from 1 to"},
      {"--benchmark_repetitions=100001", "expected a whole number of repetitions from 1 to 100000"},
      {"--benchmark_min_time=0.5ms",
       "expected a number of seconds from 0 to 86400, e.g. 0.5 or 0.5s"},
      {"--benchmark_min_time=s", "expected a number of seconds from 0 to 86400"},
      {"--benchmark_min_time=5x", "expected a number of seconds from 0 to 86400"},
      {"--benchmark_min_warmup_time=0.5s", "expected a number of seconds from 0 to 86400"},
      {"--benchmark_min_time=1e30", "expected a number of seconds from 0 to 86400"},
      {"--benchmark_min_time=nan", "expected a number of seconds from 0 to 86400"},
      {"--benchmark_min_warmup_time=abc", "expected a number of seconds from 0 to 86400"},
      {"--benchmark_time_unit=fortnight", "accepted units are ns, us, ms and s"},
      {"--benchmark_format=xml", "accepted formats are console and json"},
      {"--benchmark_out_format=yaml", "accepted formats are console and json"},
      {"--benchmark_out_format=csv", "Google Benchmark's csv format is not accepted"},
      {"--benchmark_format=csv", "Google Benchmark's csv format is not accepted"},
      {"--benchmark_color=", "expected auto, true or false"},
      {"--benchmark_list_tests=maybe", "expected true or false"},
      {"--benchmark_report_aggregates_only=sometimes", "expected true or false"},
      {"--benchmark_context=novalue", "expected KEY=VALUE pairs separated by commas"},
      {"--v=-1", "expected a whole number of log levels from 0 to 2147483647"},
  };
  for (const auto& [flag, message] : cases) {
    try {
      benchmark_run_flags({flag});
      ADD_FAILURE() << flag << " accepted";
    } catch (const UsageError& error) {
      EXPECT_NE(std::string(error.what()).find(flag + ": " + message), std::string::npos)
          << error.what();
    }
  }
  const std::vector<std::pair<std::string, std::string>> shapes = {
      {"--benchmark_repetition=3",
       "unknown Google Benchmark flag --benchmark_repetition; accepted: --benchmark_list_tests,"},
      {"--benchmark_min_time",
       "--benchmark_min_time needs a value, written --benchmark_min_time=VALUE"},
      {"--v", "--v needs a value"},
  };
  for (const auto& [flag, message] : shapes) {
    try {
      benchmark_run_flags({flag});
      ADD_FAILURE() << flag << " accepted";
    } catch (const UsageError& error) {
      EXPECT_NE(std::string(error.what()).find(message), std::string::npos) << error.what();
    }
  }
  EXPECT_NO_THROW(benchmark_run_flags(
      {"--benchmark_repetitions=3", "--benchmark_min_time=0", "--benchmark_time_unit=ms",
       "--benchmark_list_tests", "--benchmark_color=auto", "--benchmark_counters_tabular=TRUE",
       "--benchmark_context=a=1,b=2", "--benchmark_display_aggregates_only=no", "--v=2",
       "--benchmark_filter=", "--benchmark_perf_counters=CYCLES"}));
}

TEST(Options, GoogleBenchmarkFlagsThatBreakLockStepAreRefused) {
  EXPECT_THROW(benchmark_run_flags({"--benchmark_enable_random_interleaving=true"}), UsageError);
  EXPECT_THROW(benchmark_run_flags({"--benchmark_enable_random_interleaving"}), UsageError);
  EXPECT_NO_THROW(benchmark_run_flags({"--benchmark_enable_random_interleaving=false"}));
  EXPECT_THROW(benchmark_run_flags({"--benchmark_format=xml"}), UsageError);
  EXPECT_THROW(benchmark_run_flags({"--benchmark_out_format=yaml"}), UsageError);
  // Display-only flags may differ between ranks and are not compared.
  const auto flags =
      benchmark_run_flags({"--benchmark_min_time=0.5", "--benchmark_out=x.json",
                           "--benchmark_format=json", "--sizes", "8B", "--benchmark_filter=ring"});
  EXPECT_EQ(flags, (std::vector<std::pair<std::string, std::string>>{
                       {"--benchmark_min_time", "0.5"}, {"--benchmark_filter", "ring"}}));
}

// Newer Google Benchmarks write min_time as "0.5s"; 1.7.1 reads "0.5", so
// the suffix is accepted and dropped before it sees the value.
TEST(Options, MinTimeTakesASecondsSuffix) {
  EXPECT_EQ(benchmark_run_flags({"--benchmark_min_time=0.05s"}),
            (std::vector<std::pair<std::string, std::string>>{{"--benchmark_min_time", "0.05"}}));
  EXPECT_EQ(google_benchmark_argument("--benchmark_min_time=0.05s"), "--benchmark_min_time=0.05");
  EXPECT_EQ(google_benchmark_argument("--benchmark_min_time=2"), "--benchmark_min_time=2");
  EXPECT_EQ(google_benchmark_argument("--benchmark_filter=pass"), "--benchmark_filter=pass");
  EXPECT_EQ(google_benchmark_argument("--sizes"), "--sizes");
}

TEST(Options, RepetitionsAreTheLastRepetitionsFlagOrOne) {
  EXPECT_EQ(benchmark_repetitions({}), 1);
  EXPECT_EQ(benchmark_repetitions(benchmark_run_flags({"--benchmark_min_time=0.1"})), 1);
  EXPECT_EQ(benchmark_repetitions(benchmark_run_flags({"--benchmark_repetitions=4"})), 4);
  EXPECT_EQ(benchmark_repetitions(
                benchmark_run_flags({"--benchmark_repetitions=4", "--benchmark_repetitions=2"})),
            2);
  EXPECT_THROW(benchmark_run_flags({"--benchmark_repetitions=1e12"}), UsageError);
  EXPECT_FALSE(parse_options({}).interleave);
  EXPECT_TRUE(parse_options({"--interleave"}).interleave);
}

TEST(Options, ConfigurationDigestNamesEachDifferingOption) {
  const std::vector<std::vector<std::string>> variants = {{"--sizes", "16B"},
                                                          {"--algorithms", "ring"},
                                                          {"--dtype", "f64"},
                                                          {"--op", "min"},
                                                          {"--check"},
                                                          {"--warmup", "3"},
                                                          {"--sync", "none"},
                                                          {"--interleave"},
                                                          {"--families", "p2p"},
                                                          {"--workload", "resnet50:ddp"},
                                                          {"--timeout", "5"},
                                                          {"--debug-stuck-rank", "1"},
                                                          {"--debug-crash-rank", "1"}};
  const auto reference = configuration_fields(parse_options({}), {});
  for (const auto& variant : variants) {
    const auto fields = configuration_fields(parse_options(variant), {});
    ASSERT_EQ(fields.size(), reference.size());
    std::vector<std::string> differing;
    for (std::size_t i = 0; i < fields.size(); ++i) {
      if (fields[i] != reference[i]) differing.push_back(fields[i].first);
    }
    EXPECT_EQ(differing, std::vector<std::string>{variant.front()});
  }
  const auto with_flag = configuration_fields(parse_options({}), {{"--benchmark_min_time", "1"}});
  EXPECT_EQ(with_flag.back(), (std::pair<std::string, std::string>{"--benchmark_min_time", "1"}));
}

TEST(Options, HelpDocumentsUnitsDefaultsAndAlgorithms) {
  const std::string help = help_text();
  for (const char* text : {"default: 8B:64MiB", "KiB, MiB, GiB", "(default: f32)",
                           "MPI_Barrier, default", "--csv PATH", "--workload SPEC", "--warmup N",
                           "microseconds", "GB/s", "--debug-slow-rank"}) {
    EXPECT_NE(help.find(text), std::string::npos) << "help lacks: " << text;
  }
  for (const CollectiveInfo& collective : collectives()) {
    EXPECT_NE(help.find(std::string(collective.name) + ": "), std::string::npos) << collective.name;
    for (const AlgorithmInfo& algorithm : collective.algorithms) {
      EXPECT_NE(help.find(std::string(algorithm.name)), std::string::npos) << algorithm.name;
    }
  }
}

TEST(Options, ListAlgorithmsCsvIsTheRegistryOncePerNameInItsOrder) {
  const Options listing = parse_options({"--list-algorithms", "--csv"});
  EXPECT_TRUE(listing.list_algorithms);
  EXPECT_TRUE(listing.list_algorithms_csv);
  EXPECT_TRUE(listing.csv_path.empty());
  EXPECT_FALSE(parse_options({"--list-algorithms"}).list_algorithms_csv);

  const CsvTable table = parse_csv(algorithm_listing(true), "--list-algorithms --csv");
  EXPECT_EQ(table.header,
            (std::vector<std::string>{"order", "collective", "algorithm", "implementation",
                                      "cost_model", "reduces_on_every_rank", "summary"}));
  // Every (collective, algorithm) once, collectives in order, each one's
  // algorithms in theirs.
  std::vector<std::pair<const CollectiveInfo*, const AlgorithmInfo*>> registry;
  for (const CollectiveInfo& collective : collectives()) {
    for (const AlgorithmInfo& algorithm : collective.algorithms) {
      registry.emplace_back(&collective, &algorithm);
    }
  }
  ASSERT_EQ(table.rows.size(), registry.size());
  std::set<std::pair<std::string, std::string>> seen;
  for (std::size_t i = 0; i < registry.size(); ++i) {
    const std::vector<std::string>& row = table.rows[i];
    const auto& [collective, algorithm] = registry[i];
    const std::string name(algorithm->name);
    EXPECT_EQ(row[0], std::to_string(i + 1));
    EXPECT_EQ(row[1], collective->name);
    EXPECT_EQ(row[2], name);
    EXPECT_TRUE(seen.insert({row[1], row[2]}).second)
        << "listed twice: " << row[1] << " " << row[2];
    // The MPI library's own algorithm, by its choice or forced (ompi_*), has
    // no cost model of its own.
    const bool library = is_library_algorithm(*algorithm);
    EXPECT_EQ(row[3], library ? "mpi" : "hand-written") << name;
    EXPECT_EQ(row[4], library ? "no" : "yes") << name;
    EXPECT_EQ(row[5], algorithm->reduces_on_every_rank ? "yes" : "no") << name;
    EXPECT_EQ(row[6], algorithm->summary) << name;
  }
  // The text table names every algorithm too, one line each after its header.
  const std::string text = algorithm_listing(false);
  EXPECT_EQ(static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n')),
            registry.size() + 1);
}

TEST(Options, ABareCsvOnlyGoesWithListAlgorithms) {
  EXPECT_THROW(parse_options({"--csv"}), UsageError);
  EXPECT_THROW(parse_options({"--list-algorithms", "--csv", "run.csv"}), UsageError);
  EXPECT_THROW(parse_options({"--list-algorithms", "--list-providers"}), UsageError);
  EXPECT_EQ(parse_options({"--csv", "run.csv"}).csv_path, "run.csv");
}

TEST(Options, HelpIsFoundAnywhere) {
  EXPECT_TRUE(asks_for_help({"--sizes", "8B", "--help"}));
  EXPECT_TRUE(asks_for_help({"-h"}));
  EXPECT_FALSE(asks_for_help({"--sizes", "8B"}));
}

// --- --check data ---------------------------------------------------------------

// Inputs and expected values of collectives: tests/check_test.cpp and
// tests/check_mutation_test.cpp (the library's CheckPattern).

TEST(CheckData, BytePatternsCatchOneFlippedByte) {
  std::vector<std::byte> buffer(4096);
  fill_bytes(buffer, 3);
  EXPECT_EQ(check_bytes(buffer, 3).wrong, 0u);
  buffer[1234] ^= std::byte{0x10};
  const CheckResult result = check_bytes(buffer, 3);
  EXPECT_EQ(result.wrong, 1u);
  EXPECT_NE(result.first_mismatch.find("byte 1234"), std::string::npos);
  // The other direction of a ping-pong uses another seed: all bytes differ.
  // (A hashed pattern matches another seed's byte by chance 1 time in 256.)
  fill_bytes(buffer, 3);
  EXPECT_GT(check_bytes(buffer, 0).wrong, buffer.size() * 9 / 10);
}

// Misplaced chunks: the pattern must have no short period, so a message
// whose blocks are swapped or repeated, or another rank's data shifted, is
// caught (a pattern repeating every 256 bytes passes all three).
TEST(CheckData, BytePatternsCatchMisplacedChunks) {
  constexpr std::size_t kSize = 4096;
  const int seed = 3;
  std::vector<std::byte> expected(kSize);
  fill_bytes(expected, seed);

  std::vector<std::byte> swapped_halves(kSize);
  std::copy(expected.begin() + kSize / 2, expected.end(), swapped_halves.begin());
  std::copy(expected.begin(), expected.begin() + kSize / 2, swapped_halves.begin() + kSize / 2);
  EXPECT_GT(check_bytes(swapped_halves, seed).wrong, kSize / 2);

  std::vector<std::byte> repeated_block(kSize);
  for (std::size_t block = 0; block < kSize; block += 256) {
    std::copy(expected.begin(), expected.begin() + 256, repeated_block.begin() + block);
  }
  EXPECT_GT(check_bytes(repeated_block, seed).wrong, kSize / 2);

  std::vector<std::byte> other_seed(kSize + 101);
  fill_bytes(other_seed, 0);
  const std::span<const std::byte> shifted(other_seed.data() + 101, kSize);
  EXPECT_GT(check_bytes(shifted, seed).wrong, kSize / 2);
}

// 64 MiB must be cheap to fill and check (the largest --sizes of a sweep).
TEST(CheckData, BytePatternsOfLargeBuffersAreWholeAndDistinct) {
  std::vector<std::byte> buffer(std::size_t{64} << 20);
  fill_bytes(buffer, 5);
  EXPECT_EQ(check_bytes(buffer, 5).wrong, 0u);
  EXPECT_NE(std::vector<std::byte>(buffer.begin(), buffer.begin() + 8),
            std::vector<std::byte>(buffer.end() - 8, buffer.end()));
}

// --- planning -----------------------------------------------------------------

TEST(Plan, SizeMajorAllreduceThenP2pPerPeerThenLocal) {
  const Options options = parse_options({"--sizes", "8B,1KiB"});
  const CasePlan plan = plan_cases(options, {}, "mpi", 4, 0);
  std::vector<std::string> expected;
  for (const char* size : {"8", "1024"}) {
    for (const AlgorithmInfo& algorithm : allreduce().algorithms) {
      // The library's forced algorithms only with --library-algorithms.
      if (algorithm.forced_library_algorithm) continue;
      expected.push_back(fmt::format("allreduce/{}/{}", algorithm.name, size));
    }
  }
  for (const char* size : {"8", "1024"}) {
    for (int peer = 1; peer < 4; ++peer) {
      expected.push_back(fmt::format("p2p/pingpong/{}/peer:{}", size, peer));
    }
  }
  expected.insert(expected.end(), {"local/reduce/f32/8", "local/reduce/f32/1024", "local/memcpy/8",
                                   "local/memcpy/1024"});
  std::vector<std::string> names;
  for (const BenchmarkCase& entry : plan.cases) names.push_back(entry.name);
  EXPECT_EQ(names, expected);
  EXPECT_TRUE(plan.notes.empty());
}

// --library-algorithms adds every forced row of the library to --algorithms'
// selection, after it; named, a row that cannot run is an error, added by
// the flag it is a note.
TEST(Plan, LibraryAlgorithmsOnlyWhenAsked) {
  const auto allreduce_rows = [](const CasePlan& plan) {
    std::vector<std::string> names;
    for (const BenchmarkCase& entry : plan.cases) {
      if (entry.collective != nullptr && entry.collective->name == "allreduce") {
        names.push_back(std::string(entry.algorithm->name));
      }
    }
    return names;
  };
  const CasePlan plan = plan_cases(parse_options({"--sizes", "1KiB", "--families", "allreduce",
                                                  "--algorithms", "ring", "--library-algorithms"}),
                                   {}, "mpi", 2, 0);
  std::vector<std::string> expected = {"ring"};
  for (const AlgorithmInfo& algorithm : allreduce().algorithms) {
    if (algorithm.forced_library_algorithm) expected.emplace_back(algorithm.name);
  }
  EXPECT_EQ(allreduce_rows(plan), expected);
  // Without the flag: the table's allreduce rows but the forced ones.
  const auto everything_but_forced = [] {
    std::vector<std::string> names;
    for (const AlgorithmInfo& algorithm : allreduce().algorithms) {
      if (!algorithm.forced_library_algorithm) names.emplace_back(algorithm.name);
    }
    return names;
  };
  EXPECT_EQ(allreduce_rows(plan_cases(parse_options({"--sizes", "1KiB", "--families", "allreduce"}),
                                      {}, "mpi", 2, 0)),
            everything_but_forced());
  // Over another transport the forced rows cannot run: a note when added by
  // the flag, an error when named.
  const CasePlan inproc =
      plan_cases(parse_options({"--sizes", "1KiB", "--families", "allreduce", "--algorithms",
                                "ring", "--library-algorithms"}),
                 {}, "inproc", 2, 0);
  EXPECT_EQ(allreduce_rows(inproc), std::vector<std::string>{"ring"});
  EXPECT_FALSE(inproc.notes.empty());
  EXPECT_THROW(plan_cases(parse_options({"--sizes", "1KiB", "--families", "allreduce",
                                         "--algorithms", "ompi_ring"}),
                          {}, "inproc", 2, 0),
               UsageError);
}

TEST(Plan, SendrecvOnlyWhenNamedOnePerSizeAndNeedsTwoRanks) {
  // Not in the default list: the default sweep stays as it was.
  const CasePlan defaults = plan_cases(parse_options({"--sizes", "8B"}), {}, "mpi", 4, 0);
  for (const BenchmarkCase& entry : defaults.cases) {
    EXPECT_EQ(entry.name.find("sendrecv"), std::string::npos) << entry.name;
  }
  const CasePlan plan = plan_cases(parse_options({"--sizes", "8B,1MiB", "--families",
                                                  "sendrecv,allreduce", "--algorithms", "ring"}),
                                   {}, "mpi", 3, 0);
  std::vector<std::string> names;
  for (const BenchmarkCase& entry : plan.cases) {
    names.push_back(entry.name);
    if (entry.family != &sendrecv_family()) continue;
    EXPECT_EQ(entry.family_column(), "p2p");
    EXPECT_EQ(entry.peer, -1);
    EXPECT_DOUBLE_EQ(entry.bus_bandwidth_factor(3), 1.0);
  }
  EXPECT_EQ(names, (std::vector<std::string>{"allreduce/ring/8", "allreduce/ring/1048576",
                                             "p2p/sendrecv/8", "p2p/sendrecv/1048576"}));
  const CasePlan alone =
      plan_cases(parse_options({"--sizes", "64B", "--families", "sendrecv"}), {}, "mpi", 1, 0);
  EXPECT_TRUE(alone.cases.empty());
  EXPECT_EQ(alone.notes,
            (std::vector<std::string>{"skipping p2p/sendrecv: it needs at least 2 ranks"}));
}

TEST(Plan, BarrierHasNoSizeAndTwoAlgorithms) {
  // --sizes does not multiply it: a barrier has no size.
  const CasePlan plan =
      plan_cases(parse_options({"--sizes", "8B,1MiB", "--families", "barrier"}), {}, "mpi", 3, 0);
  std::vector<std::string> names;
  for (const BenchmarkCase& entry : plan.cases) {
    names.push_back(entry.name);
    EXPECT_EQ(entry.family_column(), "barrier");
    EXPECT_EQ(entry.name, "barrier/" + entry.algorithm_column());
    EXPECT_EQ(entry.bytes(), 0u);
    EXPECT_EQ(entry.collective_column(), "");
    EXPECT_TRUE(entry.family->every_rank_timed());
    EXPECT_TRUE(entry.family->through_transport());
    EXPECT_FALSE(entry.family->batched());
    EXPECT_FALSE(entry.family->has_dtype());
  }
  EXPECT_EQ(names, (std::vector<std::string>{"barrier/communicator", "barrier/dissemination"}));
  EXPECT_TRUE(plan.notes.empty());
  // Not in the default list.
  for (const BenchmarkCase& entry : plan_cases(parse_options({}), {}, "mpi", 3, 0).cases) {
    EXPECT_NE(entry.family_column(), "barrier") << entry.name;
  }
  const CasePlan alone = plan_cases(parse_options({"--families", "barrier"}), {}, "mpi", 1, 0);
  ASSERT_EQ(alone.cases.size(), 1u);
  EXPECT_EQ(alone.cases.front().name, "barrier/communicator");
  EXPECT_EQ(
      alone.notes,
      (std::vector<std::string>{"skipping barrier/dissemination: at 1 rank it sends nothing"}));
  if (find_single_process_transport("sim") == nullptr) GTEST_SKIP() << "built without SimGrid";
  // The simulator's own barrier costs no simulated time: only the messages'.
  const CasePlan simulated = plan_cases(parse_options({"--families", "barrier"}), {}, "sim", 8, 0);
  ASSERT_EQ(simulated.cases.size(), 1u);
  EXPECT_EQ(simulated.cases.front().name, "barrier/dissemination");
  ASSERT_EQ(simulated.notes.size(), 1u);
  EXPECT_NE(simulated.notes.front().find("skipping barrier/communicator"), std::string::npos);
}

TEST(Plan, MpiBareBeyondMpisIntCountIsANote) {
  // 16 GiB of f32 is 2^32 elements: MPI_Allreduce's int count cannot say it.
  const CasePlan plan = plan_cases(
      parse_options({"--sizes", "1KiB,16GiB", "--families", "mpi_bare", "--algorithms", "ring"}),
      {}, "mpi", 2, 0);
  std::vector<std::string> names;
  for (const BenchmarkCase& entry : plan.cases) names.push_back(entry.name);
  EXPECT_EQ(names, (std::vector<std::string>{"allreduce/mpi_bare/1024"}));
  ASSERT_EQ(plan.notes.size(), 1u);
  EXPECT_EQ(plan.notes[0],
            "skipping allreduce/mpi_bare on 2 ranks (16 GiB): 4294967296 elements exceed MPI's "
            "int count");
}

TEST(Plan, UnsupportedIsANoteInAllAndAnErrorWhenNamed) {
  // The MPI library's allreduce needs the MPI transport.
  ASSERT_FALSE(allreduce().find_algorithm("mpi")->unsupported_reason("inproc", 4, 16).empty());
  const CasePlan plan = plan_cases(parse_options({"--sizes", "64B"}), {}, "inproc", 4, 0);
  ASSERT_EQ(plan.notes.size(), 1u);
  EXPECT_NE(plan.notes[0].find("skipping allreduce/mpi on 4 ranks (64 B)"), std::string::npos)
      << plan.notes[0];
  for (const BenchmarkCase& entry : plan.cases)
    EXPECT_EQ(entry.name.find("/mpi/"), std::string::npos);
  try {
    plan_cases(parse_options({"--sizes", "64B", "--algorithms", "ring,mpi"}), {}, "inproc", 4, 0);
    ADD_FAILURE() << "an explicitly named unsupported algorithm was accepted";
  } catch (const UsageError& error) {
    EXPECT_NE(std::string(error.what())
                  .find("algorithm 'allreduce/mpi' cannot run 64 B of f32 on 4 ranks"),
              std::string::npos)
        << error.what();
  }
  const CasePlan alone = plan_cases(parse_options({"--sizes", "64B"}), {}, "mpi", 1, 0);
  EXPECT_NE(std::find(alone.notes.begin(), alone.notes.end(),
                      "skipping p2p/pingpong: it needs at least 2 ranks"),
            alone.notes.end());
}

TEST(Plan, HierarchicalNeedsAsManyRanksOnEveryNode) {
  // 3 ranks on 2 nodes (2 + 1): a note in an `all` sweep, an error when named.
  const std::vector<int> uneven = {0, 0, 1};
  const CasePlan plan = plan_cases(
      parse_options({"--sizes", "64B", "--families", "allreduce,reduce_scatter,allgather"}), {},
      "mpi", 3, 0, uneven);
  const auto noted = [&](std::string_view algorithm) {
    return std::any_of(plan.notes.begin(), plan.notes.end(), [&](const std::string& note) {
      return note.find(fmt::format("skipping {} on 3 ranks", algorithm)) == 0 &&
             note.find("the 2 nodes run 2, 1 ranks") != std::string::npos;
    });
  };
  EXPECT_TRUE(noted("allreduce/hierarchical"));
  EXPECT_TRUE(noted("allreduce/hierarchical_tree"));
  EXPECT_TRUE(noted("reduce_scatter/hierarchical"));
  EXPECT_TRUE(noted("allgather/hierarchical"));
  for (const BenchmarkCase& entry : plan.cases) {
    EXPECT_EQ(entry.name.find("hierarchical"), std::string::npos) << entry.name;
  }
  EXPECT_THROW(plan_cases(parse_options({"--sizes", "64B", "--algorithms", "hierarchical"}), {},
                          "mpi", 3, 0, uneven),
               UsageError);
  // 2 + 2, by node: planned.
  const CasePlan even =
      plan_cases(parse_options({"--sizes", "64B", "--algorithms", "hierarchical"}), {}, "mpi", 4, 0,
                 {0, 1, 0, 1});
  EXPECT_FALSE(even.cases.empty());
}

TEST(Metadata, MapByNamesThePlacement) {
  RunMetadata metadata;
  const auto map_by = [&](std::vector<int> nodes, int node_count, int per_node) {
    metadata.rank_nodes = std::move(nodes);
    metadata.ranks = static_cast<int>(metadata.rank_nodes.size());
    metadata.nodes = node_count;
    metadata.ranks_per_node = per_node;
    return metadata.map_by();
  };
  EXPECT_EQ(map_by({0, 0, 1, 1}, 2, 2), "slot");
  EXPECT_EQ(map_by({0, 1, 0, 1}, 2, 2), "node");
  EXPECT_EQ(map_by({0, 1, 2}, 3, 1), "slot");
  EXPECT_EQ(map_by({0, 0, 0}, 1, 3), "slot");
  EXPECT_EQ(map_by({0, 0, 1}, 2, 2), "other");
  EXPECT_EQ(map_by({0, 1, 1, 0}, 2, 2), "other");
  EXPECT_EQ(map_by({0, 0, 1, 1, 0, 1}, 2, 3), "other");
}

TEST(Plan, MemoryGuardNamesTheBenchmarkAndTheNumbers) {
  const Options options = parse_options({"--sizes", "1KiB,4MiB", "--algorithms", "ring"});
  const BenchmarkCase probe = [] {
    BenchmarkCase entry;
    entry.collective = &allreduce();
    entry.algorithm = allreduce().find_algorithm("ring");
    entry.message_bytes = {std::uint64_t{4} << 20};
    return entry;
  }();
  const std::uint64_t needed = probe.memory_bytes(4);
  EXPECT_GE(needed, std::uint64_t{8} << 20);  // in and out at least
  EXPECT_NO_THROW(plan_cases(options, {}, "mpi", 4, needed));
  try {
    plan_cases(options, {}, "mpi", 4, needed - 1);
    ADD_FAILURE() << "the memory guard let a too-large benchmark through";
  } catch (const UsageError& error) {
    EXPECT_NE(std::string(error.what()).find("allreduce/ring/4194304 needs"), std::string::npos)
        << error.what();
  }
}

TEST(Plan, MemoryGuardSaturatesInsteadOfWrapping) {
  // 2^63 bytes: twice that (in and out) wraps to 0 in 64 bits, and the
  // guard once let it through to a late allocation failure and MPI_Abort.
  for (const std::uint64_t limit : {std::uint64_t{0}, std::uint64_t{1} << 30}) {
    try {
      plan_cases(parse_options({"--sizes", "8388608TiB", "--families", "local"}), {}, "mpi", 1,
                 limit);
      ADD_FAILURE() << "8388608TiB planned with a memory limit of " << limit;
    } catch (const UsageError& error) {
      EXPECT_NE(std::string(error.what())
                    .find("local/reduce/f32/9223372036854775808 needs more than 16 EiB per rank"),
                std::string::npos)
          << error.what();
    }
  }
  // ps_central's workspace, message x (ranks - 1), wraps for 2^62 bytes on 5 ranks.
  BenchmarkCase central;
  central.collective = &allreduce();
  central.algorithm = allreduce().find_algorithm("ps_central");
  central.message_bytes = {std::uint64_t{1} << 62};
  EXPECT_EQ(central.memory_bytes(5), kSaturatedBytes);
  central.message_bytes = {std::uint64_t{1} << 62, std::uint64_t{1} << 62};
  EXPECT_EQ(central.bytes(), std::uint64_t{1} << 63);
  central.message_bytes = {std::uint64_t{1} << 63, std::uint64_t{1} << 63};
  EXPECT_EQ(central.bytes(), kSaturatedBytes);
}

TEST(Plan, WorkloadAddsDistinctSizesAndOneExchangePerAlgorithm) {
  const std::vector<Workload> workloads = {parse_workload("googlenet:ddp", 2)};
  const Options options =
      parse_options({"--dtype", "f16", "--workload", "googlenet:ddp", "--algorithms", "ring,tree"});
  const CasePlan plan = plan_cases(options, workloads, "mpi", 3, 0);
  const Workload& workload = workloads.front();
  std::size_t per_size = 0;
  std::size_t exchanges = 0;
  std::uint64_t multiplicity = 0;
  for (const BenchmarkCase& entry : plan.cases) {
    if (entry.family == &collective_family()) {
      // Only the workload's sizes: --sizes was not given.
      EXPECT_EQ(entry.workload, workload.spec) << entry.name;
      EXPECT_EQ(entry.model, "googlenet");
      if (entry.algorithm->name == "ring")
        multiplicity += static_cast<std::uint64_t>(entry.multiplicity);
      ++per_size;
    } else if (entry.family == &exchange_family()) {
      std::vector<std::uint64_t> sequence;
      for (const Message& message : workload.sequence) sequence.push_back(message.bytes);
      EXPECT_EQ(entry.message_bytes, sequence);
      EXPECT_EQ(entry.name, fmt::format("exchange/{}/{}", entry.algorithm->name, workload.spec));
      ++exchanges;
    }
  }
  EXPECT_EQ(per_size, 2 * workload.distinct.size());
  EXPECT_EQ(multiplicity, workload.sequence.size());
  EXPECT_EQ(exchanges, 2u);
}

TEST(Plan, WorkloadSizesGoToTheirOwnCollectiveAndExchangesMixThem) {
  const std::vector<Workload> workloads = {parse_workload("resnet50:fsdp", 2),
                                           parse_workload("gpt2:tp=2:seq=16", 2)};
  const Options options =
      parse_options({"--dtype", "bf16", "--families", "allreduce,reduce_scatter,allgather,exchange",
                     "--algorithms", "ring,recursive_doubling", "--workload", "resnet50:fsdp",
                     "--workload", "gpt2:tp=2:seq=16"});
  const CasePlan plan = plan_cases(options, workloads, "mpi", 3, 0);
  // Per collective and workload, the names and sizes the plan holds.
  std::set<std::string> planned;
  std::set<std::string> exchanges;
  for (const BenchmarkCase& entry : plan.cases) {
    if (entry.family != &exchange_family()) {
      planned.insert(entry.name);
      continue;
    }
    exchanges.insert(entry.name);
    const Workload& workload =
        *std::find_if(workloads.begin(), workloads.end(),
                      [&](const Workload& w) { return w.spec == entry.workload; });
    ASSERT_EQ(entry.message_bytes.size(), workload.sequence.size()) << entry.name;
    for (std::size_t k = 0; k < workload.sequence.size(); ++k) {
      // Each message by its own collective's algorithm of the name.
      EXPECT_EQ(entry.collective_of(k).name, workload.sequence[k].collective) << entry.name << k;
      EXPECT_EQ(entry.algorithm_of(k).name, entry.algorithm->name);
      EXPECT_EQ(&entry.algorithm_of(k),
                entry.collective_of(k).find_algorithm(entry.algorithm->name));
    }
  }
  std::set<std::string> expected;
  for (const Workload& workload : workloads) {
    for (const Message& message : workload.distinct) {
      for (const std::string_view algorithm : {"ring", "recursive_doubling"}) {
        if (find_collective(message.collective)->find_algorithm(algorithm) == nullptr) continue;
        expected.insert(fmt::format("{}/{}/{}/{}", message.collective, algorithm, message.bytes,
                                    workload.spec));
      }
    }
  }
  EXPECT_EQ(planned, expected);
  // resnet50:fsdp's allgathers and reduce_scatters share only `ring`
  // (reduce_scatter has no recursive_doubling); gpt2:tp=2 allreduces only.
  EXPECT_EQ(exchanges,
            (std::set<std::string>{"exchange/ring/resnet50:fsdp=block:bf16",
                                   "exchange/ring/gpt2:tp=2:batch=1:seq=16:bf16",
                                   "exchange/recursive_doubling/gpt2:tp=2:batch=1:seq=16:bf16"}));
  for (const BenchmarkCase& entry : plan.cases) {
    if (entry.name != "exchange/ring/resnet50:fsdp=block:bf16") continue;
    EXPECT_EQ(entry.collective_column(), "allgather+reduce_scatter");
    EXPECT_TRUE(entry.reduces());
    // Allgathers and reduce_scatters both have busbw factor (p−1)/p.
    EXPECT_DOUBLE_EQ(entry.bus_bandwidth_factor(3), 2.0 / 3);
  }
}

TEST(Plan, WorkloadCollectivesAreTheTablesInItsOrder) {
  // The catalog spells the collectives of its messages without depending
  // on the collectives library; here the two meet.
  std::size_t previous = 0;
  for (const std::string_view name : kWorkloadCollectives) {
    const CollectiveInfo* collective = find_collective(name);
    ASSERT_NE(collective, nullptr) << name;
    const auto position = static_cast<std::size_t>(collective - collectives().data());
    EXPECT_GE(position, previous) << name;
    previous = position;
  }
}

TEST(Options, CollectivesNamesEveryCollectiveOfTheTable) {
  const Options options = parse_options({"--families", "p2p,collectives,allgather"});
  std::vector<std::string> expected = {"p2p"};
  for (const CollectiveInfo& collective : collectives()) expected.emplace_back(collective.name);
  EXPECT_EQ(options.families, expected);
}

TEST(Plan, ExchangeMessagesOfOneLargeSizeAndCollectiveShareTheirBuffers) {
  const CollectiveInfo& allgather = *find_collective("allgather");
  const CollectiveInfo& reduce_scatter = *find_collective("reduce_scatter");
  BenchmarkCase entry;
  entry.family = &exchange_family();
  entry.collective = &allgather;
  entry.algorithm = allgather.find_algorithm("ring");
  const std::uint64_t large = kSharedMessageBytes;
  const std::uint64_t small = kSharedMessageBytes - 4;
  // allgather large, allgather small, allgather large, reduce_scatter
  // large, allgather small, reduce_scatter large.
  entry.message_bytes = {large, small, large, large, small, large};
  entry.message_collectives = {&allgather,      &allgather, &allgather,
                               &reduce_scatter, &allgather, &reduce_scatter};
  EXPECT_EQ(entry.message_slots(), (std::vector<std::size_t>{0, 1, 0, 3, 4, 3}));
  // Memory: the four distinct messages' buffers and workspaces only.
  BenchmarkCase distinct = entry;
  distinct.message_bytes = {large, small, large, small};
  distinct.message_collectives = {&allgather, &allgather, &reduce_scatter, &allgather};
  EXPECT_EQ(entry.memory_bytes(4), distinct.memory_bytes(4));
}

TEST(Plan, AlltoallvMessagesShareOnlyWithTheirRoutingAndCountTheirSkewedShares) {
  // A MoE iteration: dispatch, combine, dispatch, combine of one size. The
  // two directions' layouts differ, so only like shares like.
  const CollectiveInfo& alltoallv = *find_collective("alltoallv");
  BenchmarkCase entry;
  entry.family = &exchange_family();
  entry.collective = &alltoallv;
  entry.algorithm = alltoallv.find_algorithm("pairwise");
  const std::uint64_t large = kSharedMessageBytes;
  entry.message_bytes = {large, large, large, large};
  entry.message_routings = {{1.5, false}, {1.5, true}, {1.5, false}, {1.5, true}};
  EXPECT_EQ(entry.message_slots(), (std::vector<std::size_t>{0, 1, 0, 1}));
  // Uniform, each side holds n; skewed, rank 0's expert side holds p·s_0 > n,
  // and the memory check counts it.
  BenchmarkCase uniform = entry;
  uniform.message_routings = {{0, false}, {0, true}, {0, false}, {0, true}};
  EXPECT_EQ(uniform.memory_bytes(4), 2 * 2 * large);  // two slots, in and out each
  EXPECT_GT(entry.memory_bytes(4), uniform.memory_bytes(4));
  CollectiveSpec skewed;
  skewed.count = large;
  skewed.routing = {1.5, false};
  const std::uint64_t rank0_side = 4 * alltoallv_share(skewed, 4, 0);
  EXPECT_EQ(entry.memory_bytes(4) - uniform.memory_bytes(4), 2 * (rank0_side - large));
}

TEST(Plan, MpiAlltoallvWhoseExpertSideExceedsMpiIntsIsANote) {
  // 10^9 elements dispatched at skew 2 on 4 ranks: rank 0's expert side
  // holds 4 · 0.70 · 10^9 elements, past MPI's int counts, though the count
  // itself is not; uniform, it holds 10^9 and MPI can run it.
  for (const double skew : {2.0, 0.0}) {
    Workload workload;
    workload.spec = "moe";
    Message dispatch{"alltoallv", "dispatch", 1'000'000'000, 4'000'000'000, 1};
    dispatch.routing_skew = skew;
    workload.sequence = {dispatch};
    workload.distinct = workload.sequence;
    const Options options = parse_options({"--families", "alltoallv", "--workload", "moe"});
    const CasePlan plan = plan_cases(options, {workload}, "mpi", 4, 0);
    std::vector<std::string> names;
    for (const BenchmarkCase& entry : plan.cases) names.push_back(entry.name);
    if (skew > 0) {
      EXPECT_EQ(names, (std::vector<std::string>{"alltoallv/pairwise/4000000000/moe"}));
      ASSERT_EQ(plan.notes.size(), 1u);
      EXPECT_NE(plan.notes[0].find("skipping alltoallv/mpi on 4 ranks"), std::string::npos)
          << plan.notes[0];
    } else {
      EXPECT_EQ(names, (std::vector<std::string>{"alltoallv/pairwise/4000000000/moe",
                                                 "alltoallv/mpi/4000000000/moe"}));
    }
  }
}

TEST(Plan, WorkloadSizeThatIsNoWholeNumberOfElementsIsANote) {
  // A bf16 message of 3 elements (6 bytes) cannot be f32 elements.
  Workload workload;
  workload.spec = "odd";
  workload.sequence = {{"allreduce", "odd", 3, 6, 1}, {"allreduce", "even", 4, 8, 1}};
  workload.distinct = workload.sequence;
  const Options options = parse_options(
      {"--families", "allreduce,exchange", "--algorithms", "ring", "--workload", "odd"});
  const CasePlan plan = plan_cases(options, {workload}, "mpi", 2, 0);
  ASSERT_EQ(plan.cases.size(), 1u);
  EXPECT_EQ(plan.cases[0].name, "allreduce/ring/8/odd");
  EXPECT_EQ(plan.notes, (std::vector<std::string>{
                            "skipping allreduce/odd on 2 ranks (6 B): not a whole number of f32 "
                            "elements; run with the workload's dtype",
                            "skipping exchange/odd on 2 ranks (6 B): not a whole number of f32 "
                            "elements; run with the workload's dtype"}));
}

// --- CSV row and reporter -------------------------------------------------------

benchmark::BenchmarkReporter::Run make_run(const std::string& name, std::int64_t repetition,
                                           double median_us) {
  benchmark::BenchmarkReporter::Run run;
  run.run_name.function_name = name;
  run.run_type = benchmark::BenchmarkReporter::Run::RT_Iteration;
  run.repetition_index = repetition;
  run.iterations = 40;
  for (const char* counter : {"min_us", "median_us", "mean_us", "p99_us", "max_us"}) {
    run.counters[counter] = benchmark::Counter(median_us);
  }
  run.counters["algbw_GBps"] = benchmark::Counter(0.25);
  run.counters["busbw_GBps"] = benchmark::Counter(0.375);
  run.counters["sent_bytes_per_rank"] = benchmark::Counter(1536);
  run.counters["calls_per_sample"] = benchmark::Counter(1);
  return run;
}

struct RowFixture {
  Options options = parse_options({"--check"});
  RunMetadata metadata;
  RowContext context;
  RowFixture() {
    metadata.run_id = "20250101T000000Z-abcdef";
    metadata.git_revision = "v0-test";
    metadata.rank_hosts = {"node-a", "node-a", "node-b"};
    metadata.hosts = "node-a;node-b";
    metadata.ranks = 3;
    metadata.nodes = 2;
    metadata.ranks_per_node = 2;
    metadata.mpi_library = "Open MPI v4.1.4, package: Debian";
    metadata.mpi_mca = "pml=ob1;btl=self,vader";
    context.transport = "mpi";
    context.reduce_kernel = "baseline";
    context.options = &options;
    context.metadata = &metadata;
  }
  std::string field(const std::vector<std::string>& row, const std::string& column) const {
    const auto& columns = csv_columns();
    const auto at = std::find(columns.begin(), columns.end(), column);
    EXPECT_NE(at, columns.end()) << column;
    return row.at(static_cast<std::size_t>(at - columns.begin()));
  }
};

TEST(CsvRow, AllreduceRowCarriesVariablesStatisticsAndMetadata) {
  RowFixture fixture;
  BenchmarkCase entry;
  entry.name = "allreduce/ring/1024";
  entry.collective = &allreduce();
  entry.algorithm = allreduce().find_algorithm("ring");
  entry.message_bytes = {1024};
  entry.checked = true;
  const auto row =
      csv_row(entry, make_run(entry.name, 1, 12.5), fixture.context, "2025-01-01T00:00:01Z");
  ASSERT_EQ(row.size(), csv_columns().size());
  EXPECT_EQ(fixture.field(row, "benchmark"), "allreduce/ring/1024");
  EXPECT_EQ(fixture.field(row, "family"), "allreduce");
  EXPECT_EQ(fixture.field(row, "algorithm"), "ring");
  EXPECT_EQ(fixture.field(row, "bytes"), "1024");
  EXPECT_EQ(fixture.field(row, "count"), "256");
  EXPECT_EQ(fixture.field(row, "dtype"), "f32");
  EXPECT_EQ(fixture.field(row, "ranks"), "3");
  EXPECT_EQ(fixture.field(row, "nodes"), "2");
  EXPECT_EQ(fixture.field(row, "repetition"), "1");
  EXPECT_EQ(fixture.field(row, "iterations"), "40");
  EXPECT_EQ(fixture.field(row, "median_us"), "12.5");
  EXPECT_EQ(fixture.field(row, "busbw_GBps"), "0.375");
  EXPECT_EQ(fixture.field(row, "sent_bytes_per_rank"), "1536");
  EXPECT_EQ(fixture.field(row, "check"), "ok");
  EXPECT_EQ(fixture.field(row, "wrong_elements"), "0");
  EXPECT_EQ(fixture.field(row, "peer"), "");
  EXPECT_EQ(fixture.field(row, "mpi_library"), "Open MPI v4.1.4, package: Debian");
  EXPECT_EQ(fixture.field(row, "mpi_mca"), "pml=ob1;btl=self,vader");
  EXPECT_EQ(fixture.field(row, "utc_time"), "2025-01-01T00:00:01Z");
  // Not measured (one rank, or ranks 0 and 1 on different nodes): empty.
  EXPECT_EQ(fixture.field(row, "core_handoff_ns"), "");
  auto probed = make_run(entry.name, 1, 12.5);
  probed.counters["core_handoff_ns"] = benchmark::Counter(183.26);
  const auto probed_row = csv_row(entry, probed, fixture.context, "2025-01-01T00:00:01Z");
  EXPECT_EQ(fixture.field(probed_row, "core_handoff_ns"), "183.3");
}

TEST(CsvRow, SamplesFloorAndPerRankColumns) {
  RowFixture fixture;
  BenchmarkCase entry;
  entry.name = "allreduce/ring/1024";
  entry.collective = &allreduce();
  entry.algorithm = allreduce().find_algorithm("ring");
  entry.message_bytes = {1024};
  auto run = make_run(entry.name, 0, 12.5);
  run.counters["samples"] = benchmark::Counter(40);
  run.counters["slowest_rank"] = benchmark::Counter(2);
  run.counters["slowest_rank_share"] = benchmark::Counter(0.925);
  run.report_label = rank_median_label({10.5e-6, 11e-6, 2512.25e-6});
  EXPECT_EQ(run.report_label, "rank_median_us=10.5;11;2512.25");
  const auto row = csv_row(entry, run, fixture.context, "t");
  EXPECT_EQ(fixture.field(row, "samples"), "40");
  EXPECT_EQ(fixture.field(row, "min_samples"), "10");  // the default floor
  EXPECT_EQ(fixture.field(row, "slowest_rank"), "2");
  EXPECT_EQ(fixture.field(row, "slowest_rank_share"), "0.925");
  EXPECT_EQ(fixture.field(row, "rank_median_us"), "10.5;11;2512.25");
  // --samples: the floor column is the fixed count.
  fixture.options = parse_options({"--samples", "5"});
  EXPECT_EQ(fixture.field(csv_row(entry, run, fixture.context, "t"), "min_samples"), "5");
  // A ping-pong row (rank 0's time alone) has no label and no per-rank data.
  BenchmarkCase p2p;
  p2p.name = "p2p/pingpong/8/peer:1";
  p2p.family = &pingpong_family();
  p2p.message_bytes = {8};
  p2p.peer = 1;
  const auto p2p_row = csv_row(p2p, make_run(p2p.name, 0, 1), fixture.context, "t");
  EXPECT_EQ(fixture.field(p2p_row, "slowest_rank"), "");
  EXPECT_EQ(fixture.field(p2p_row, "rank_median_us"), "");
  EXPECT_FALSE(pingpong_family().every_rank_timed());
  EXPECT_FALSE(local_reduce_family().every_rank_timed());
  EXPECT_TRUE(local_reduce_all_family().every_rank_timed());
  EXPECT_TRUE(sendrecv_family().every_rank_timed());
  EXPECT_TRUE(exchange_family().every_rank_timed());
}

TEST(CsvRow, FailedCheckKeepsTheCountAndLeavesTimingsEmpty) {
  RowFixture fixture;
  BenchmarkCase entry;
  entry.name = "allreduce/tree/64";
  entry.collective = &allreduce();
  entry.algorithm = allreduce().find_algorithm("tree");
  entry.message_bytes = {64};
  entry.checked = true;
  entry.wrong_elements = 7;
  auto run = make_run(entry.name, 0, 3);
  run.error_occurred = true;
  run.counters.clear();
  const auto row = csv_row(entry, run, fixture.context, "t");
  EXPECT_EQ(fixture.field(row, "check"), "wrong");
  EXPECT_EQ(fixture.field(row, "wrong_elements"), "7");
  EXPECT_EQ(fixture.field(row, "median_us"), "");
  EXPECT_EQ(fixture.field(row, "iterations"), "");
}

TEST(CsvRow, P2pHasPeerAndPlacementLocalHasNoTransport) {
  RowFixture fixture;
  BenchmarkCase p2p;
  p2p.name = "p2p/pingpong/8/peer:2";
  p2p.family = &pingpong_family();
  p2p.message_bytes = {8};
  p2p.peer = 2;
  const auto row = csv_row(p2p, make_run(p2p.name, 0, 1), fixture.context, "t");
  EXPECT_EQ(fixture.field(row, "peer"), "2");
  EXPECT_EQ(fixture.field(row, "placement"), "inter");  // node-a vs node-b
  EXPECT_EQ(fixture.field(row, "algorithm"), "pingpong");
  EXPECT_EQ(fixture.field(row, "dtype"), "");
  EXPECT_EQ(fixture.field(row, "check"), "skipped");
  BenchmarkCase memcpy_case;
  memcpy_case.name = "local/memcpy/8";
  memcpy_case.family = &local_memcpy_family();
  memcpy_case.message_bytes = {8};
  const auto local = csv_row(memcpy_case, make_run(memcpy_case.name, 0, 1), fixture.context, "t");
  EXPECT_EQ(fixture.field(local, "transport"), "local");
  EXPECT_EQ(fixture.field(local, "family"), "local");
  EXPECT_EQ(fixture.field(local, "algorithm"), "memcpy");
  EXPECT_EQ(fixture.metadata.placement(0, 1), "intra");
}

// The gemm check compares sampled outputs with exact dot products: a right
// pass passes, and outputs never computed, stale or of the other pass fail.
TEST(GemmProducts, CheckPassesTheProductsAndCatchesWhatWasNotComputed) {
  const GemmShape shape{.m = 37, .n = 19, .k = 23, .count = 3};
  GemmProducts forward(shape, /*data_gradient=*/true, /*backward=*/false);
  forward.fill();
  forward.forward();
  const CheckResult right = forward.check(false);
  EXPECT_EQ(right.wrong, 0u) << right.first_mismatch;
  EXPECT_EQ(right.checked, 3u * 16u);
  forward.fill();  // C back to its inputs: a pass that never ran
  EXPECT_GT(forward.check(false).wrong, 0u);

  GemmProducts backward(shape, /*data_gradient=*/true, /*backward=*/true);
  backward.fill();
  backward.backward();
  const CheckResult both = backward.check(true);
  EXPECT_EQ(both.wrong, 0u) << both.first_mismatch;
  EXPECT_EQ(both.checked, 2u * 3u * 16u);  // dB and dA
  backward.fill();
  backward.forward();  // the wrong pass: dB untouched, A refilled
  EXPECT_GT(backward.check(true).wrong, 0u);

  // A first convolution's backward computes dB alone; dA is not checked.
  GemmProducts first_layer(shape, /*data_gradient=*/false, /*backward=*/true);
  first_layer.fill();
  first_layer.backward();
  const CheckResult weight_only = first_layer.check(true);
  EXPECT_EQ(weight_only.wrong, 0u) << weight_only.first_mismatch;
  EXPECT_EQ(weight_only.checked, 3u * 16u);
}

TEST(Options, GemmBatchesAreSortedDoublingsOrAsListed) {
  const Options defaults = parse_options({"--families", "gemm"});
  EXPECT_EQ(defaults.gemm_batches, (std::vector<int>{1, 2, 4, 8, 16, 32, 64, 128, 256}));
  const Options listed = parse_options({"--families", "gemm", "--gemm-batches", "12,3,4:16,3",
                                        "--gemm-models", "bert_base,alexnet,bert_base"});
  EXPECT_EQ(listed.gemm_batches, (std::vector<int>{3, 4, 8, 12, 16}));
  EXPECT_EQ(listed.gemm_models, (std::vector<std::string>{"bert_base", "alexnet"}));
  // A:B doubles A up to B, as --help says: not the powers of two in [A, B].
  EXPECT_EQ(parse_options({"--families", "gemm", "--gemm-batches", "3:12"}).gemm_batches,
            (std::vector<int>{3, 6, 12}));
  EXPECT_NE(help_text().find("A:B for A, 2A, 4A, ... up to B"), std::string::npos);
}

TEST(Plan, GemmIsThePeakThenEachDistinctLayerPerBatchAndPass) {
  const Options options =
      parse_options({"--families", "gemm", "--gemm-models", "resnet50", "--gemm-batches", "1,4"});
  const CasePlan plan = plan_cases(options, {}, "mpi", 2, 0);
  const Model& model = find_model("resnet50");
  const std::vector<DistinctGemm> distinct = distinct_gemm_layers(model);
  ASSERT_EQ(plan.cases.size(), 1 + 2 * 2 * distinct.size());
  EXPECT_EQ(plan.cases.front().name, "local/gemm/peak/2048");
  EXPECT_EQ(plan.cases.front().pass, "peak");
  int layers = 0;
  for (const BenchmarkCase& entry : plan.cases) {
    EXPECT_EQ(entry.family, &local_gemm_family());
    if (entry.pass != "forward" || entry.batch != 4) continue;
    layers += entry.multiplicity;
    const GemmLayer& layer =
        *std::find_if(model.gemm_layers.begin(), model.gemm_layers.end(),
                      [&](const GemmLayer& candidate) { return candidate.name == entry.item; });
    // The case runs the layer's products at the batch as they are.
    EXPECT_EQ(entry.gemm.per_sample.m, 4 * layer.per_sample.m) << entry.name;
    EXPECT_EQ(entry.flops(), 2.0 * 4 * static_cast<double>(layer.per_sample.multiply_adds()));
    EXPECT_EQ(entry.name, fmt::format("local/gemm/resnet50/4/forward/{}", layer.name));
  }
  EXPECT_EQ(layers, static_cast<int>(model.gemm_layers.size()));
  const auto conv1_backward =
      std::find_if(plan.cases.begin(), plan.cases.end(), [](const BenchmarkCase& entry) {
        return entry.name == "local/gemm/resnet50/1/backward/conv1";
      });
  ASSERT_NE(conv1_backward, plan.cases.end());
  // No data gradient for the image: the weight gradient's FLOPs alone.
  EXPECT_EQ(conv1_backward->flops(),
            2.0 * static_cast<double>(model.gemm_layers.front().per_sample.multiply_adds()));
}

TEST(Plan, TrainIsComputeOnlyThenEveryAlgorithmWithTheExchangesBefore) {
  const std::vector<Workload> workloads = {parse_workload("resnet50:ddp", 4),
                                           parse_workload("resnet50:fsdp", 4)};
  const Options options =
      parse_options({"--families", "train", "--workload", "resnet50:ddp", "--workload",
                     "resnet50:fsdp", "--algorithms", "ring,mpi", "--train-batch", "8"});
  const CasePlan plan = plan_cases(options, workloads, "mpi", 2, 0);
  std::vector<std::string> names;
  for (const BenchmarkCase& entry : plan.cases) names.push_back(entry.name);
  const std::string ddp = workloads.front().spec;
  const std::string fsdp = workloads.back().spec;
  EXPECT_EQ(names, (std::vector<std::string>{
                       fmt::format("exchange/ring/{}", ddp), fmt::format("exchange/mpi/{}", ddp),
                       fmt::format("exchange/ring/{}", fsdp), fmt::format("exchange/mpi/{}", fsdp),
                       fmt::format("train/none/{}", ddp), fmt::format("train/ring/{}", ddp),
                       fmt::format("train/mpi/{}", ddp), fmt::format("train/none/{}", fsdp),
                       fmt::format("train/ring/{}", fsdp), fmt::format("train/mpi/{}", fsdp)}));
  const Model& model = find_model("resnet50");
  const std::vector<Bucket> buckets = ddp_buckets(model, 4);
  for (const BenchmarkCase& entry : plan.cases) {
    if (entry.family != &train_family() || entry.workload != ddp) continue;
    EXPECT_EQ(entry.compute_only, entry.name.find("/none/") != std::string::npos);
    EXPECT_EQ(entry.batch, 8);
    ASSERT_EQ(entry.bucket_ready_layers.size(), buckets.size());
    ASSERT_EQ(entry.message_bytes.size(), buckets.size());
    for (std::size_t k = 0; k < buckets.size(); ++k) {
      EXPECT_EQ(entry.message_bytes[k], buckets[k].bytes);
      // Ready after the earliest layer of its tensors; later buckets never earlier.
      std::size_t ready = model.gemm_layers.size();
      for (std::size_t t = buckets[k].first_tensor;
           t < buckets[k].first_tensor + buckets[k].tensor_count; ++t) {
        ready = std::min(ready, model.tensors_backprop_order[t].ready_after_gemm_layer);
      }
      EXPECT_EQ(entry.bucket_ready_layers[k], ready);
      if (k > 0) {
        EXPECT_LE(entry.bucket_ready_layers[k], entry.bucket_ready_layers[k - 1]);
      }
    }
    EXPECT_EQ(entry.bucket_ready_layers.back(), 0u);  // conv1's gradient comes last
    // Its GEMM buffers count against the memory guard.
    EXPECT_GT(entry.memory_bytes(2), entry.compute_bytes);
    EXPECT_GT(entry.compute_bytes, std::uint64_t{100} << 20);
  }
}

// train/ring/<spec> of a plan of --families train on `spec` at p = 4.
BenchmarkCase sharded_train_case(const Workload& workload) {
  const Options options =
      parse_options({"--families", "train", "--workload", workload.spec, "--algorithms", "ring"});
  const CasePlan plan = plan_cases(options, {workload}, "mpi", 4, 0);
  for (const BenchmarkCase& entry : plan.cases) {
    if (entry.name == "train/ring/" + workload.spec) return entry;
  }
  ADD_FAILURE() << "no train/ring/" << workload.spec;
  return {};
}

// Where each kind of step is in a train case's steps, per index.
struct StepPlaces {
  std::vector<std::size_t> forward, backward, hand, wait;  // SIZE_MAX: none
};
StepPlaces step_places(const BenchmarkCase& entry, std::size_t layers) {
  constexpr std::size_t kNone = std::numeric_limits<std::size_t>::max();
  StepPlaces places{std::vector<std::size_t>(layers, kNone),
                    std::vector<std::size_t>(layers, kNone),
                    std::vector<std::size_t>(entry.message_bytes.size(), kNone),
                    std::vector<std::size_t>(entry.message_bytes.size(), kNone)};
  for (std::size_t k = 0; k < entry.train_steps.size(); ++k) {
    const TrainStep& step = entry.train_steps[k];
    std::vector<std::size_t>& place = step.kind == TrainStep::Kind::forward    ? places.forward
                                      : step.kind == TrainStep::Kind::backward ? places.backward
                                      : step.kind == TrainStep::Kind::hand     ? places.hand
                                                                               : places.wait;
    EXPECT_EQ(place.at(step.index), kNone) << entry.name << ": step " << k << " repeats";
    place.at(step.index) = k;
  }
  return places;
}

TEST(Plan, TrainShardedWorkloadsSendTheCatalogsMessages) {
  // :f32, so that every message is a whole number of the run's f32 elements.
  for (const char* spec :
       {"resnet50:fsdp:f32", "bert_base:fsdp:f32", "llama2_7b:fsdp:f32", "resnet50:fsdp=model:f32",
        "resnet50:zero2:f32", "bert_base:zero2=20000000:f32"}) {
    const Workload workload = parse_workload(spec, 4);
    const BenchmarkCase entry = sharded_train_case(workload);
    ASSERT_EQ(entry.message_bytes.size(), workload.sequence.size()) << spec;
    ASSERT_EQ(entry.message_items.size(), workload.sequence.size()) << spec;
    ASSERT_FALSE(entry.message_collectives.empty()) << spec;
    // The same messages, in the order the iteration hands them over.
    using Sent = std::tuple<std::string, std::uint64_t, std::string>;
    std::vector<Sent> sent;
    std::vector<Sent> listed;
    for (std::size_t k = 0; k < entry.message_bytes.size(); ++k) {
      sent.emplace_back(entry.collective_of(k).name, entry.message_bytes[k],
                        entry.message_items[k]);
      const Message& message = workload.sequence[k];
      listed.emplace_back(message.collective, message.bytes, message.item);
    }
    std::sort(sent.begin(), sent.end());
    std::sort(listed.begin(), listed.end());
    EXPECT_EQ(sent, listed) << spec;
    // Every layer forward once, then backward once; every message handed
    // once, in order, and waited for only after it was handed.
    const std::size_t layers = find_model(workload.model).gemm_layers.size();
    const StepPlaces places = step_places(entry, layers);
    for (std::size_t layer = 0; layer < layers; ++layer) {
      EXPECT_LT(places.forward[layer], places.backward[layers - 1]) << spec << " layer " << layer;
      if (layer > 0) {
        EXPECT_LT(places.forward[layer - 1], places.forward[layer]) << spec;
        EXPECT_GT(places.backward[layer - 1], places.backward[layer]) << spec;
      }
    }
    for (std::size_t k = 0; k < places.hand.size(); ++k) {
      if (k > 0) {
        EXPECT_LT(places.hand[k - 1], places.hand[k]) << spec;
      }
      if (places.wait[k] != std::numeric_limits<std::size_t>::max()) {
        EXPECT_LT(places.hand[k], places.wait[k]) << spec << " message " << k;
      }
    }
  }
}

TEST(Plan, TrainFsdpGathersEachUnitBeforeItsComputeAndPrefetchesTheNext) {
  for (const char* spec : {"resnet50:fsdp:f32", "bert_base:fsdp:f32"}) {
    const Workload workload = parse_workload(spec, 4);
    const Model& model = find_model(workload.model);
    const BenchmarkCase entry = sharded_train_case(workload);
    const StepPlaces places = step_places(entry, model.gemm_layers.size());
    const auto message = [&](const std::string& item) {
      const auto found = std::find(entry.message_items.begin(), entry.message_items.end(), item);
      EXPECT_NE(found, entry.message_items.end()) << spec << ": no " << item;
      return static_cast<std::size_t>(found - entry.message_items.begin());
    };
    const std::vector<FlatUnit> units = fsdp_units(model, FsdpUnit::block);
    for (std::size_t unit = 1; unit < units.size(); ++unit) {
      const std::string& name = units[unit].name;
      std::size_t first = model.gemm_layers.size();
      std::size_t last = 0;
      for (std::size_t layer = 0; layer < model.gemm_layers.size(); ++layer) {
        if (model.gemm_layers[layer].name.starts_with(name + ".")) {
          first = std::min(first, layer);
          last = std::max(last, layer);
        }
      }
      ASSERT_LT(first, model.gemm_layers.size()) << name;
      const std::size_t gather = message(name + " forward");
      const std::size_t regather = message(name + " backward");
      const std::size_t reduce = message(name + " gradients");
      // Its parameters are there before its first forward and backward.
      EXPECT_LT(places.wait[gather], places.forward[first]) << name;
      EXPECT_LT(places.wait[regather], places.backward[last]) << name;
      // Its gradients go when its backward is done, not before.
      EXPECT_GT(places.hand[reduce], places.backward[first]) << name;
      // The next unit's gather goes before this one's compute waits: it runs
      // while this unit computes (forward prefetch, BACKWARD_PRE).
      if (unit + 1 < units.size()) {
        EXPECT_LT(places.hand[message(units[unit + 1].name + " forward")], places.wait[gather])
            << name;
      }
      if (unit > 1) {
        EXPECT_LT(places.hand[message(units[unit - 1].name + " backward")], places.wait[regather])
            << name;
      }
    }
  }
}

TEST(Plan, TrainZero2GathersTheParametersAfterTheLastShardIsReduced) {
  const Workload workload = parse_workload("bert_base:zero2=20000000:f32", 4);
  const BenchmarkCase entry = sharded_train_case(workload);
  const std::size_t messages = entry.message_bytes.size();
  ASSERT_GT(messages, 2u);
  const StepPlaces places = step_places(entry, find_model("bert_base").gemm_layers.size());
  EXPECT_EQ(entry.collective_of(messages - 1).name, "allgather");
  EXPECT_LT(places.wait[messages - 2], places.hand[messages - 1]);
  EXPECT_EQ(entry.train_steps.back(), (TrainStep{TrainStep::Kind::wait, messages - 1}));
  // The first buckets go while backprop still runs.
  EXPECT_LT(places.hand[0], places.backward[0]);
}

TEST(Plan, TrainRefusesFsdpWithoutUnitsOrACommonAlgorithm) {
  const auto refusal = [](const std::string& spec, const char* algorithms) {
    const Workload workload = parse_workload(spec, 4);
    const Options options = parse_options(
        {"--families", "train", "--workload", workload.spec, "--algorithms", algorithms});
    try {
      plan_cases(options, {workload}, "mpi", 4, 0);
    } catch (const UsageError& error) {
      return std::string(error.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(refusal("vgg16:fsdp:f32", "ring").find("the catalog has no FSDP units for vgg16"),
            std::string::npos);
  EXPECT_NE(refusal("resnet50:fsdp:f32", "tree").find("no selected allgather and reduce_scatter"),
            std::string::npos);
  // The whole model as one unit needs none.
  EXPECT_EQ(sharded_train_case(parse_workload("vgg16:fsdp=model:f32", 4)).message_bytes.size(), 2u);
}

TEST(CsvRow, GemmRowsCarryBatchPassRateAndEfficiency) {
  RowFixture fixture;
  fixture.context.blas = "OpenBLAS test";
  const Options options =
      parse_options({"--families", "gemm", "--gemm-models", "alexnet", "--gemm-batches", "2"});
  const CasePlan plan = plan_cases(options, {}, "mpi", 2, 0);
  const BenchmarkCase& entry = plan.cases.at(1);
  EarlierRows earlier;
  earlier.peak_gflops = 100;
  // flops / (median 1000 µs) = flops / 1e6 GFLOP/s.
  const auto row = csv_row(entry, make_run(entry.name, 0, 1000), fixture.context, "t", earlier);
  const double gflops = entry.flops() / 1e6;
  EXPECT_EQ(fixture.field(row, "family"), "local");
  EXPECT_EQ(fixture.field(row, "algorithm"), "gemm");
  EXPECT_EQ(fixture.field(row, "dtype"), "f32");
  EXPECT_EQ(fixture.field(row, "batch"), "2");
  EXPECT_EQ(fixture.field(row, "pass"), "forward");
  EXPECT_EQ(fixture.field(row, "model"), "alexnet");
  EXPECT_EQ(fixture.field(row, "blas"), "OpenBLAS test");
  EXPECT_EQ(fixture.field(row, "reduce_kernel"), "");
  EXPECT_DOUBLE_EQ(std::stod(fixture.field(row, "flops")), entry.flops());
  EXPECT_NEAR(std::stod(fixture.field(row, "gflops")), gflops, gflops * 1e-5);
  EXPECT_NEAR(std::stod(fixture.field(row, "efficiency")), gflops / 100, gflops * 1e-6);
  // No peak yet: no efficiency.
  EXPECT_EQ(fixture.field(csv_row(entry, make_run(entry.name, 0, 1000), fixture.context, "t"),
                          "efficiency"),
            "");
}

TEST(CsvRow, TrainRowsTakeComputeAndCommunicationFromTheirEarlierRows) {
  RowFixture fixture;
  BenchmarkCase entry;
  entry.family = &train_family();
  entry.collective = &allreduce();
  entry.algorithm = allreduce().find_algorithm("ring");
  entry.name = "train/ring/resnet50:ddp=25MiB";
  entry.workload = "resnet50:ddp=25MiB";
  entry.message_bytes = {1024, 2048};
  EarlierRows earlier;
  earlier.median_us["train/none/resnet50:ddp=25MiB"] = 800;
  earlier.median_us["exchange/ring/resnet50:ddp=25MiB"] = 400;
  earlier.median_us["exchange/tree/resnet50:ddp=25MiB"] = 1;  // another algorithm's
  // 900 µs: 100 of the 400 exposed, 3/4 hidden.
  const auto row = csv_row(entry, make_run(entry.name, 0, 900), fixture.context, "t", earlier);
  EXPECT_EQ(fixture.field(row, "family"), "train");
  EXPECT_EQ(fixture.field(row, "algorithm"), "ring");
  EXPECT_EQ(fixture.field(row, "collective"), "allreduce");
  EXPECT_EQ(fixture.field(row, "compute_us"), "800");
  EXPECT_EQ(fixture.field(row, "communication_us"), "400");
  EXPECT_EQ(fixture.field(row, "exposed_us"), "100");
  EXPECT_EQ(fixture.field(row, "overlap"), "0.75");
  // Nothing hidden, and slower than compute + communication: overlap < 0.
  const auto serial = csv_row(entry, make_run(entry.name, 0, 1300), fixture.context, "t", earlier);
  EXPECT_EQ(fixture.field(serial, "overlap"), "-0.25");
  // Without its exchange row the shares are unknown, not made up.
  earlier.median_us.erase("exchange/ring/resnet50:ddp=25MiB");
  const auto alone = csv_row(entry, make_run(entry.name, 0, 900), fixture.context, "t", earlier);
  EXPECT_EQ(fixture.field(alone, "communication_us"), "");
  EXPECT_EQ(fixture.field(alone, "overlap"), "");
  BenchmarkCase none = entry;
  none.compute_only = true;
  none.name = "train/none/resnet50:ddp=25MiB";
  const auto compute = csv_row(none, make_run(none.name, 0, 800), fixture.context, "t", earlier);
  EXPECT_EQ(fixture.field(compute, "algorithm"), "none");
  EXPECT_EQ(fixture.field(compute, "compute_us"), "800");
  EXPECT_EQ(fixture.field(compute, "exposed_us"), "");
}

TEST(CsvRow, EveryFamilyNamesItsFamilyAndAlgorithmColumns) {
  // Each runner names its own columns; a case planned with another's
  // runner shows here as the other's names.
  struct Expected {
    const FamilyRunner* family;
    const char* family_column;
    const char* algorithm_column;
  };
  for (const Expected& expected : {Expected{&pingpong_family(), "p2p", "pingpong"},
                                   Expected{&sendrecv_family(), "p2p", "sendrecv"},
                                   Expected{&local_reduce_family(), "local", "reduce"},
                                   Expected{&local_reduce_all_family(), "local", "reduce_all"},
                                   Expected{&local_memcpy_family(), "local", "memcpy"},
                                   Expected{&local_gemm_family(), "local", "gemm"}}) {
    BenchmarkCase entry;
    entry.family = expected.family;
    entry.message_bytes = {8};
    EXPECT_EQ(entry.family_column(), expected.family_column) << expected.algorithm_column;
    EXPECT_EQ(entry.algorithm_column(), expected.algorithm_column);
  }
  BenchmarkCase exchange;
  exchange.family = &exchange_family();
  exchange.collective = &allreduce();
  exchange.algorithm = allreduce().find_algorithm("tree");
  EXPECT_EQ(exchange.family_column(), "exchange");
  EXPECT_EQ(exchange.algorithm_column(), "tree");
  BenchmarkCase bare = exchange;
  bare.family = &collective_family();
  bare.algorithm = allreduce().find_algorithm(kMpiLibraryAlgorithm);
  bare.bare = true;
  EXPECT_EQ(bare.family_column(), "allreduce");
  EXPECT_EQ(bare.algorithm_column(), "mpi_bare");
}

TEST(CsvRow, SendrecvIsP2pWithTheChainsPlacementAndNoPeer) {
  RowFixture fixture;
  BenchmarkCase entry;
  entry.name = "p2p/sendrecv/8";
  entry.family = &sendrecv_family();
  entry.message_bytes = {8};
  const auto row = csv_row(entry, make_run(entry.name, 0, 1), fixture.context, "t");
  EXPECT_EQ(fixture.field(row, "family"), "p2p");
  EXPECT_EQ(fixture.field(row, "algorithm"), "sendrecv");
  EXPECT_EQ(fixture.field(row, "peer"), "");
  EXPECT_EQ(fixture.field(row, "dtype"), "");
  // node-a, node-a, node-b: rank 1's right neighbour is on another host,
  // though rank 0's is not.
  EXPECT_EQ(fixture.field(row, "placement"), "inter");
  fixture.metadata.rank_hosts = {"node-a", "node-a", "node-a"};
  EXPECT_EQ(
      fixture.field(csv_row(entry, make_run(entry.name, 0, 1), fixture.context, "t"), "placement"),
      "intra");
}

// Records what the wrapped display reporter receives.
class RecordingReporter final : public benchmark::BenchmarkReporter {
 public:
  bool ReportContext(const Context&) override { return true; }
  void ReportRuns(const std::vector<Run>& runs) override {
    received += runs.size();
    for (const Run& run : runs) aggregates += run.run_type == Run::RT_Aggregate ? 1 : 0;
  }
  std::size_t received = 0;
  std::size_t aggregates = 0;
};

TEST(Reporter, WritesAFlushedRowPerRepetitionAndNoAggregates) {
  RowFixture fixture;
  const std::string path =
      (std::filesystem::temp_directory_path() / fmt::format("harness_reporter_{}.csv", getpid()))
          .string();
  std::filesystem::remove(path);
  BenchmarkCase entry;
  entry.name = "allreduce/ring/1024";
  entry.collective = &allreduce();
  entry.algorithm = allreduce().find_algorithm("ring");
  entry.message_bytes = {1024};
  {
    CsvWriter writer(path, csv_columns());
    RecordingReporter display;
    Progress progress(false, 1);
    RankZeroReporter reporter(&display, &writer, {{entry.name, &entry}}, fixture.context, progress);
    auto aggregate = make_run(entry.name, 0, 11);
    aggregate.run_type = benchmark::BenchmarkReporter::Run::RT_Aggregate;
    aggregate.aggregate_name = "mean";
    reporter.ReportRuns({make_run(entry.name, 0, 10), make_run(entry.name, 1, 12), aggregate});
    EXPECT_EQ(display.received, 3u);
    EXPECT_EQ(reporter.rows_written(), 2u);
    // Rows are on disk before the reporter or the writer goes away.
    const CsvTable table = read_csv_file(path);
    EXPECT_EQ(table.header, csv_columns());
    ASSERT_EQ(table.rows.size(), 2u);
    const int repetition = table.column("repetition");
    EXPECT_EQ(table.rows[0][static_cast<std::size_t>(repetition)], "0");
    EXPECT_EQ(table.rows[1][static_cast<std::size_t>(repetition)], "1");
    // A run of a benchmark the harness did not register is a bug, not a row.
    EXPECT_THROW(reporter.ReportRuns({make_run("allreduce/none/1", 0, 1)}), std::logic_error);
  }
  std::filesystem::remove(path);
}

TEST(Reporter, AggregatesOnlyDisplaysAggregatesButTheCsvKeepsEveryRepetition) {
  // main registers every benchmark so that Google Benchmark hands this
  // reporter the runs even under --benchmark_*_aggregates_only; the reporter
  // then shows the aggregates alone, or the runs of a benchmark without any.
  RowFixture fixture;
  const std::string path =
      (std::filesystem::temp_directory_path() / fmt::format("harness_aggregates_{}.csv", getpid()))
          .string();
  std::filesystem::remove(path);
  BenchmarkCase repeated, single;
  repeated.name = "allreduce/ring/1024";
  single.name = "allreduce/ring/2048";
  for (BenchmarkCase* entry : {&repeated, &single}) {
    entry->collective = &allreduce();
    entry->algorithm = allreduce().find_algorithm("ring");
    entry->message_bytes = {1024};
  }
  {
    CsvWriter writer(path, csv_columns());
    RecordingReporter display;
    Progress progress(false, 2);
    RankZeroReporter reporter(&display, &writer,
                              {{repeated.name, &repeated}, {single.name, &single}}, fixture.context,
                              progress, /*display_aggregates_only=*/true);
    auto mean = make_run(repeated.name, 0, 11);
    mean.run_type = benchmark::BenchmarkReporter::Run::RT_Aggregate;
    mean.aggregate_name = "mean";
    // Google Benchmark: the runs, then (with 2 repetitions or more) the aggregates.
    reporter.ReportRuns({make_run(repeated.name, 0, 10), make_run(repeated.name, 1, 12)});
    reporter.ReportRuns({mean});
    reporter.ReportRuns({make_run(single.name, 0, 10)});
    EXPECT_EQ(display.received, 1u);  // the single run waits: aggregates may follow
    reporter.Finalize();
    EXPECT_EQ(display.received, 2u);
    EXPECT_EQ(display.aggregates, 1u);
    EXPECT_EQ(reporter.rows_written(), 3u);
  }
  EXPECT_EQ(read_csv_file(path).rows.size(), 3u);
  std::filesystem::remove(path);
}

TEST(Metadata, RunIdsAreUniqueAndFolderSafe) {
  const std::string first = make_run_id();
  const std::string second = make_run_id();
  EXPECT_NE(first, second);
  EXPECT_EQ(first.size(), std::string("20250101T120000Z-3f9a1c").size());
  EXPECT_NO_THROW(parse_options({"--run-id", first}));
  EXPECT_EQ(utc_now_iso8601().size(), std::string("2025-01-01T12:00:00Z").size());
  EXPECT_GT(node_available_memory(), 0u);
}

// What `mpirun --mca pml cm --mca mtl ofi --mca mtl_ofi_provider_include tcp`
// exports to every rank becomes the rows' mpi_mca, in a fixed order; unset
// or empty parameters are left out.
TEST(Metadata, OpenMpiTransportSelectionComesFromTheEnvironment) {
  const char* names[] = {"OMPI_MCA_pml", "OMPI_MCA_btl", "OMPI_MCA_mtl",
                         "OMPI_MCA_mtl_ofi_provider_include"};
  std::vector<std::pair<std::string, std::optional<std::string>>> saved;
  for (const char* name : names) {
    const char* value = std::getenv(name);
    saved.emplace_back(name, value ? std::optional<std::string>(value) : std::nullopt);
    unsetenv(name);
  }
  EXPECT_EQ(open_mpi_transport_selection(), "");
  setenv("OMPI_MCA_mtl_ofi_provider_include", "tcp", 1);
  setenv("OMPI_MCA_mtl", "ofi", 1);
  setenv("OMPI_MCA_pml", "cm", 1);
  setenv("OMPI_MCA_btl", "", 1);
  EXPECT_EQ(open_mpi_transport_selection(), "pml=cm;mtl=ofi;mtl_ofi_provider_include=tcp");
  setenv("OMPI_MCA_btl", "self,tcp", 1);
  unsetenv("OMPI_MCA_mtl");
  unsetenv("OMPI_MCA_mtl_ofi_provider_include");
  setenv("OMPI_MCA_pml", "ob1", 1);
  EXPECT_EQ(open_mpi_transport_selection(), "pml=ob1;btl=self,tcp");
  for (const auto& [name, value] : saved) {
    if (value) {
      setenv(name.c_str(), value->c_str(), 1);
    } else {
      unsetenv(name.c_str());
    }
  }
}

}  // namespace
}  // namespace collbench::harness
