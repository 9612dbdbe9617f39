// CLI11 definition of collbench's own flags, --help and --list-algorithms;
// see options.h and options_cli.h.
#include "options_cli.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cstdint>

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
#include "single_process.h"

namespace collbench::harness {
namespace {

// A minute of --debug-slow-us: a slower rank only tests the default timeout.
constexpr double kMaxDebugSlowMicroseconds = 60e6;
// Untimed calls per benchmark: a million 64 MiB allreduces is already days.
constexpr std::int64_t kMaxWarmupCalls = 1000000;
// Timed samples per benchmark: every rank keeps each sample's time (8 bytes),
// reserved before the loop, so the count bounds that memory (80 MB).
constexpr std::int64_t kMaxSamples = 10000000;

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

}  // namespace

// --transport's kinds: those mpirun starts (this build's), then those whose
// ranks all run in this process.
std::vector<std::string> accepted_transports() {
  std::vector<std::string> kinds = transport_kinds();
  for (const SingleProcessTransport& transport : single_process_transports()) {
    kinds.emplace_back(transport.kind);
  }
  return kinds;
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

App::App() {
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
  auto* quiet =
      app.add_flag("--quiet", options.quiet,
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

}  // namespace collbench::harness
