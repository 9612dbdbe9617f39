// collbench: the Google Benchmark harness for collective communication,
// launched under mpirun/srun on any number of ranks, or, with a transport
// whose ranks all run in one process (`--transport inproc --ranks N`,
// single_process.h), started alone: then MPI is never initialized, and this
// process is every rank (the Runner drives them, families.h).
//
// Every rank parses the same arguments, checks that all ranks got the same
// configuration, registers the same benchmarks and runs them in lock-step;
// rank 0 reports (console or JSON, and the tidy CSV), the others use a null
// reporter. Bad input is one line on stderr from rank 0 and exit status 2,
// before any output file is created; a --check failure is exit status 1.
#include <benchmark/benchmark.h>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <mpi.h>
#include <regex.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <map>
#include <optional>
#include <set>
#include <string_view>

#include "collbench/catalog/workload.h"
#include "collbench/collectives/mpi_library.h"
#include "collbench/core/csv.h"
#include "collbench/core/malloc_name.h"
#include "collbench/core/reduce.h"
#include "collbench/transport/bootstrap.h"
#include "collbench/transport/mpi_transport.h"
#include "collbench/transport/transport_factory.h"
#include "families.h"
#include "family_registry.h"
#include "gemm_family.h"
#include "google_benchmark_setup.h"
#include "metadata.h"
#include "options.h"
#include "output_files.h"
#include "process_signals.h"
#include "progress.h"
#include "reporter.h"
#include "simulation_malloc.h"
#include "single_process.h"
#include "standard_output.h"
#include "train_family.h"
#include "world.h"
#ifdef COLLBENCH_HAVE_OFI
#include "collbench/transport/ofi_transport.h"
#endif

namespace collbench::harness {
namespace {

constexpr int kUsageStatus = 2;
constexpr int kFailureStatus = 1;

void print_help() {
  std::fputs(help_text().c_str(), stdout);
  std::fputs(
      "\nGoogle Benchmark flags (each checked before the run: an unknown flag or bad value is "
      "refused with status 2; --benchmark_enable_random_interleaving is refused because ranks "
      "must run in the same order; with --benchmark_report_aggregates_only or "
      "--benchmark_display_aggregates_only the --csv still gets every repetition's row):\n",
      stdout);
  std::fflush(stdout);
  benchmark::PrintDefaultHelp();
  std::fflush(stdout);
}

// What every rank has agreed on and prepared before the first benchmark.
struct RunSetup {
  std::vector<std::pair<std::string, std::string>> benchmark_flags;
  BenchmarkOut out;
  Options options;
  // --interleave: each benchmark is registered once per round, with one
  // repetition (Google Benchmark runs a benchmark's repetitions back to back).
  int rounds = 1;
  std::vector<Workload> workloads;
  std::unique_ptr<InstrumentedTransport> transport;  // under MPI: this process's rank's
  std::unique_ptr<RankGroup> group;                  // without: every rank, in this process
  RunMetadata metadata;
  CasePlan plan;
  std::size_t selected = 0;        // of plan.cases, by --benchmark_filter
  bool list_only = false;          // --benchmark_list_tests
  std::unique_ptr<CsvWriter> csv;  // rank 0's --csv, when given and not list_only
};

std::string read_benchmark_flags(const std::vector<std::string>& args, RunSetup& setup) {
  try {
    setup.benchmark_flags = benchmark_run_flags(args);
  } catch (const UsageError& usage) {
    return usage.what();
  }
  return {};
}

// collbench's options, checked against the rank count and, on rank 0, the
// output paths. Without MPI the rank count is --ranks. Returns the error,
// or empty.
std::string parse_and_check_options(World& world, const std::vector<std::string>& remaining,
                                    const std::vector<std::string>& args, RunSetup& setup) {
  Options& options = setup.options;
  std::string error;
  try {
    options = parse_options(remaining);
    validate_single_process(options, setup.benchmark_flags);
    if (find_single_process_transport(options.transport) != nullptr) {
      const std::string what = fmt::format(
          "--transport {} runs every rank in this one process (--ranks N)", options.transport);
      if (std::string problem = launch_problem(world, what); !problem.empty()) {
        throw UsageError(problem);
      }
      world.size = options.ranks;
    }
    if (!options.bootstrap_folder().empty()) {
      const std::string what = fmt::format(
          "--bootstrap {} meets ranks started one by one (--rank R)", options.bootstrap);
      if (std::string problem = launch_problem(world, what); !problem.empty()) {
        throw UsageError(problem);
      }
      open_bootstrap(world, options);
    }
    validate_for_ranks(options, world.size);
    configure_blas(options.blas_threads);
    if (world.rank == 0) error = shared_output_problem(options, args);
    if (world.rank == 0 && error.empty()) error = benchmark_out_problem(args, options);
    if (world.rank == 0 && error.empty()) error = timeline_problem(options);
    setup.rounds = options.interleave ? benchmark_repetitions(setup.benchmark_flags) : 1;
  } catch (const UsageError& usage) {
    error = usage.what();
  }
  return error;
}

std::string configuration_problem(const World& world, const RunSetup& setup) {
  auto fields = configuration_fields(setup.options, setup.benchmark_flags);
  // Ranks launched from different builds would register different lists. The
  // git revision names the source; the executable's digest tells apart two
  // builds of one uncommitted ("-dirty") tree.
  fields.emplace_back("collbench build (git revision)", build_git_revision());
  fields.emplace_back("collbench executable (FNV-1a of /proc/self/exe)", executable_digest());
  return compare_configurations(world, fields);
}

// --list-providers and --list-algorithms print on rank 0 and end the run
// (status 0); otherwise nothing.
std::optional<int> print_listing(const World& world, const Options& options) {
  if (options.list_providers) {
    if (world.rank == 0) {
#ifdef COLLBENCH_HAVE_OFI
      std::fputs(ofi_list_providers().c_str(), stdout);
#else
      std::puts(
          "libfabric is absent from this build: collbench was built without the OFI "
          "transport (install libfabric-dev and reconfigure with -DCOLLBENCH_WITH_OFI=ON)");
#endif
    }
    return 0;
  }
  if (options.list_algorithms) {
    if (world.rank == 0) std::fputs(algorithm_listing(options.list_algorithms_csv).c_str(), stdout);
    return 0;
  }
  return std::nullopt;
}

// The --workload specs expanded, each distinct workload once.
std::string read_workloads(RunSetup& setup) {
  const Options& options = setup.options;
  std::vector<Workload>& workloads = setup.workloads;
  std::set<std::string> workload_specs;
  try {
    for (const std::string& spec : options.workloads) {
      for (Workload& workload : parse_workloads(spec, dtype_size(options.dtype))) {
        if (workload_specs.insert(workload.spec).second) workloads.push_back(std::move(workload));
      }
    }
  } catch (const std::invalid_argument& invalid) {
    return fmt::format("--workload: {}", invalid.what());
  }
  if (options.families == std::vector<std::string>{"exchange"} && workloads.empty()) {
    return "--families exchange registers nothing without --workload SPEC";
  }
  return {};
}

// The CSV's transport column: the kind of the ranks' transport.
std::string transport_kind(const RunSetup& setup) {
  return std::string(setup.group ? setup.group->kind() : setup.transport->kind());
}

std::string open_transport(const World& world, RunSetup& setup) {
  const Options& options = setup.options;
  if (const SingleProcessTransport* single = find_single_process_transport(options.transport)) {
    try {
      setup.group = single->make_group(options);
    } catch (const std::exception& failure) {
      // Its first line: SimGrid lists every config key after "Bad config key: x".
      const std::string_view why = failure.what();
      return fmt::format("--transport {} --ranks {}: {}", options.transport, options.ranks,
                         why.substr(0, why.find('\n')));
    }
    return {};
  }
  try {
#ifdef COLLBENCH_HAVE_OFI
    // The file bootstrap exchanges the libfabric transport's addresses.
    if (world.bootstrap) {
      setup.transport = std::make_unique<InstrumentedTransport>(
          std::make_unique<OfiTransport>(*world.bootstrap, options.ofi_provider));
    }
#endif
    if (!setup.transport) {
      setup.transport = make_transport({options.transport, options.ofi_provider, MPI_COMM_WORLD});
    }
    setup.transport->set_timeout(start_up_timeout(options, world.size));
  } catch (const std::exception& failure) {
    return fmt::format(
        "--transport {}{}: {}", options.transport,
        options.ofi_provider.empty() ? "" : " --ofi-provider " + options.ofi_provider,
        failure.what());
  }
  return {};
}

// What Google Benchmark appends to each registered name: an explicit
// Repetitions(1) (--interleave) shows as "repeats:1".
std::string registered_name_suffix(const Options& options) {
  return options.interleave ? "/repeats:1/manual_time" : "/manual_time";
}

// The benchmarks of this configuration, and how many of them
// --benchmark_filter selects: an error when there are none.
std::string plan_benchmarks(const World& world, RunSetup& setup) {
  const Options& options = setup.options;
  CasePlan& plan = setup.plan;
  try {
    plan = plan_cases(options, setup.workloads, transport_kind(setup), world.size,
                      agreed_memory_limit(world, setup.metadata), setup.metadata.rank_nodes);
  } catch (const UsageError& usage) {
    return usage.what();
  }
  const bool trains = std::any_of(plan.cases.begin(), plan.cases.end(), [](const auto& entry) {
    return entry.family == &train_family();
  });
  // Ranks of one process have no MPI (the sim transport's train runs in
  // one actor per rank, without a thread).
  if (trains && find_single_process_transport(options.transport) == nullptr &&
      world.thread_level < MPI_THREAD_SERIALIZED) {
    return fmt::format(
        "--families train runs each bucket's exchange on a thread of its own and needs "
        "MPI_THREAD_SERIALIZED; this MPI library provides thread level {} (0 single, 1 "
        "funneled, 2 serialized, 3 multiple)",
        world.thread_level);
  }
  const std::string name_suffix = registered_name_suffix(options);
  try {
    setup.selected = count_selected(plan, name_suffix);
    if (plan.cases.empty()) {
      return "nothing to run: no family and algorithm of this configuration can run here" +
             (plan.notes.empty() ? std::string()
                                 : " (" + fmt::format("{}", fmt::join(plan.notes, "; ")) + ")");
    }
    if (setup.selected == 0) {
      return fmt::format(
          "--benchmark_filter={} selects none of the {} benchmarks (names look like "
          "{}{})",
          benchmark::GetBenchmarkFilter(), plan.cases.size(), plan.cases.front().name, name_suffix);
    }
    // Written at the end: refused now rather than as an empty trace then.
    if (!options.timeline_path.empty() && count_selected(plan, name_suffix, &train_family()) == 0) {
      return fmt::format(
          "--timeline {}: --benchmark_filter={} selects no train benchmark, so the timeline would "
          "be empty; select a train/... benchmark or leave out --timeline",
          options.timeline_path, benchmark::GetBenchmarkFilter());
    }
  } catch (const UsageError& usage) {
    return usage.what();
  }
  return {};
}

void print_notes(const World& world, const CasePlan& plan) {
  if (world.rank == 0) {
    for (const std::string& note : plan.notes) fmt::print(stderr, "collbench: note: {}\n", note);
    std::fflush(stderr);
  }
}

// Rank 0's --csv, opened (or, for a dry run, only its path checked).
std::string open_csv(const World& world, RunSetup& setup) {
  const Options& options = setup.options;
  if (world.rank != 0 || options.csv_path.empty()) return {};
  if (std::string problem = csv_path_problem(options); !problem.empty()) return problem;
  if (setup.list_only) {
    if (std::filesystem::exists(options.csv_path) && !options.append && !options.force) {
      return fmt::format(
          "--csv: {} already exists; choose another path, or pass --append or "
          "--force",
          options.csv_path);
    }
    return {};
  }
  try {
    const ExistingFile policy = options.append  ? ExistingFile::append
                                : options.force ? ExistingFile::overwrite
                                                : ExistingFile::refuse;
    setup.csv = std::make_unique<CsvWriter>(options.csv_path, csv_columns(), policy);
  } catch (const std::exception& failure) {
    return fmt::format("--csv: {}{}", failure.what(),
                       options.append || options.force ? "" : " (use --append or --force)");
  }
  return {};
}

// Every step up to the first benchmark, each ending in an agreement: a bad
// input on any rank ends the run on all of them (status 2) before any
// benchmark runs. Returns the exit status when the run ends here, nothing
// when the benchmarks are to run.
std::optional<int> set_up(World& world, int argc, char** argv, const std::vector<std::string>& args,
                          RunSetup& setup) {
  std::string error = read_benchmark_flags(args, setup);
  setup.out = benchmark_out_of(args);
  const std::vector<std::string> remaining =
      initialize_google_benchmark(world, argc, argv, args, setup.out, error.empty());
  if (error.empty()) error = parse_and_check_options(world, remaining, args, setup);
  if (!all_ranks_ok(world, error)) return kUsageStatus;
  if (!all_ranks_ok(world, configuration_problem(world, setup))) return kUsageStatus;
  if (const std::optional<int> listed = print_listing(world, setup.options)) return listed;
  if (!all_ranks_ok(world, read_workloads(setup))) return kUsageStatus;
  if (!all_ranks_ok(world, open_transport(world, setup))) return kUsageStatus;
  if (world.mpi) {
    setup.metadata =
        gather_metadata(world.comm, setup.options.run_id, setup.options.transport == "ofi");
    setup.transport->set_nodes(setup.metadata.rank_nodes);
  } else if (world.bootstrap) {
    setup.metadata = bootstrap_metadata(*world.bootstrap, setup.options.run_id);
    setup.transport->set_nodes(setup.metadata.rank_nodes);
  } else {
    // The group's transports know their placement (one node for threads).
    setup.metadata = local_metadata(world.size, setup.options.run_id);
    describe_simulation(*setup.group, setup.options.sim, setup.metadata);
  }
  if (!all_ranks_ok(world, plan_benchmarks(world, setup))) return kUsageStatus;
  print_notes(world, setup.plan);
  setup.list_only = lists_tests_only(setup.benchmark_flags);
  if (!all_ranks_ok(world, open_csv(world, setup))) return kUsageStatus;
  return std::nullopt;
}

// Registers every case once per round (--interleave), timed by `runner`.
void register_benchmarks(CasePlan& plan, Runner& runner, int rounds, bool interleave,
                         bool report_aggregates_only) {
  for (int round = 0; round < rounds; ++round) {
    for (BenchmarkCase& entry : plan.cases) {
      benchmark::internal::Benchmark* registered = benchmark::RegisterBenchmark(
          entry.name.c_str(),
          [&runner, &entry, round](benchmark::State& state) { runner.run(state, entry, round); });
      registered->UseManualTime()->Unit(benchmark::kMicrosecond);
      registered->ReportAggregatesOnly(report_aggregates_only)->DisplayAggregatesOnly(false);
      if (interleave) registered->Repetitions(1);
    }
  }
}

void add_run_context(const RunMetadata& metadata, const std::string& transport) {
  benchmark::AddCustomContext("collbench_run_id", metadata.run_id);
  benchmark::AddCustomContext("collbench_git_revision", metadata.git_revision);
  benchmark::AddCustomContext("collbench_ranks", std::to_string(metadata.ranks));
  benchmark::AddCustomContext("collbench_hosts", metadata.hosts);
  benchmark::AddCustomContext("collbench_mpi_library", metadata.mpi_library);
  benchmark::AddCustomContext("collbench_transport", transport);
  benchmark::AddCustomContext("collbench_malloc", malloc_name());
}

// Rank 0's run: Google Benchmark's display (console or JSON) and the CSV rows.
void run_reporting(RunSetup& setup, Progress& progress, bool display_aggregates_only) {
  std::map<std::string, const BenchmarkCase*> cases_by_name;
  for (BenchmarkCase& entry : setup.plan.cases) cases_by_name.emplace(entry.name, &entry);
  RowContext context;
  context.transport = transport_kind(setup);
  context.provider = setup.transport ? setup.transport->provider() : std::string();
  context.reduce_kernel = std::string(active_reduce_variant());
  if (setup.options.has_family("gemm")) context.blas = blas_description();
  context.options = &setup.options;
  context.metadata = &setup.metadata;
  // Google Benchmark's console reporter prints the run's context (CPU,
  // caches, collbench_* metadata) on stderr; it belongs with the table, and
  // stderr is kept for notes, progress and errors.
  benchmark::BenchmarkReporter* display = benchmark::CreateDefaultDisplayReporter();
  display->SetErrorStream(&std::cout);
  RankZeroReporter reporter(display, setup.csv.get(), std::move(cases_by_name), context, progress,
                            display_aggregates_only);
  benchmark::RunSpecifiedBenchmarks(&reporter);
}

// Registers the benchmarks and runs them in lock-step on every rank.
void run_benchmarks(const World& world, const std::vector<std::string>& args, RunSetup& setup) {
  const Options& options = setup.options;
  const bool show_progress =
      !options.quiet &&
      (options.progress || options.progress_lines_seconds > 0 || isatty(STDERR_FILENO) != 0);
  Progress progress(world.rank == 0 && show_progress,
                    setup.selected * static_cast<std::size_t>(setup.rounds),
                    options.progress_lines_seconds);
  std::optional<Runner> runner_storage;
  if (setup.group) {
    runner_storage.emplace(options, *setup.group, progress);
  } else if (!world.mpi) {
    runner_storage.emplace(options, *setup.transport, progress);
  } else {
    runner_storage.emplace(options, *setup.transport, world.comm, progress);
  }
  Runner& runner = *runner_storage;
  // A simulation's times are the model's, whatever else the machine runs.
  if (options.transport != "sim") runner.watch_load(setup.metadata.ranks_on_my_node);
  // The aggregates-only flags would keep every repetition's run from the
  // reporter, and so from the CSV. Each benchmark is registered to hand rank
  // 0's reporter every run instead; the reporter shows only the aggregates on
  // the console itself, and --benchmark_out keeps what the flags ask for.
  const bool report_aggregates_only =
      benchmark_flag_set(args, "--benchmark_report_aggregates_only");
  const bool display_aggregates_only =
      report_aggregates_only || benchmark_flag_set(args, "--benchmark_display_aggregates_only");
  register_benchmarks(setup.plan, runner, setup.rounds, options.interleave, report_aggregates_only);
  add_run_context(setup.metadata, transport_kind(setup));
  if (world.rank == 0) {
    run_reporting(setup, progress, display_aggregates_only);
  } else {
    NullReporter null_reporter;
    benchmark::RunSpecifiedBenchmarks(&null_reporter);
  }
  runner.release();
  benchmark::Shutdown();
}

// After benchmark::Shutdown(), on rank 0: the --benchmark_out file put in
// place. Returns the error, or empty.
std::string finish_outputs(const World& world, const RunSetup& setup) {
  if (world.rank != 0) return {};
  if (setup.list_only) {
    // Google Benchmark opens the file even for a list of names, and writes
    // nothing into it: a dry run leaves no file.
    std::remove(partial_benchmark_out(setup.out.target).c_str());
    keep_file_of_normal_end();
    return {};
  }
  if (const std::string timeline_error = write_timeline(setup.options); !timeline_error.empty()) {
    return timeline_error;
  }
  if (setup.out.target.empty()) return {};
  const std::string out_error = finish_benchmark_out(setup.out.target, setup.out.format);
  keep_file_of_normal_end();
  return out_error;
}

// --check's verdict, the same on every rank: status 1 when any benchmark
// had a wrong element in any round.
int check_status(const World& world, const CasePlan& plan) {
  std::vector<std::string> failed;
  for (const BenchmarkCase& entry : plan.cases) {
    if (entry.wrong_elements_all_rounds > 0) {
      failed.push_back(fmt::format("{} ({} wrong)", entry.name, entry.wrong_elements_all_rounds));
    }
  }
  if (failed.empty()) return 0;
  if (world.rank == 0) {
    fmt::print(stderr, "collbench: --check found wrong results in {} benchmark{}: {}\n",
               failed.size(), failed.size() == 1 ? "" : "s", fmt::join(failed, ", "));
  }
  return kFailureStatus;
}

int run(World& world, int argc, char** argv) {
  const std::vector<std::string> args(argv + 1, argv + argc);
  if (asks_for_help(args)) {
    if (world.rank == 0) print_help();
    return 0;
  }
  RunSetup setup;
  if (const std::optional<int> status = set_up(world, argc, argv, args, setup)) return *status;
  run_benchmarks(world, args, setup);
  if (const std::string out_error = finish_outputs(world, setup); !out_error.empty()) {
    fmt::print(stderr, "collbench: {}\n", out_error);
    return kFailureStatus;
  }
  return check_status(world, setup.plan);
}

}  // namespace
}  // namespace collbench::harness

namespace collbench::harness {
namespace {

// MPI is initialized only when the transport or the bootstrap is MPI's.
bool needs_mpi(int argc, char** argv) {
  return find_single_process_transport(requested(argc, argv, "--transport")) == nullptr &&
         requested(argc, argv, "--bootstrap") == "mpi";
}

// The thread level to ask MPI for. Open MPI 4.1 takes its locks on every
// call once it grants more than MPI_THREAD_SINGLE: a 2-rank 8-byte
// allreduce here took 0.54-0.57 us at MPI_THREAD_SINGLE and 0.63-0.75 us
// at FUNNELED, SERIALIZED or MULTIPLE, which was most of collbench's offset
// from OSU (results/osu/README.md). The harness's own threads (the watchdog,
// the load sampler, progress) make no MPI call, so only a family that calls
// MPI off the main thread (train) is run at MPI_THREAD_SERIALIZED.
int wanted_thread_level(int argc, char** argv) {
  const std::string families = requested(argc, argv, "--families", default_families());
  return selects_mpi_off_the_main_thread(split_list(families)) ? MPI_THREAD_SERIALIZED
                                                               : MPI_THREAD_SINGLE;
}

// Without MPI: every rank in this process, or this process one rank of a
// job that meets through --bootstrap. Under a launcher (refused) only the
// launcher's rank 0 speaks.
int run_without_mpi(int argc, char** argv) {
  World world;
  world.mpi = false;
  for (const char* variable : kLauncherRankVariables) {
    if (const char* rank = std::getenv(variable); rank != nullptr) world.rank = std::atoi(rank);
  }
  try {
    return run(world, argc, argv);
  } catch (const std::exception& failure) {
    fmt::print(stderr, "collbench: {}\n", failure.what());
    std::fflush(stderr);
    abort_job();
  }
}

}  // namespace
}  // namespace collbench::harness

int main(int argc, char** argv) {
  collbench::cli::fail_on_unwritten_standard_output("collbench");
  collbench::harness::rerun_simulation_on_jemalloc(argc, argv);
  collbench::harness::set_process_signals();
  collbench::use_mpi_library_collectives();
  if (!collbench::harness::needs_mpi(argc, argv)) {
    return collbench::harness::run_without_mpi(argc, argv);
  }
  collbench::harness::World world;
  if (MPI_Init_thread(&argc, &argv, collbench::harness::wanted_thread_level(argc, argv),
                      &world.thread_level) != MPI_SUCCESS) {
    std::fputs("collbench: MPI_Init_thread failed\n", stderr);
    return 1;
  }
  int status = 0;
  try {
    collbench::hold_mpich_forced_algorithms();
    MPI_Comm_dup(MPI_COMM_WORLD, &world.comm);
    MPI_Comm_rank(world.comm, &world.rank);
    MPI_Comm_size(world.comm, &world.size);
    status = collbench::harness::run(world, argc, argv);
  } catch (const std::exception& failure) {
    // Past the agreement points, an error on one rank cannot be agreed on
    // without risking a hang: say what failed and take the job down.
    fmt::print(stderr, "collbench: rank {}: {}\n", world.rank, failure.what());
    std::fflush(stderr);
    collbench::harness::abort_job();
  }
  if (world.comm != MPI_COMM_NULL) MPI_Comm_free(&world.comm);
  MPI_Finalize();
  return status;
}
