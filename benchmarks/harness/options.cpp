// CLI11 definition of collbench's own flags; see options.h.
#include "options.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <set>

#include "cli_checks.h"
#include "collbench/catalog/catalog.h"
#include "collbench/catalog/sizes.h"
#include "collbench/collectives/algorithm.h"
#include "collbench/collectives/collective.h"
#include "collbench/collectives/mpich_tuned.h"
#include "collbench/collectives/ompi_tuned.h"
#include "collbench/core/columns.h"
#include "collbench/core/csv.h"
#include "collbench/transport/transport_factory.h"
#include "family_registry.h"
#include "single_process.h"

namespace collbench::harness {

std::string_view to_string(SyncMode mode) {
  switch (mode) {
    case SyncMode::barrier:
      return "barrier";
    case SyncMode::none:
      return "none";
    case SyncMode::window:
      return "window";
  }
  return "unknown";
}
namespace {

// A minute of --debug-slow-us: a slower rank only tests the default timeout.
constexpr double kMaxDebugSlowMicroseconds = 60e6;
// Untimed calls per benchmark: a million 64 MiB allreduces is already days.
constexpr std::int64_t kMaxWarmupCalls = 1000000;
// Timed samples per benchmark: every rank keeps each sample's time (8 bytes),
// reserved before the loop, so the count bounds that memory (80 MB).
constexpr std::int64_t kMaxSamples = 10000000;

// What --gemm-batches A:B runs, for its help and its errors: A doubled
// until B, so 3:12 is 3, 6, 12 (powers of two only when A is one).
constexpr std::string_view kGemmBatchRange = "A:B for A, 2A, 4A, ... up to B";

// --transport's kinds: those mpirun starts (this build's), then those whose
// ranks all run in this process.
std::vector<std::string> accepted_transports() {
  std::vector<std::string> kinds = transport_kinds();
  for (const SingleProcessTransport& transport : single_process_transports()) {
    kinds.emplace_back(transport.kind);
  }
  return kinds;
}

// --bootstrap, --rank and --ranks, which go together: the file bootstrap
// serves the libfabric transport's address exchange.
void validate_bootstrap(const Options& options) {
  if (options.bootstrap == "mpi") {
    if (options.rank >= 0) {
      throw UsageError(
          fmt::format("--rank {} goes with --bootstrap {}DIR; under mpirun the "
                      "launcher numbers the ranks",
                      options.rank, kFileBootstrapPrefix));
    }
    return;
  }
  if (options.bootstrap_folder().empty()) {
    throw UsageError(fmt::format("unknown --bootstrap '{}'; accepted: mpi, {}DIR",
                                 options.bootstrap, kFileBootstrapPrefix));
  }
  if (options.transport != "ofi") {
    throw UsageError(
        fmt::format("--bootstrap {} exchanges the addresses of --transport ofi; --transport {} {}",
                    options.bootstrap, options.transport,
                    options.transport == "mpi" ? "starts under mpirun" : "needs no bootstrap"));
  }
  if (options.rank < 0 || options.ranks == 0) {
    throw UsageError(fmt::format(
        "--bootstrap {} needs --rank R and --ranks N: one process per rank, started alike",
        options.bootstrap));
  }
  if (options.rank >= options.ranks) {
    throw UsageError(fmt::format("--rank {}: the job has --ranks {}; accepted: 0 to {}",
                                 options.rank, options.ranks, options.ranks - 1));
  }
}

// The raw strings CLI11 fills; converted and validated by parse_options.
struct RawOptions {
  std::string algorithms = "all";
  std::string sizes;
  bool sizes_given = false;  // --sizes appeared, even with an empty value
  std::string segment;       // --segment, empty for the algorithms' default
  std::string dtype = "f32";
  std::string op = "sum";
  std::string sync = "barrier";
  std::string families = default_families();
  std::string gemm_models;
  std::string gemm_batches = kDefaultGemmBatches;
  bool gemm_models_given = false;  // --gemm-models appeared, even with an empty value
};

// The collectives (each a --families name) and their algorithms; each
// library's forced algorithms (ompi_*, mpich_*) in one line per collective.
std::string algorithm_help() {
  std::string text = "Collectives (--families) and their algorithms (--algorithms):\n";
  for (const CollectiveInfo& collective : collectives()) {
    text += fmt::format("  {}: {}\n", collective.name, collective.summary);
    // Per prefix, in the table's order: the rows and their shared summary.
    std::vector<std::pair<std::string_view, std::vector<std::string_view>>> forced;
    std::vector<std::string_view> forced_summary;
    for (const AlgorithmInfo& info : collective.algorithms) {
      if (info.forced_library_algorithm) {
        const std::string_view prefix = info.name.substr(0, info.name.find('_') + 1);
        if (forced.empty() || forced.back().first != prefix) {
          forced.emplace_back(prefix, std::vector<std::string_view>{});
          forced_summary.push_back(info.summary);
        }
        forced.back().second.push_back(info.name);
        continue;
      }
      text += fmt::format("    {:<24}{}\n", info.name, info.summary);
    }
    for (std::size_t i = 0; i < forced.size(); ++i) {
      text += fmt::format("    {:<24}{}: {}\n", fmt::format("{}*", forced[i].first),
                          forced_summary[i], fmt::join(forced[i].second, ", "));
    }
  }
  return text;
}

// "allreduce: ring, tree, ...; reduce_scatter: ring, ..." for messages.
std::string algorithms_by_collective() {
  std::vector<std::string> parts;
  for (const CollectiveInfo& collective : collectives()) {
    parts.push_back(fmt::format("{}: {}", collective.name, collective.algorithm_names()));
  }
  return fmt::format("{}", fmt::join(parts, "; "));
}

bool any_collective_has(std::string_view algorithm) {
  return std::any_of(collectives().begin(), collectives().end(),
                     [&](const CollectiveInfo& c) { return c.find_algorithm(algorithm); });
}

// "  allreduce 2(p-1)/p, reduce_scatter (p-1)/p, ..." from the table, in
// lines of at most 80 characters.
std::string bus_bandwidth_help() {
  std::string text;
  std::size_t line_length = 0;
  for (const CollectiveInfo& collective : collectives()) {
    const bool last = &collective == &collectives().back();
    const std::string part =
        fmt::format("{} {}{}", collective.name, collective.bus_bandwidth_formula, last ? ";" : ",");
    if (line_length > 0 && line_length + 1 + part.size() > 80) {
      text += "\n";
      line_length = 0;
    }
    text += line_length == 0 ? "  " + part : " " + part;
    line_length += (line_length == 0 ? 2 : 1) + part.size();
  }
  return text;
}

std::string footer() {
  return fmt::format(R"(Benchmark families and names:
{}Each iteration's time is the slowest rank's (MPI_Allreduce MAXLOC, which also
names that rank: the CSV's slowest_rank and rank_median_us), so every rank
runs the same iterations. Times are reported in microseconds (min, median,
mean, p99, max across iterations), bandwidths in GB/s (10^9 B/s); algbw is
<bytes>/time and busbw is algbw times the collective's factor, as nccl-tests:
{}
  exchange the factors of its messages weighted by their bytes.
Select benchmarks with --benchmark_filter=<regex>; the --benchmark_* flags
below work as in any Google Benchmark binary, except the csv formats (use
--csv PATH) and --benchmark_enable_random_interleaving (a different order on
every rank).
)",
                     benchmark_names_help(), bus_bandwidth_help());
}

struct App {
  CLI::App app{
      "collbench: collective-communication microbenchmarks (Google Benchmark under MPI).\n"
      "Launch with mpirun/srun on any number of ranks; rank 0 reports. Or, without mpirun\n"
      "and without MPI, every rank in this process: --transport inproc --ranks N; or one\n"
      "process per rank over libfabric: --transport ofi --bootstrap file:DIR --rank R --ranks N.",
      "collbench"};
  RawOptions raw;
  Options options;

  App() {
    app.set_help_flag("-h,--help", "Print this help (collbench's flags, then Google Benchmark's)");
    // A later value wins, as for Google Benchmark's flags: scripts/run.sh
    // puts its defaults first and the user's flags after them.
    app.option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
    app.get_formatter()->column_width(34);
    app.add_option("--algorithms", raw.algorithms,
                   "Comma-separated algorithms, or 'all' (default: all): for each collective of "
                   "--families, those of its algorithms named here (a collective without one "
                   "of them says so in a note). With 'all', algorithms that cannot run on this "
                   "rank count or transport are skipped with a note; named explicitly they are "
                   "an error")
        ->type_name("LIST");
    app.add_flag("--library-algorithms", options.library_algorithms,
                 "Also run the MPI library's own collective with each of its algorithms forced "
                 "(Open MPI's coll_tuned: the ompi_* rows; MPICH's: the mpich_* rows; of every "
                 "collective of --families, listed by --list-algorithms where the library has "
                 "them), never part of --algorithms all. Open MPI reads a forced algorithm only "
                 "with coll_tuned_use_dynamic_rules set at launch: export "
                 "OMPI_MCA_coll_tuned_use_dynamic_rules=1 (or mpirun --mca "
                 "coll_tuned_use_dynamic_rules 1). MPICH forces one algorithm per collective and "
                 "launch: MPIR_CVAR_<COLL>_INTRA_ALGORITHM=<name> (e.g. "
                 "MPIR_CVAR_ALLREDUCE_INTRA_ALGORITHM=recursive_doubling for "
                 "mpich_recursive_doubling). Rows the launch cannot force are skipped with a "
                 "note, and named in --algorithms they are an error");
    app.add_option("--sizes", raw.sizes,
                   "Message sizes in bytes per rank (default: 8B:64MiB). Comma-separated items: "
                   "a size (4096, 1.5KiB, 64MiB), MIN:MAX (x2 steps), MIN:MAX:xF (step factor "
                   "F). Units B, KiB, MiB, GiB, TiB (powers of 1024) or kB, MB, GB, TB (powers of "
                   "1000); a bare K/M/G is rejected as ambiguous. Each size must be a whole "
                   "number of --dtype elements. With --workload and no --sizes only the "
                   "workloads' sizes run")
        ->type_name("SIZES");
    app.add_option("--segment", raw.segment,
                   "Pipeline segment of the algorithms that travel in segments (allreduce ring "
                   "and every ring phase, broadcast chain, double_binary_tree), a size as in "
                   "--sizes, a whole number of --dtype elements (default: 512KiB, what "
                   "measurements here chose); the CSV's segment_bytes column records it")
        ->type_name("BYTES");
    app.add_option("--dtype", raw.dtype,
                   fmt::format("Element type (default: f32); one of {}", dtype_names()))
        ->type_name("TYPE");
    app.add_option("--op", raw.op,
                   fmt::format("Reduction operation (default: sum); one of {}", reduce_op_names()))
        ->type_name("OP");
    app.add_option("--families", raw.families, families_flag_help())->type_name("LIST");
    app.add_option("--gemm-models", raw.gemm_models,
                   fmt::format("--families gemm: comma-separated catalog models whose GEMM layers "
                               "to time (default: the --workload models, else {})",
                               fmt::join(kDefaultGemmModels, ",")))
        ->type_name("LIST");
    app.add_option("--gemm-batches", raw.gemm_batches,
                   fmt::format("--families gemm: per-rank batches (samples), comma-separated "
                               "whole numbers or {} (default: {}; at most {})",
                               kGemmBatchRange, kDefaultGemmBatches, kMaxGemmBatch))
        ->type_name("LIST");
    app.add_option("--blas-threads", options.blas_threads,
                   "--families gemm: OpenBLAS threads per rank (default: 1, one core per rank)")
        ->type_name("N")
        ->check(cli::whole_number(1, 1024, "threads"));
    app.add_option("--train-batch", options.train_batch,
                   fmt::format("--families train: samples per rank of each iteration's GEMMs "
                               "(default: {})",
                               kDefaultTrainBatch))
        ->type_name("N")
        ->check(cli::whole_number(1, kMaxGemmBatch, "samples"));
    app.add_option("--compute-scale", options.compute_scale,
                   "--families train: shrink every GEMM of the iteration to this fraction of "
                   "its rows (attention: of its products), for quick runs (default: 1; "
                   "0 < X <= 1). The gradients, and so the exchange, keep their size")
        ->type_name("X");
    app.add_option("--timeline", options.timeline_path,
                   "--families train: write one timed iteration of every train benchmark "
                   "(rank 0: each layer's forward and backward, each bucket's ready time, "
                   "start and end of its exchange) to PATH as Chrome trace JSON, viewable in "
                   "chrome://tracing or Perfetto, and drawn by scripts/plot.py timeline. "
                   "Written whole at the end; an existing file is refused unless --force")
        ->type_name("PATH")
        ->check(collbench::cli::path());
    app.add_option("--workload", options.workloads,
                   "DNN workload whose message sizes to benchmark, e.g. resnet50:ddp or "
                   "llama2_7b:fsdp (repeatable). Adds, for each collective asked for, its "
                   "benchmarks per distinct size of the workload's messages that it carries, and "
                   "one exchange benchmark per algorithm name that every collective of its "
                   "iteration has")
        ->type_name("SPEC")
        ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll)
        ->expected(1);
    app.add_option(
           "--transport", options.transport,
           fmt::format("Transport for the hand-written algorithms (default: mpi); one of {}. "
                       "{} runs every rank in this process (threads over shared memory), "
                       "started without mpirun and without MPI, with --ranks N",
                       fmt::join(accepted_transports(), ", "), single_process_transport_names()))
        ->type_name("KIND");
    app.add_option("--ranks", options.ranks,
                   fmt::format("--transport {}: how many ranks to run in this process (each "
                               "sample's time is the slowest rank's, as under mpirun); "
                               "--bootstrap {}DIR: how many processes the job has; refused "
                               "otherwise (mpirun's -np sets it)",
                               single_process_transport_names(), kFileBootstrapPrefix))
        ->type_name("N")
        ->check(cli::whole_number(1, INT32_MAX, "ranks"));
    app.add_option("--bootstrap", options.bootstrap,
                   fmt::format("How the ranks of --transport ofi find each other: mpi (default: "
                               "the mpirun job) or {}DIR, started without mpirun and without "
                               "MPI, one process per --rank R of --ranks N, each writing its "
                               "address to DIR (empty, on a file system every rank sees) and "
                               "waiting up to --timeout for the others'",
                               kFileBootstrapPrefix))
        ->type_name("SPEC");
    app.add_option("--rank", options.rank,
                   "--bootstrap file:DIR: this process's rank, 0 to --ranks minus 1")
        ->type_name("R")
        ->check(cli::whole_number(0, INT32_MAX, "rank"));
    add_sim_options(app, options.sim);
    app.add_option("--ofi-provider", options.ofi_provider,
                   "libfabric provider for --transport ofi, e.g. tcp, 'tcp;ofi_rxm', shm, "
                   "sockets, verbs (default: FI_PROVIDER or libfabric's first choice)")
        ->type_name("NAME");
    auto* list_providers =
        app.add_flag("--list-providers", options.list_providers,
                     "Print the libfabric providers available on this node and exit");
    app.add_flag("--list-algorithms", options.list_algorithms,
                 "Print every algorithm of every collective of this build and exit: registry "
                 "order, collective, name, "
                 "implementation (hand-written, or mpi for the MPI library's own), whether "
                 "collbench-fit fits a cost model of its own, summary. With a bare --csv (no "
                 "PATH): as CSV on stdout. Needs no mpirun")
        ->excludes(list_providers);
    app.add_flag("--check", options.check,
                 "Validate every benchmark's result before timing it (collectives: two calls "
                 "on inputs of two generations); any wrong element fails that benchmark and "
                 "makes collbench exit with status 1");
    app.add_option("--csv", options.csv_path,
                   "Write tidy CSV (one row per benchmark and repetition, flushed as each "
                   "finishes; columns in results/README.md) to PATH, a regular file other than "
                   "--benchmark_out's. An existing file is refused unless --append or --force. "
                   "Each row is written whole or not at all: a write the disk cuts short is "
                   "truncated away and fails the run. Bare (no PATH) only with --list-algorithms")
        ->type_name("PATH")
        ->expected(0, 1)
        ->check(collbench::cli::path());
    auto* append = app.add_flag("--append", options.append,
                                "Append to an existing --csv file (its header must match). A file "
                                "whose last line has no newline, NUL bytes or another number of "
                                "fields than the header (a torn row) is refused, not repaired: "
                                "delete or complete that line");
    app.add_flag("--force", options.force,
                 "Overwrite an existing --csv or --benchmark_out file (with --append, an "
                 "existing --benchmark_out is refused: Google Benchmark cannot append to it)")
        ->excludes(append);
    app.add_option("--warmup", options.warmup,
                   "Untimed calls of each benchmark after it is built and before its first "
                   "timed iteration (default: 1); the two --check calls are the first of them")
        ->type_name("N")
        ->check(cli::whole_number(0, kMaxWarmupCalls, "calls"));
    auto* samples =
        app.add_option("--samples", options.samples,
                       "Exactly N timed samples per benchmark and repetition, whatever they take "
                       "(--benchmark_min_time is then ignored): what tests use, so that no count "
                       "depends on the machine's load. A sample is one call; for p2p and local it "
                       "is a batch of calls_per_sample calls")
            ->type_name("N")
            ->check(cli::whole_number(1, kMaxSamples, "samples"));
    app.add_option("--min-samples", options.min_samples,
                   fmt::format("At least N timed samples per benchmark and repetition (default: "
                               "{}); more only while their total is below "
                               "--benchmark_min_time, so a call slower than min_time / N gets N "
                               "samples, never one or two. Recorded in the CSV (min_samples, "
                               "samples)",
                               kDefaultMinSamples))
        ->type_name("N")
        ->check(cli::whole_number(1, kMaxSamples, "samples"))
        ->excludes(samples);
    app.add_option("--sync", raw.sync,
                   "Before each timed iteration: 'barrier' (MPI_Barrier, default), 'none' "
                   "(back-to-back calls, the skew of one carries into the next) or 'window' "
                   "(the ranks' clocks synchronized once, every call started at an agreed "
                   "time; a sample with a rank late for its window is dropped and counted: "
                   "the CSV's window_us, clock_error_us, late_starts)")
        ->type_name("MODE");
    app.add_flag("--interleave", options.interleave,
                 "Run the --benchmark_repetitions R in rounds: every selected benchmark once, "
                 "in the usual order, then again, R times. Benchmarks of one repetition are "
                 "then measured with one repetition of each benchmark between them instead of "
                 "all of them, so ratios between them hold "
                 "when the machine's speed drifts during the run (shared machines, VMs whose "
                 "vCPUs move). Google Benchmark then sees R benchmarks of one repetition each: "
                 "their names end in /repeats:1/manual_time and its aggregates (mean, median, "
                 "stddev) are not computed; the CSV's repetition column numbers the rounds "
                 "0..R-1");
    app.add_option("--timeout", options.timeout_seconds,
                   "Seconds any wait may block (the transports' and the harness's own: "
                   "barrier, time reduction) before the job fails naming the benchmark, its "
                   "size and the ranks that had not arrived (default: per benchmark, 60 s plus "
                   "2(p-1) x its bytes per rank at 10 MB/s; whole milliseconds, at least 1; 0 "
                   "waits forever; the mpi algorithm's own MPI_Allreduce is ended 10 s later by "
                   "a watchdog)")
        ->type_name("SECONDS")
        ->check(cli::timeout_seconds());
    app.add_option("--run-id", options.run_id,
                   "Run identifier for the CSV (default: UTC time and a random suffix, e.g. "
                   "20250101T120000Z-3f9a1c); letters, digits, '.', '_' and '-'")
        ->type_name("ID");
    auto* quiet = app.add_flag(
        "--quiet", options.quiet,
        "No progress line on stderr (by default it is shown when stderr is a terminal)");
    app.add_flag("--progress", options.progress,
                 "Show the progress line (benchmark, how many left, elapsed) on stderr even when "
                 "it is not a terminal: under mpirun rank 0's stderr is always a pipe, so pass "
                 "this when the job's stderr is a terminal (scripts/run.sh does when given its own "
                 "--progress)")
        ->excludes(quiet);
    app.add_option("--progress-lines", options.progress_lines_seconds,
                   "Print the progress as a new line on stderr at each benchmark's start and at "
                   "least every SECONDS while one runs (also when stderr is not a terminal; "
                   "with an estimate of the time left), instead of one line rewritten in "
                   "place: what a log can show (scripts/run.sh passes 20)")
        ->type_name("SECONDS")
        ->check(cli::positive("seconds"))
        ->excludes(quiet);
    auto* testing = app.add_option_group("Testing aids");
    testing
        ->add_option("--debug-slow-rank", options.debug_slow_rank,
                     "Make rank R slow: it sleeps --debug-slow-us inside every timed call, after "
                     "its part of the collective (tests that the slowest rank sets the time and "
                     "that ranks stay in lock-step)")
        ->type_name("R")
        ->check(cli::whole_number(0, INT32_MAX));
    testing
        ->add_option("--debug-slow-us", options.debug_slow_us,
                     "Microseconds of the --debug-slow-rank delay (default: 0)")
        ->type_name("US")
        ->check(cli::number_at_least(0, false, "microseconds", kMaxDebugSlowMicroseconds));
    testing
        ->add_option("--debug-late-rank", options.debug_late_rank,
                     "Under --sync window, rank R reaches every other timed call's start 1.5 "
                     "windows late (tests that a late start is dropped and counted: "
                     "late_starts)")
        ->type_name("R")
        ->check(cli::whole_number(0, INT32_MAX));
    testing
        ->add_option("--debug-corrupt-elements", options.debug_corrupt_elements,
                     "After each message of the second --check call of every collective and "
                     "exchange, the last rank with an output (a reduce's: the root) adds 1 to the "
                     "first N elements of the results, so --check must report "
                     "N wrong elements per benchmark and collbench must exit with status 1")
        ->type_name("N")
        ->check(cli::whole_number(0, INT64_MAX, "elements"));
    testing
        ->add_option("--debug-share-messages-from", options.debug_share_messages_from,
                     fmt::format("Exchange messages of at least N bytes of one collective, "
                                 "size and routing share buffers and algorithm object "
                                 "(default: {}, {} MiB; tests lower it so that small workloads "
                                 "share too)",
                                 kSharedMessageBytes, kSharedMessageBytes >> 20))
        ->type_name("N")
        ->check(cli::whole_number(1, INT64_MAX, "bytes"));
    testing->add_flag("--debug-skip-connection-warmup", options.debug_skip_connection_warmup,
                      "Skip the warm-up that contacts every peer before the first benchmark, so "
                      "the check that every rank has addressed all its peers before timing must "
                      "stop the run (exit status 1): e.g. tree at 4 ranks reaches only its tree "
                      "neighbours");
    auto* stuck =
        testing
            ->add_option("--debug-stuck-rank", options.debug_stuck_rank,
                         "Make rank R stop taking part: at the first timed call of benchmark "
                         "number --debug-fault-after it sleeps forever instead of entering the "
                         "call, so the other ranks must give up after --timeout and name it "
                         "(tests the hang protection; needs 2 ranks or more and a --timeout "
                         "other than 0)")
            ->type_name("R")
            ->check(cli::whole_number(0, INT32_MAX));
    testing
        ->add_option("--debug-crash-rank", options.debug_crash_rank,
                     "Make rank R crash: at the first timed call of benchmark number "
                     "--debug-fault-after it raises SIGSEGV, so the job must end at once, keeping "
                     "the CSV rows of the benchmarks finished before (tests crash handling)")
        ->type_name("R")
        ->check(cli::whole_number(0, INT32_MAX))
        ->excludes(stuck);
    testing
        ->add_option("--debug-fault-after", options.debug_fault_after,
                     "Benchmarks that run to completion before the --debug-stuck-rank or "
                     "--debug-crash-rank fault (default: 0, the first benchmark's first timed "
                     "call)")
        ->type_name("N")
        ->check(cli::whole_number(0, INT32_MAX, "benchmarks"));
    app.footer(algorithm_help() + "\n" + footer());
  }
};

void validate_algorithms(const RawOptions& raw, Options& options) {
  const std::vector<std::string> names = split_list(raw.algorithms);
  if (names.empty()) {
    throw UsageError(fmt::format("--algorithms is empty; accepted: all, or a list of {}",
                                 algorithms_by_collective()));
  }
  options.all_algorithms = names.size() == 1 && names[0] == "all";
  if (options.all_algorithms) return;
  std::set<std::string> seen;
  for (const std::string& name : names) {
    if (!any_collective_has(name)) {
      throw UsageError(fmt::format("unknown algorithm '{}' in --algorithms; accepted: all, or {}",
                                   name, algorithms_by_collective()));
    }
    if (seen.insert(name).second) options.algorithms.push_back(name);
  }
}

void validate_sizes(const RawOptions& raw, Options& options) {
  options.sizes_given = raw.sizes_given;
  if (options.sizes_given && raw.sizes.find_first_not_of(" \t,") == std::string::npos) {
    throw UsageError(
        "--sizes is empty; accepted: comma-separated sizes and ranges, e.g. 8B:64MiB or "
        "4KiB,1MiB (see collbench --help)");
  }
  if (options.sizes_given) options.sizes_text = raw.sizes;
  try {
    options.sizes = parse_size_list(options.sizes_text);
  } catch (const std::invalid_argument& error) {
    throw UsageError(fmt::format("--sizes: {}", error.what()));
  }
  const std::size_t element_bytes = dtype_size(options.dtype);
  for (const std::uint64_t size : options.sizes) {
    if (size % element_bytes != 0) {
      throw UsageError(fmt::format(
          "--sizes: {} bytes is not a whole number of {} elements ({} bytes each); use sizes "
          "that are multiples of {}",
          size, to_string(options.dtype), element_bytes, element_bytes));
    }
  }
}

void validate_segment(const RawOptions& raw, Options& options) {
  if (raw.segment.empty()) return;
  try {
    options.segment_bytes = parse_byte_size(raw.segment);
  } catch (const std::invalid_argument& error) {
    throw UsageError(fmt::format("--segment: {}", error.what()));
  }
  const std::size_t element_bytes = dtype_size(options.dtype);
  if (options.segment_bytes % element_bytes != 0) {
    throw UsageError(fmt::format(
        "--segment: {} bytes is not a whole number of {} elements ({} bytes each); use a "
        "multiple of {}",
        options.segment_bytes, to_string(options.dtype), element_bytes, element_bytes));
  }
}

int parse_gemm_batch(const std::string& text) {
  int batch = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), batch);
  if (error != std::errc() || end != text.data() + text.size() || batch < 1 ||
      batch > kMaxGemmBatch) {
    throw UsageError(fmt::format(
        "--gemm-batches: '{}' is not a batch; accepted: whole numbers from 1 to {}, comma-"
        "separated, or {} (e.g. 1:256)",
        text, kMaxGemmBatch, kGemmBatchRange));
  }
  return batch;
}

// --gemm-batches: "1,3,8" as given, "A:B" as kGemmBatchRange says.
void validate_gemm(const RawOptions& raw, Options& options) {
  for (const std::string& item : split_list(raw.gemm_batches)) {
    const std::size_t colon = item.find(':');
    if (colon == std::string::npos) {
      options.gemm_batches.push_back(parse_gemm_batch(item));
      continue;
    }
    const int first = parse_gemm_batch(item.substr(0, colon));
    const int last = parse_gemm_batch(item.substr(colon + 1));
    if (last < first) {
      throw UsageError(fmt::format("--gemm-batches: range {} ends below its start", item));
    }
    for (int batch = first; batch <= last; batch *= 2) options.gemm_batches.push_back(batch);
  }
  if (options.gemm_batches.empty()) {
    throw UsageError("--gemm-batches is empty; accepted: e.g. 1:256 or 1,4,32");
  }
  std::sort(options.gemm_batches.begin(), options.gemm_batches.end());
  options.gemm_batches.erase(std::unique(options.gemm_batches.begin(), options.gemm_batches.end()),
                             options.gemm_batches.end());
  if (raw.gemm_models_given && split_list(raw.gemm_models).empty()) {
    throw UsageError(fmt::format(
        "--gemm-models is empty; accepted: comma-separated catalog models, e.g. {} (leave it out "
        "for the --workload models, else those)",
        fmt::join(kDefaultGemmModels, ",")));
  }
  for (const std::string& name : split_list(raw.gemm_models)) {
    try {
      static_cast<void>(find_model(name));
    } catch (const std::invalid_argument& error) {
      throw UsageError(fmt::format("--gemm-models: {}", error.what()));
    }
    if (std::find(options.gemm_models.begin(), options.gemm_models.end(), name) ==
        options.gemm_models.end()) {
      options.gemm_models.push_back(name);
    }
  }
  const bool gemm_options =
      raw.gemm_models_given || raw.gemm_batches != kDefaultGemmBatches || options.blas_threads != 1;
  if (gemm_options && !options.has_family("gemm")) {
    throw UsageError(
        "--gemm-models, --gemm-batches and --blas-threads only act on --families gemm; add gemm "
        "to --families");
  }
}

void validate_train(Options& options) {
  if (!(options.compute_scale > 0 && options.compute_scale <= 1)) {
    throw UsageError(
        fmt::format("--compute-scale {} is not a fraction of the compute; accepted: 0 < X <= 1",
                    options.compute_scale));
  }
  const bool train_options = options.train_batch != kDefaultTrainBatch ||
                             options.compute_scale != 1 || !options.timeline_path.empty();
  if (train_options && !options.has_family("train")) {
    throw UsageError(
        "--train-batch, --compute-scale and --timeline only act on --families train; add train "
        "to --families");
  }
  if (options.has_family("train") && options.workloads.empty()) {
    throw UsageError(
        "--families train needs a --workload whose gradients it exchanges, e.g. resnet50:ddp");
  }
}

void validate_families(const RawOptions& raw, Options& options) {
  options.families = select_families(split_list(raw.families));
}

// The Google Benchmark (1.7.1) flags collbench passes on, and what each
// value must be. Google Benchmark itself answers a bad value with its usage
// text and exit(0) (a job that "succeeds" without MPI_Finalize), or leaves a
// malformed number for collbench to call an unknown argument, so every
// --benchmark_* argument is checked here before it sees any.
enum class FlagValue {
  boolean,
  repetitions,
  seconds,
  min_time,  // seconds, also written with an 's' suffix
  verbosity,
  text,
  format,
  color,
  time_unit,
  context
};

struct BenchmarkFlag {
  const char* name;
  FlagValue value;
  // Changes only how rank 0 displays or stores results, so it may differ
  // between ranks and is left out of the configuration digest.
  bool display_only;
};

constexpr BenchmarkFlag kBenchmarkFlags[] = {
    {"--benchmark_list_tests", FlagValue::boolean, false},
    {"--benchmark_filter", FlagValue::text, false},
    {"--benchmark_min_time", FlagValue::min_time, false},
    {"--benchmark_min_warmup_time", FlagValue::seconds, false},
    {"--benchmark_repetitions", FlagValue::repetitions, false},
    {"--benchmark_enable_random_interleaving", FlagValue::boolean, false},
    {"--benchmark_report_aggregates_only", FlagValue::boolean, true},
    {"--benchmark_display_aggregates_only", FlagValue::boolean, true},
    {"--benchmark_format", FlagValue::format, true},
    {"--benchmark_out", FlagValue::text, true},
    {"--benchmark_out_format", FlagValue::format, true},
    {"--benchmark_color", FlagValue::color, true},
    {"--benchmark_counters_tabular", FlagValue::boolean, true},
    {"--benchmark_perf_counters", FlagValue::text, false},
    {"--benchmark_context", FlagValue::context, true},
    {"--benchmark_time_unit", FlagValue::time_unit, false},
    {"--v", FlagValue::verbosity, false},
};

// A day: a longer --benchmark_min_time per benchmark is a typo (ms for s).
constexpr double kMaxBenchmarkSeconds = 24.0 * 3600;
// Google Benchmark keeps every repetition's result in memory, and
// --interleave registers every benchmark once per repetition.
constexpr int kMaxRepetitions = 100000;

bool is_one_of(const std::string& value, std::initializer_list<const char*> accepted) {
  return std::any_of(accepted.begin(), accepted.end(),
                     [&](const char* word) { return value == word; });
}

std::string lower(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return text;
}

// The spellings of true and false this accepts; Google Benchmark reads
// anything else as true, which would hide a typo.
bool is_boolean_word(const std::string& value) {
  return is_one_of(lower(value),
                   {"", "1", "t", "true", "y", "yes", "on", "0", "f", "false", "n", "no", "off"});
}

std::string number_problem(const std::string& value, bool whole, const char* unit, double lowest,
                           double highest) {
  double number = 0;
  const char* end = value.data() + value.size();
  const auto [ptr, ec] = std::from_chars(value.data(), end, number);
  const bool digits_only = value.find_first_not_of("0123456789") == std::string::npos;
  const bool ok = !value.empty() && ec == std::errc() && ptr == end && std::isfinite(number) &&
                  number >= lowest && number <= highest && (!whole || digits_only);
  if (ok) return {};
  return fmt::format("expected a {} of {} from {} to {}{}", whole ? "whole number" : "number", unit,
                     lowest, highest, whole ? "" : ", e.g. 0.5 (no unit suffix)");
}

// Google Benchmark 1.8 and later write --benchmark_min_time in seconds as
// "0.5s" (the form their docs show); 1.7.1, which collbench builds with,
// reads a bare number only. The suffix is accepted and dropped before Google
// Benchmark sees the value.
std::string without_seconds_suffix(const std::string& value) {
  if (value.size() < 2 || value.back() != 's') return value;
  const char before = value[value.size() - 2];
  return (before >= '0' && before <= '9') || before == '.' ? value.substr(0, value.size() - 1)
                                                           : value;
}

// What is wrong with `value` for `flag`, or empty.
std::string benchmark_value_problem(const BenchmarkFlag& flag, const std::string& value) {
  switch (flag.value) {
    case FlagValue::boolean:
      return is_boolean_word(value) ? "" : "expected true or false";
    case FlagValue::repetitions:
      return number_problem(value, true, "repetitions", 1, kMaxRepetitions);
    case FlagValue::seconds:
      return number_problem(value, false, "seconds", 0, kMaxBenchmarkSeconds);
    case FlagValue::min_time: {
      const std::string seconds = without_seconds_suffix(value);
      if (number_problem(seconds, false, "seconds", 0, kMaxBenchmarkSeconds).empty()) return {};
      return fmt::format("expected a number of seconds from 0 to {}, e.g. 0.5 or 0.5s",
                         kMaxBenchmarkSeconds);
    }
    case FlagValue::verbosity:
      return number_problem(value, true, "log levels", 0, std::numeric_limits<int>::max());
    case FlagValue::text:
      return {};
    case FlagValue::format:
      // Google Benchmark's CSV reporter aborts the job when a row lacks a
      // counter an earlier row had, and collbench's rows differ by family
      // (a ping-pong has no slowest_rank) and by run (core_handoff_ns).
      if (value == "csv") {
        return "Google Benchmark's csv format is not accepted: it needs every row to have the "
               "same counters, and collbench's differ by family; use --csv PATH, collbench's own "
               "CSV, with every column in every row";
      }
      return is_one_of(value, {"console", "json"}) ? "" : "accepted formats are console and json";
    case FlagValue::color:
      return value == "auto" || (!value.empty() && is_boolean_word(value))
                 ? ""
                 : "expected auto, true or false";
    case FlagValue::time_unit:
      return is_one_of(value, {"ns", "us", "ms", "s"}) ? "" : "accepted units are ns, us, ms and s";
    case FlagValue::context: {
      for (const std::string& pair : split_list(value)) {
        if (pair.find('=') == std::string::npos || pair.front() == '=') {
          return "expected KEY=VALUE pairs separated by commas";
        }
      }
      return {};
    }
  }
  return {};
}

const BenchmarkFlag* find_benchmark_flag(const std::string& name) {
  for (const BenchmarkFlag& flag : kBenchmarkFlags) {
    if (name == flag.name) return &flag;
  }
  return nullptr;
}

std::string benchmark_flag_names() {
  std::vector<std::string> names;
  for (const BenchmarkFlag& flag : kBenchmarkFlags) names.emplace_back(flag.name);
  return fmt::format("{}", fmt::join(names, ", "));
}

}  // namespace

void validate_run_id(const std::string& run_id) {
  const bool valid = std::all_of(run_id.begin(), run_id.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '.' || c == '_' || c == '-';
  });
  if (!valid) {
    throw UsageError(fmt::format(
        "--run-id '{}' has characters other than letters, digits, '.', '_' and '-'", run_id));
  }
}

std::string google_benchmark_argument(const std::string& arg) {
  constexpr std::string_view kMinTime = "--benchmark_min_time=";
  if (!arg.starts_with(kMinTime)) return arg;
  return std::string(kMinTime) + without_seconds_suffix(arg.substr(kMinTime.size()));
}

bool flag_is_true(std::string value) {
  // Google Benchmark's IsTruthyFlagValue: these spellings are false, anything
  // else (including an empty value, i.e. a bare flag) is true.
  std::transform(value.begin(), value.end(), value.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return !(value == "0" || value == "f" || value == "false" || value == "n" || value == "no" ||
           value == "off");
}

std::chrono::milliseconds timeout_milliseconds(double seconds) {
  // Never to 0 from above 0: 0 ms means "wait forever" to the transports.
  const std::int64_t milliseconds = std::llround(seconds * 1000.0);
  return std::chrono::milliseconds(seconds > 0 ? std::max<std::int64_t>(milliseconds, 1) : 0);
}

double default_timeout_seconds(std::uint64_t bytes, int ranks) {
  constexpr double kSlowestBytesPerSecond = 10e6;
  const double seconds =
      60.0 + 2.0 * std::max(ranks - 1, 1) * static_cast<double>(bytes) / kSlowestBytesPerSecond;
  return std::min(seconds, cli::kMaxTimeoutSeconds);
}

std::chrono::milliseconds start_up_timeout(const Options& options, int ranks) {
  return timeout_milliseconds(options.timeout_seconds < 0 ? default_timeout_seconds(0, ranks)
                                                          : options.timeout_seconds);
}

std::string Options::bootstrap_folder() const {
  return bootstrap.starts_with(kFileBootstrapPrefix)
             ? bootstrap.substr(std::string_view(kFileBootstrapPrefix).size())
             : std::string();
}

bool Options::has_family(const std::string& family) const {
  return std::find(families.begin(), families.end(), family) != families.end();
}

std::vector<std::string> split_list(const std::string& text) {
  std::vector<std::string> items;
  std::size_t start = 0;
  while (start <= text.size()) {
    std::size_t end = text.find(',', start);
    if (end == std::string::npos) end = text.size();
    std::string item = text.substr(start, end - start);
    const auto first = item.find_first_not_of(" \t");
    const auto last = item.find_last_not_of(" \t");
    if (first != std::string::npos) items.push_back(item.substr(first, last - first + 1));
    start = end + 1;
  }
  return items;
}

namespace {

// --csv names the run's CSV file; bare, it asks --list-algorithms for CSV.
void validate_listing(bool csv_given, Options& options) {
  const bool bare_csv = csv_given && options.csv_path.empty();
  if (!options.list_algorithms) {
    if (bare_csv) {
      throw UsageError("--csv needs a PATH (a bare --csv only goes with --list-algorithms)");
    }
    return;
  }
  if (!options.csv_path.empty()) {
    throw UsageError(fmt::format(
        "--list-algorithms prints to stdout: give --csv without a PATH for its CSV form and "
        "redirect it, instead of --csv {}",
        options.csv_path));
  }
  options.list_algorithms_csv = bare_csv;
}

}  // namespace

Options parse_options(const std::vector<std::string>& args) {
  App app;
  // CLI11 parses a reversed vector (it pops arguments from the back).
  std::vector<std::string> reversed(args.rbegin(), args.rend());
  try {
    app.app.parse(reversed);
  } catch (const CLI::ParseError& error) {
    throw UsageError(fmt::format("{} (see collbench --help)", error.what()));
  }
  Options& options = app.options;
  app.raw.sizes_given = app.app.count("--sizes") > 0;
  options.families_given = app.app.count("--families") > 0;
  app.raw.gemm_models_given = app.app.count("--gemm-models") > 0;
  validate_listing(app.app.count("--csv") > 0, options);
  const RawOptions& raw = app.raw;

  const auto dtype = parse_dtype(raw.dtype);
  if (!dtype) {
    throw UsageError(fmt::format("unknown --dtype '{}'; accepted: {}", raw.dtype, dtype_names()));
  }
  options.dtype = *dtype;
  const auto op = parse_reduce_op(raw.op);
  if (!op) {
    throw UsageError(fmt::format("unknown --op '{}'; accepted: {}", raw.op, reduce_op_names()));
  }
  options.op = *op;
  const auto sync = std::find_if(std::begin(kSyncModes), std::end(kSyncModes),
                                 [&](SyncMode mode) { return to_string(mode) == raw.sync; });
  if (sync == std::end(kSyncModes)) {
    std::vector<std::string_view> names;
    for (const SyncMode mode : kSyncModes) names.push_back(to_string(mode));
    throw UsageError(
        fmt::format("unknown --sync '{}'; accepted: {}", raw.sync, fmt::join(names, ", ")));
  }
  options.sync = *sync;
  // A simulated rank's clock is the simulation's, one for every rank, and
  // a busy wait for a start time would never let it advance.
  if (options.sync == SyncMode::window && options.transport == "sim") {
    throw UsageError(
        "--sync window cannot be used with --transport sim: the simulated ranks share one "
        "clock and start every call together already");
  }
  const std::vector<std::string> kinds = accepted_transports();
  if (std::find(kinds.begin(), kinds.end(), options.transport) == kinds.end()) {
    throw UsageError(fmt::format("unknown --transport '{}'; accepted by this build: {}{}",
                                 options.transport, fmt::join(kinds, ", "),
                                 options.transport == "ofi" ? " (built without libfabric)" : ""));
  }
  if (!options.ofi_provider.empty() && options.transport != "ofi") {
    throw UsageError(fmt::format("--ofi-provider '{}' needs --transport ofi (got --transport {})",
                                 options.ofi_provider, options.transport));
  }
  validate_bootstrap(options);
  validate_algorithms(raw, options);
  validate_sizes(raw, options);
  validate_segment(raw, options);
  validate_families(raw, options);
  validate_gemm(raw, options);
  validate_train(options);
  validate_run_id(options.run_id);
  for (const char* flag : kSamplingFlags) {
    if (app.app.get_option_no_throw(flag) != nullptr && app.app.count(flag) > 0) {
      options.sampling_flags_given.emplace_back(flag);
    }
  }
  if (options.debug_slow_us > 0 && options.debug_slow_rank < 0) {
    throw UsageError("--debug-slow-us needs --debug-slow-rank R to say which rank is slow");
  }
  if (options.debug_late_rank >= 0 && options.sync != SyncMode::window) {
    throw UsageError("--debug-late-rank acts on --sync window's start times; add --sync window");
  }
  if (options.debug_fault_after > 0 && options.debug_stuck_rank < 0 &&
      options.debug_crash_rank < 0) {
    throw UsageError(
        "--debug-fault-after needs --debug-stuck-rank R or --debug-crash-rank R to say which rank "
        "fails");
  }
  if (options.debug_stuck_rank >= 0 && options.timeout_seconds == 0) {
    throw UsageError(
        "--debug-stuck-rank with --timeout 0 would hang for ever (nothing ends the other ranks' "
        "wait); give a --timeout in seconds, or leave it out for the default");
  }
  if (options.debug_corrupt_elements > 0 && !options.check) {
    throw UsageError("--debug-corrupt-elements only acts on the --check calls; add --check");
  }
  // --force also overwrites an existing --benchmark_out, which main() sees
  // (Google Benchmark takes that flag out of these arguments).
  if (options.append && options.csv_path.empty()) throw UsageError("--append needs --csv PATH");
  return options;
}

void validate_for_ranks(const Options& options, int ranks) {
  if (options.debug_stuck_rank >= 0 && ranks < 2) {
    throw UsageError(
        "--debug-stuck-rank needs a job of 2 ranks or more: the other ranks are the ones that "
        "time out and name it, and on 1 rank the stuck rank would hang for ever");
  }
  const std::pair<const char*, int> named[] = {{"--debug-slow-rank", options.debug_slow_rank},
                                               {"--debug-stuck-rank", options.debug_stuck_rank},
                                               {"--debug-late-rank", options.debug_late_rank},
                                               {"--debug-crash-rank", options.debug_crash_rank}};
  for (const auto& [flag, rank] : named) {
    if (rank >= ranks) {
      throw UsageError(fmt::format("{} {}: the job has {} rank{}; accepted: 0 to {}", flag, rank,
                                   ranks, ranks == 1 ? "" : "s", ranks - 1));
    }
  }
}

namespace {}  // namespace

std::string algorithm_listing(bool csv) {
  const std::vector<std::string> header = columns::names(columns::kListing);
  // The text table leaves out reduces_on_every_rank (what the fitter reads).
  const auto table_line = [](std::string_view order, std::string_view collective,
                             std::string_view name, std::string_view implementation,
                             std::string_view cost_model, std::string_view summary) {
    return fmt::format("{:<6}{:<16}{:<24}{:<16}{:<12}{}\n", order, collective, name, implementation,
                       cost_model, summary);
  };
  std::string text =
      csv ? csv_line(header)
          : table_line(header[0], header[1], header[2], header[3], header[4], header[6]);
  int order = 0;
  for (const CollectiveInfo& collective : collectives()) {
    for (const AlgorithmInfo& info : collective.algorithms) {
      // The library's forced algorithms only where this library has them.
      if (!ompi_tuned_missing(collective.name, info.name).empty() ||
          !mpich_tuned_missing(collective.name, info.name).empty()) {
        continue;
      }
      const std::string position = std::to_string(++order);
      // The MPI library's own: collbench does not know which schedule the
      // library picks, so collbench-fit prices it at its collective's lower
      // bound (model_terms in benchmarks/models/fit.cpp).
      const bool mpi = is_library_algorithm(info);
      const std::string implementation = mpi ? "mpi" : "hand-written";
      const std::string cost_model = mpi ? "no" : "yes";
      text += csv ? csv_line({position, std::string(collective.name), std::string(info.name),
                              implementation, cost_model, info.reduces_on_every_rank ? "yes" : "no",
                              std::string(info.summary)})
                  : table_line(position, collective.name, info.name, implementation, cost_model,
                               info.summary);
    }
  }
  return text;
}

std::string help_text() {
  App app;
  return app.app.help();
}

bool asks_for_help(const std::vector<std::string>& args) {
  return std::any_of(args.begin(), args.end(),
                     [](const std::string& arg) { return arg == "-h" || arg == "--help"; });
}

std::vector<std::pair<std::string, std::string>> benchmark_run_flags(
    const std::vector<std::string>& args) {
  std::vector<std::pair<std::string, std::string>> flags;
  for (const std::string& arg : args) {
    if (arg.rfind("--benchmark_", 0) != 0 && arg != "--v" && arg.rfind("--v=", 0) != 0) continue;
    const auto equals = arg.find('=');
    std::string name = arg.substr(0, equals);
    std::string value = equals == std::string::npos ? "" : arg.substr(equals + 1);
    const BenchmarkFlag* flag = find_benchmark_flag(name);
    if (flag == nullptr) {
      throw UsageError(fmt::format("unknown Google Benchmark flag {}; accepted: {}", name,
                                   benchmark_flag_names()));
    }
    if (equals == std::string::npos && flag->value != FlagValue::boolean) {
      throw UsageError(fmt::format(
          "{} needs a value, written {}=VALUE (Google Benchmark flags take '=', not a space)", name,
          name));
    }
    if (const std::string problem = benchmark_value_problem(*flag, value); !problem.empty()) {
      throw UsageError(fmt::format("{}={}: {}", name, value, problem));
    }
    if (name == "--benchmark_enable_random_interleaving" && flag_is_true(value)) {
      throw UsageError(
          "--benchmark_enable_random_interleaving cannot be used: it shuffles the benchmark "
          "order differently on every rank, and ranks must run the same sequence");
    }
    if (flag->value == FlagValue::min_time) value = without_seconds_suffix(value);
    if (!flag->display_only) flags.emplace_back(std::move(name), std::move(value));
  }
  return flags;
}

int benchmark_repetitions(const std::vector<std::pair<std::string, std::string>>& flags) {
  int repetitions = 1;
  for (const auto& [name, value] : flags) {
    // benchmark_run_flags has checked that it is a whole number from 1 to
    // kMaxRepetitions, written in digits.
    if (name == "--benchmark_repetitions") repetitions = std::stoi(value);
  }
  return repetitions;
}

std::vector<std::pair<std::string, std::string>> configuration_fields(
    const Options& options,
    const std::vector<std::pair<std::string, std::string>>& benchmark_flags) {
  std::vector<std::pair<std::string, std::string>> fields = {
      {"--algorithms",
       options.all_algorithms ? "all" : fmt::format("{}", fmt::join(options.algorithms, ","))},
      {"--library-algorithms", options.library_algorithms ? "yes" : "no"},
      {"--sizes", fmt::format("{}", fmt::join(options.sizes, ","))},
      {"--segment", std::to_string(options.segment_bytes)},
      {"--dtype", std::string(to_string(options.dtype))},
      {"--op", std::string(to_string(options.op))},
      {"--families", fmt::format("{}", fmt::join(options.families, ","))},
      {"--workload", fmt::format("{}", fmt::join(options.workloads, " "))},
      {"--gemm-models", fmt::format("{}", fmt::join(options.gemm_models, ","))},
      {"--gemm-batches", fmt::format("{}", fmt::join(options.gemm_batches, ","))},
      {"--blas-threads", std::to_string(options.blas_threads)},
      {"--train-batch", std::to_string(options.train_batch)},
      {"--compute-scale", fmt::format("{}", options.compute_scale)},
      {"--timeline", options.timeline_path},
      {"--transport", options.transport},
      {"--ranks", std::to_string(options.ranks)},
      {"--bootstrap", options.bootstrap},
      {"--ofi-provider", options.ofi_provider},
      {"--list-providers", options.list_providers ? "yes" : "no"},
      {"--list-algorithms",
       options.list_algorithms ? (options.list_algorithms_csv ? "csv" : "yes") : "no"},
      {"--check", options.check ? "yes" : "no"},
      {"--warmup", std::to_string(options.warmup)},
      {"--min-samples", std::to_string(options.min_samples)},
      {"--samples", std::to_string(options.samples)},
      {"--sync", std::string(to_string(options.sync))},
      {"--interleave", options.interleave ? "yes" : "no"},
      {"--timeout", options.timeout_seconds < 0 ? std::string("default")
                                                : fmt::format("{}", options.timeout_seconds)},
      {"--debug-slow-rank", std::to_string(options.debug_slow_rank)},
      {"--debug-slow-us", fmt::format("{}", options.debug_slow_us)},
      {"--debug-late-rank", std::to_string(options.debug_late_rank)},
      {"--debug-corrupt-elements", std::to_string(options.debug_corrupt_elements)},
      {"--debug-share-messages-from", std::to_string(options.debug_share_messages_from)},
      {"--debug-skip-connection-warmup", options.debug_skip_connection_warmup ? "yes" : "no"},
      {"--debug-stuck-rank", std::to_string(options.debug_stuck_rank)},
      {"--debug-crash-rank", std::to_string(options.debug_crash_rank)},
      {"--debug-fault-after", std::to_string(options.debug_fault_after)},
  };
  // Each Google Benchmark flag is a field of its own; main treats a flag
  // given on one rank only as a difference too.
  for (const auto& flag : benchmark_flags) fields.push_back(flag);
  return fields;
}

}  // namespace collbench::harness
