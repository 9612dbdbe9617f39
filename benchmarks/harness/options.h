// collbench's own command-line options (CLI11), parsed after Google
// Benchmark has removed its --benchmark_* flags from argv.
//
// Bad input is a UsageError: main prints it as one line from rank 0 and
// exits with status 2 before any output file exists.
#pragma once

#include <chrono>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "collbench/core/dtype.h"
#include "sim_options.h"

namespace collbench::harness {

class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

enum class SyncMode { barrier, none, window };
// The --sync value's name, as --sync takes it and the CSV's sync column
// records it.
std::string_view to_string(SyncMode mode);
// Every SyncMode, in --sync's order.
inline constexpr SyncMode kSyncModes[] = {SyncMode::barrier, SyncMode::none, SyncMode::window};

// --train-batch by default: a per-rank batch at which ResNet-50's compute
// and its gradient's exchange are of one order on a 10 GbE-class link.
inline constexpr int kDefaultTrainBatch = 32;

// --gemm-models when neither it nor --workload names a model: a CNN of the
// paper, the ResNet that replaced it, and a transformer.
inline constexpr const char* kDefaultGemmModels[] = {"alexnet", "resnet50", "bert_base"};
// --gemm-batches by default: the per-rank batches of the paper's range.
inline constexpr const char* kDefaultGemmBatches = "1:256";
// The largest per-rank batch --gemm-batches accepts: beyond it the products
// of one layer need tens of GB.
inline constexpr int kMaxGemmBatch = 4096;

// Timed samples per benchmark and repetition unless --min-samples says
// otherwise: enough for a median and a spread, never one or two.
inline constexpr int kDefaultMinSamples = 10;

// Messages this large share buffers within one exchange
// (BenchmarkCase::message_slots): a copy per message would not fit
// (llama2_7b:fsdp allgathers 13 GB of bf16 parameters twice per iteration;
// mixtral_8x7b:moe sends 128 alltoallvs of 64 MiB, 16 GiB of buffers per
// rank unshared), and no CPU cache holds two of them, so the times do not
// change.
inline constexpr std::uint64_t kSharedMessageBytes = std::uint64_t{64} << 20;

// Flags about samples, warm-up and repetitions, collbench's and Google
// Benchmark's: a transport may refuse them (SingleProcessTransport).
inline constexpr const char* kSamplingFlags[] = {
    "--samples",    "--min-samples",           "--warmup",
    "--interleave", "--benchmark_repetitions", "--benchmark_min_time"};

// --bootstrap file:DIR.
inline constexpr const char* kFileBootstrapPrefix = "file:";

struct Options {
  bool all_algorithms = true;
  std::vector<std::string> algorithms;  // validated names, in the order given
  // --library-algorithms: every row of the MPI library's algorithms forced
  // one by one (ompi_*) besides those --algorithms selects; never in `all`.
  bool library_algorithms = false;
  std::string sizes_text = "8B:64MiB";
  std::vector<std::uint64_t> sizes;  // bytes per rank, from sizes_text
  bool sizes_given = false;          // --sizes appeared on the command line
  // --segment: the pipeline segment of the algorithms that travel in
  // segments (CollectiveSpec::segment_bytes); 0 = their default.
  std::uint64_t segment_bytes = 0;
  DType dtype = DType::f32;
  ReduceOp op = ReduceOp::sum;
  std::string transport = "mpi";
  // --ranks: the rank count of a transport whose ranks all run in this
  // process (single_process.h); 0 when not given.
  int ranks = 0;
  // How the ranks find each other: "mpi" (the launcher's MPI job), or
  // "file:DIR" for --transport ofi started without mpirun, one process per
  // `rank` (--rank) of `ranks`.
  std::string bootstrap = "mpi";
  // --transport sim: the simulated cluster (sim_options.h).
  SimFlags sim;
  int rank = -1;  // --rank: not given
  // Those of kSamplingFlags that are collbench's own and were given.
  std::vector<std::string> sampling_flags_given;
  std::string ofi_provider;
  bool list_providers = false;
  // --list-algorithms: print the algorithm registry and exit; as CSV when a
  // bare --csv (no PATH) goes with it.
  bool list_algorithms = false;
  bool list_algorithms_csv = false;
  bool check = false;
  std::string csv_path;
  bool append = false;
  bool force = false;
  int warmup = 1;
  // Timed samples per row (a sample is one call, or for p2p and local a
  // batch of calls_per_sample calls): at least min_samples, more when
  // --benchmark_min_time asks for more; exactly `samples` when that is set
  // (> 0), whatever the time.
  int min_samples = kDefaultMinSamples;
  int samples = 0;
  SyncMode sync = SyncMode::barrier;
  // --interleave: the --benchmark_repetitions run in rounds, each round every
  // benchmark once (see main.cpp).
  bool interleave = false;
  std::vector<std::string> families;  // --families names (family_registry.h)
  bool families_given = false;        // --families appeared (not the default list)
  // --families gemm: the catalog models whose GEMM layers run (empty: the
  // --workload models, or kDefaultGemmModels without any), at these
  // per-rank batches, with OpenBLAS on this many threads per rank.
  std::vector<std::string> gemm_models;
  std::vector<int> gemm_batches;
  int blas_threads = 1;
  // --families train: the per-rank batch of its GEMMs, the factor that
  // shrinks them (--compute-scale: rows, or attention's products, times it),
  // and where to write one iteration's timeline per train benchmark.
  int train_batch = kDefaultTrainBatch;
  double compute_scale = 1;
  std::string timeline_path;
  std::vector<std::string> workloads;  // --workload specs, as given
  bool quiet = false;
  bool progress = false;              // --progress: show it even when stderr is not a terminal
  double progress_lines_seconds = 0;  // --progress-lines: new lines this often (0: in place)
  std::string run_id;                 // empty: made up by rank 0
  // --timeout; negative when not given: then each benchmark gets
  // default_timeout_seconds(its bytes, ranks).
  double timeout_seconds = -1;
  int debug_slow_rank = -1;
  double debug_slow_us = 0;
  int debug_late_rank = -1;
  std::uint64_t debug_corrupt_elements = 0;
  // Exchange messages of at least this many bytes of one collective and size
  // share buffers (BenchmarkCase::message_slots); tests lower it.
  std::uint64_t debug_share_messages_from = kSharedMessageBytes;
  bool debug_skip_connection_warmup = false;
  // Set for a simulated transport (SingleProcessTransport::deterministic):
  // no connection to set up, so no connection warm-up and no check of it.
  bool no_connections = false;
  // Also set for a simulated transport: its one call is the time, and
  // nccl_avg_us's batch of kNcclBatchCalls more calls would simulate the
  // collective that many times again (most of a sim study's CPU): left out.
  bool no_nccl_batch = false;
  int debug_stuck_rank = -1;
  int debug_crash_rank = -1;
  int debug_fault_after = 0;  // benchmarks that finish before the stuck or crash fault

  bool has_family(const std::string& family) const;
  // --bootstrap file:DIR's DIR; empty under the mpi bootstrap.
  std::string bootstrap_folder() const;
  // The floor in force: --samples when it fixes the count, else --min-samples.
  int sample_floor() const { return samples > 0 ? samples : min_samples; }
};

// The --timeout of a benchmark moving `bytes` per rank per call on `ranks`
// ranks when none is given: 60 s plus the 2(p−1)·n bytes ps_central's root
// moves, at 10 MB/s (a 100 Mbit/s port, slower than any fabric collbench is
// pointed at), so a healthy run never reaches it and a hang of a small
// benchmark ends within a minute or two.
double default_timeout_seconds(std::uint64_t bytes, int ranks);

// `seconds` of a timeout (>= 0, at most a year) as the transports take it:
// to the nearest millisecond, but at least 1 ms, so 0.0004 s is 1 ms and not
// 0 (which means "wait forever"). Only 0 gives 0.
std::chrono::milliseconds timeout_milliseconds(double seconds);

// What bounds the start-up exchanges (the bootstrap, the transport's
// set-up, a group's first steps) on `ranks` ranks: --timeout, or without it
// the default of a benchmark of no bytes. The Runner sets each benchmark's own.
std::chrono::milliseconds start_up_timeout(const Options& options, int ranks);

// Parses `args` (argv without the program name, Google Benchmark's flags
// already removed). Throws UsageError.
Options parse_options(const std::vector<std::string>& args);

// Checks what depends on the job's size: a rank named by --debug-slow-rank,
// --debug-stuck-rank or --debug-crash-rank must exist, and a stuck rank
// needs another rank to notice it. Throws UsageError.
void validate_for_ranks(const Options& options, int ranks);

// What --list-algorithms prints: every algorithm of the registry, in its
// order, with whether it is hand-written or the MPI library's own and
// whether collbench-fit fits a cost model of its own to it. `csv`: a header
// line and one row per algorithm (columns in benchmarks/harness/README.md);
// otherwise an aligned table.
std::string algorithm_listing(bool csv);

// The text --help prints for collbench's own options (Google Benchmark's
// flags are printed after it by main).
std::string help_text();

// True for --help/-h anywhere in argv (handled before Google Benchmark sees
// it, because its Initialize() would print its own help and exit(0) without
// MPI_Finalize).
bool asks_for_help(const std::vector<std::string>& args);

// Google Benchmark flags that change what runs or how many iterations it
// takes, as (flag, value) pairs, from the original argv. Flags that only
// change how rank 0 displays or stores results (--benchmark_out,
// --benchmark_format, --benchmark_color, ...) are left out: they may
// legitimately differ. Every --benchmark_* argument (and --v) is checked
// first: an unknown name, a missing "=VALUE" or a bad value (a format,
// unit or number Google Benchmark would answer with its usage text and
// exit 0) throws UsageError, as does --benchmark_enable_random_
// interleaving=true, which shuffles the order differently on every rank.
std::vector<std::pair<std::string, std::string>> benchmark_run_flags(
    const std::vector<std::string>& args);

// Throws UsageError unless `run_id` has only letters, digits, '.', '_' and
// '-': the one rule of every tool that writes a run id (collbench,
// collbench-linkmatrix).
void validate_run_id(const std::string& run_id);

// `arg` as Google Benchmark 1.7.1 reads it: --benchmark_min_time=0.5s
// becomes --benchmark_min_time=0.5 (newer versions' spelling); any other
// argument is returned as it is.
std::string google_benchmark_argument(const std::string& arg);

// The --benchmark_repetitions among benchmark_run_flags' pairs (the last one
// given, as Google Benchmark reads it), 1 when none is.
int benchmark_repetitions(const std::vector<std::pair<std::string, std::string>>& flags);

// A Google Benchmark boolean flag's value as it reads it: "0", "f", "false",
// "n", "no", "off" (any case) are false, anything else, even "", is true.
bool flag_is_true(std::string value);

// Everything that must be equal on every rank, as (option, value) pairs in a
// fixed order: the configuration digest that main compares across ranks.
std::vector<std::pair<std::string, std::string>> configuration_fields(
    const Options& options,
    const std::vector<std::pair<std::string, std::string>>& benchmark_flags);

// Splits "a,b,,c" into {"a","b","c"}, trimming spaces.
std::vector<std::string> split_list(const std::string& text);

}  // namespace collbench::harness
