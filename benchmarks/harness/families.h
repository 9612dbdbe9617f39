// The benchmark families: which benchmarks a configuration registers
// (plan_cases, planner.h) and the Runner, which times one benchmark's calls.
// What one call of each family does, and which of its benchmarks a
// configuration plans, is the family's (family.h, planner.h), one file each;
// the registry (family_registry.h) lists them, with their --families names
// and the benchmark names each registers (collbench --help prints those).
//
// Lock-step: every rank registers the same list in the same order and runs
// the same iterations; each iteration's time is the slowest rank's (which
// also says which rank that was), fed to Google Benchmark as manual time, so
// its iteration-count decisions, which depend only on that time, are
// identical on every rank.
//
// The harness's own collectives (the barrier, the slowest rank's time, the
// sums and agreements, rank 0's decisions) and its clock are one interface,
// HarnessGroup (harness_group.h), chosen by the constructor: an MPI process
// is one rank (MPI_Iallreduce MAXLOC and the like over a communicator of the
// harness's own); or every rank is in this one process (`--transport
// inproc|sim --ranks N`, no MPI), where the Runner holds one RunContext and
// PreparedCase per rank and runs each step (preparing, the check, each
// sample's calls) on all of them through a RankGroup, from Google
// Benchmark's thread, and a wait that times out throws, ending the run with
// its message (status 1); or one rank per process without MPI
// (`--transport ofi --bootstrap file:DIR`), whose collectives go over the
// transport itself.
//
// Sample count: every call of Google Benchmark times at least
// --min-samples samples (exactly --samples when given), and more when its
// request (max_iterations, grown until the samples' total reaches
// --benchmark_min_time) is larger; all of one call's samples run in a
// single KeepRunningBatch step, whose documented overshoot makes it count
// exactly the iterations timed. Registering with Iterations(n) instead
// would fix the count before anything is timed and put "iterations:n" into
// every benchmark's name (and the --benchmark_filter match).
//
// Connections: at the start of the first benchmark every pair of ranks
// exchanges messages over the transport, in rounds for at least 100 ms
// (connect_every_pair), so that no connection set-up lands in a timed call;
// each timed loop checks that every peer has been addressed.
//
// Set-up happens outside timing: the family allocates and page-touches the
// buffers and builds the algorithm on the first call of a benchmark, and
// they are kept for the later calls Google Benchmark makes while it settles
// the iteration count (only one benchmark's buffers live at a time; the
// family may let the next benchmark reuse them, see PreparedCase::adopt).
// Then, once per benchmark, the untimed calls: the --check calls first,
// which count as kCheckedCalls of the --warmup calls; then the timed loop.
//
// Hang protection: every wait of the harness's own (the barrier, the
// iteration-time reduction, the agreement on check results, the sleeping
// wait of p2p and local) is bounded by the --timeout deadline, as the
// transports' waits are; under MPI it polls a non-blocking call. A rank
// whose wait times out tells the others where it is and listens for a while
// for the ones that also wait; the lowest rank heard from names the
// benchmark, its size and the ranks that never arrived, and takes the job
// down (MPI_Abort, exit 1): harness_group_mpi.cpp, with report_timeout's
// line.
// The MPI library's own blocking collectives (`mpi`, `mpi_bare`) cannot
// be bounded: a watchdog thread, which makes no MPI call, ends the process
// (and mpirun the job) when one has not returned long after the timeout.
//
// Whose time counts: every rank's (the sample is the slowest rank's), except
// for the ping-pong and the local kernels of rank 0 alone, where only rank
// 0's does (the other ranks contribute 0 to the MAX, and wait in a sleeping
// poll: p2p_family.cpp, local_family.cpp).
#pragma once

#include <benchmark/benchmark.h>
#include <mpi.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "clock_sync.h"
#include "collbench/catalog/workload.h"
#include "collbench/collectives/algorithm.h"
#include "collbench/collectives/collective.h"
#include "collbench/transport/instrumented_transport.h"
#include "collbench/transport/rank_group.h"
#include "core_handoff.h"
#include "family.h"
#include "harness_group.h"
#include "metadata.h"
#include "options.h"
#include "progress.h"

namespace collbench::harness {

// One step of a train iteration's compute side (train_plan.cpp): a GEMM
// layer's forward or backward pass, handing a message to the communication
// side (messages are handed in order, each once), or waiting until one has
// been exchanged (a layer that needs its gathered parameters).
struct TrainStep {
  enum class Kind : std::uint8_t { forward, backward, hand, wait };
  Kind kind = Kind::forward;
  std::size_t index = 0;  // the layer (forward order), or the message
  bool operator==(const TrainStep&) const = default;
};

struct BenchmarkCase {
  std::string name;  // Google Benchmark's function name
  // Its family's runner (family.h), set by the family's planning.
  const FamilyRunner* family = &collective_family();
  // collective and exchange (its first message's collective)
  const CollectiveInfo* collective = nullptr;
  const AlgorithmInfo* algorithm = nullptr;
  // Bytes per rank of each message of one call: one message, except for
  // exchange, whose messages are the workload's sequence.
  std::vector<std::uint64_t> message_bytes;
  // exchange: each message's collective, in the workload's order (an FSDP
  // iteration's allgathers and reduce_scatters), each run by its algorithm
  // of `algorithm`'s name; empty: every message is `collective`'s.
  std::vector<const CollectiveInfo*> message_collectives;
  // alltoallv messages' token routing (CollectiveSpec::routing), one per
  // message; empty: the default (uniform dispatch) for every message.
  std::vector<TokenRouting> message_routings;
  // exchange: messages of this size or more share buffers (message_slots).
  std::uint64_t shared_message_bytes = kSharedMessageBytes;
  int peer = -1;  // p2p ping-pong (sendrecv: every rank has two, r-1 and r+1)
  // Where a size came from (--workload); empty for --sizes.
  std::string workload;
  std::string model;
  std::string item;
  int multiplicity = 0;
  // local_gemm: the per-rank batch (0 for the peak), "forward", "backward"
  // or "peak", and the layer's forward product at that batch (a square one
  // for the peak), from which the pass's products follow (GemmLayer).
  int batch = 0;
  std::string pass;
  GemmLayer gemm;
  // The pass's multiply-adds x 2 (local_gemm), for the flops column.
  double flops() const;
  // train: each bucket's ready layer (the GEMM layer, forward index, after
  // whose backward the bucket's gradients all exist), in bucket order; and
  // whether the exchange is switched off (train/none: the compute alone).
  std::vector<std::size_t> bucket_ready_layers;
  // train: the iteration's compute side in order, and each message's name
  // (a bucket's, or the catalog's item: "layer1 forward"); the messages
  // (message_bytes, message_collectives) are in the order it hands them.
  std::vector<TrainStep> train_steps;
  std::vector<std::string> message_items;
  bool compute_only = false;
  std::uint64_t compute_bytes = 0;  // train: the GEMM layers' buffers
  // allreduce/mpi_bare: `algorithm` is mpi (its buffers), but each call is
  // MPI_Allreduce on them directly and the timed loop has no barrier.
  bool bare = false;

  // Filled on the first call of each round (--interleave rebuilds the
  // algorithm object every round, and each one is checked), identical on
  // every rank. wrong_elements is the latest round's, for its row;
  // wrong_elements_all_rounds decides the exit status.
  bool checked = false;
  int checked_round = -1;
  std::uint64_t wrong_elements = 0;
  std::uint64_t wrong_elements_all_rounds = 0;
  std::string check_detail;  // the first wrong element, when any
  bool calibrated = false;   // calls_per_sample below
  // Calls timed together as one sample. A local/* kernel at small sizes
  // takes nanoseconds and a ping-pong a few microseconds, far less than the
  // barrier, the MAX-allreduce and the sleeping wait around every sample;
  // a sample then runs a batch of calls back to back (calibrated once to
  // take about kBatchSeconds, as OSU's latency loop) through Google
  // Benchmark's KeepRunningBatch, so each call still counts as one
  // iteration and the statistics are over the batches' per-call means.
  // 1 for allreduce and exchange, whose every call is timed on its own.
  std::uint64_t calls_per_sample = 1;

  std::uint64_t bytes() const;  // per rank per call: the sum of message_bytes
  // The CSV's family column: the collective's name, "exchange", "p2p",
  // "local", ...; and its algorithm column (the family's, family.h).
  std::string family_column() const;
  std::string algorithm_column() const;
  // For each message, the message whose buffers and algorithm object it
  // runs on: its own, or for a message of shared_message_bytes or more the
  // first one of the same collective, size and routing (an FSDP iteration
  // gathers each unit's parameters twice; a framework reuses such buffers
  // too).
  std::vector<std::size_t> message_slots() const;
  // Message `index`'s collective, routing and algorithm.
  const CollectiveInfo& collective_of(std::size_t index) const;
  TokenRouting routing_of(std::size_t index) const;
  const AlgorithmInfo& algorithm_of(std::size_t index) const;
  // The CSV's collective column: the collective's name; an exchange's
  // collectives in order of first use, joined by '+'
  // ("allgather+reduce_scatter").
  std::string collective_column() const;
  // Whether any message is of a collective that reduces (the op column).
  bool reduces() const;
  // nccl-tests' bus-bandwidth factor: the collective's; for an exchange its
  // messages' factors weighted by their bytes (busbw = Σ n_k·f_k / t); 1
  // for p2p and local.
  double bus_bandwidth_factor(int ranks) const;
  // Bytes per rank the case allocates (buffers and algorithm workspace).
  std::uint64_t memory_bytes(int ranks) const;
};

struct CasePlan {
  std::vector<BenchmarkCase> cases;
  // Combinations left out of an `all` sweep and why, for rank 0 to print.
  std::vector<std::string> notes;
};

// The benchmarks `options` asks for on `ranks` ranks of `transport_kind`,
// in registration order. Throws UsageError when an explicitly named
// algorithm cannot run here, or when a benchmark needs more than
// `memory_limit_per_rank` bytes per rank (0: no limit). `rank_nodes`: each
// rank's node, for the algorithms that need as many ranks on every node
// (empty: one node per rank).
CasePlan plan_cases(const Options& options, const std::vector<Workload>& workloads,
                    std::string_view transport_kind, int ranks, std::uint64_t memory_limit_per_rank,
                    std::vector<int> rank_nodes = {});

// Target duration of one timed sample (a batch of calls) of p2p and local.
inline constexpr double kBatchSeconds = 100e-6;

// Every rank's median per-call time, the label of a run in which every
// rank's time counts: kRankMedianLabel, then microseconds in rank order,
// ';'-separated (the CSV's rank_median_us column is the part after it).
inline constexpr std::string_view kRankMedianLabel = "rank_median_us=";
std::string rank_median_label(const std::vector<double>& medians_seconds);

// Counters every successful run sets (Google Benchmark user counters):
//   bytes, ranks, min_us, median_us, mean_us, p99_us, max_us, algbw_GBps,
//   busbw_GBps, wrong_elements, calls_per_sample, samples, and sent_bytes_per_rank where the
//   traffic goes through the transport (not for local or the MPI library's own); where every
//   rank's time counts (FamilyRunner::every_rank_timed) also slowest_rank and slowest_rank_share,
//   and the run's label (rank 0) is rank_median_label; and set_convention_counters' (the OSU-
//   and nccl-tests-comparable times, --sync window's).
class LoadWatch;

class Runner {
 public:
  // This process is one rank of an MPI job; the harness's own collectives
  // go over `timing_comm`.
  Runner(const Options& options, InstrumentedTransport& transport, MPI_Comm timing_comm,
         Progress& progress);
  // Every rank of the job is in this process, in `group` (see above).
  Runner(const Options& options, RankGroup& group, Progress& progress);
  // This process is one rank of a job without MPI (--bootstrap file:DIR):
  // the harness's own collectives go over `transport` itself, with tags
  // below kFirstSlotTag, and a wait that times out ends the run with the
  // transport's message.
  Runner(const Options& options, InstrumentedTransport& transport, Progress& progress);
  ~Runner();
  Runner(const Runner&) = delete;
  Runner& operator=(const Runner&) = delete;

  // One Google Benchmark call of `benchmark_case`. Check failures are
  // reported with state.SkipWithError on every rank; any other error aborts
  // the job (MPI_Abort) with a message, since a rank that stopped alone
  // would leave the others waiting forever; a timeout first finds out
  // which ranks had not arrived (see above).
  // `round` is the repetition under --interleave (each round a registration
  // of its own), 0 otherwise.
  void run(benchmark::State& state, BenchmarkCase& benchmark_case, int round);
  // Frees the current benchmark's buffers and algorithm.
  void release();
  // From now on every run gets the load other work put on the job's nodes
  // during its benchmark (load_watch.h); `ranks_on_my_node` counts this
  // process's ranks too.
  void watch_load(int ranks_on_my_node);

 private:
  class Watchdog;
  class Context;  // the RunContext the families get (family.h)
  struct Samples;
  // A rank this process runs: its transport, context and prepared case.
  struct LocalRank {
    // In a group: the group's rank's transport, instrumented here (the
    // group's own count nothing and do not bound their waits).
    std::unique_ptr<InstrumentedTransport> instrumented;
    InstrumentedTransport* transport = nullptr;  // `instrumented`, or the MPI process's
    // Before prepared, which holds it: destroyed after it.
    std::unique_ptr<Context> context;
    std::unique_ptr<PreparedCase> prepared;
    double seconds = 0;               // its latest call's
    CheckResult check;                // its latest --check calls'
    std::vector<double> own_seconds;  // per call, of every sample of the timed loop
    double late = 0;                  // --sync window: its latest start's lateness, seconds
  };
  // The members every public constructor sets, which delegates here.
  Runner(const Options& options, std::vector<LocalRank> local, int rank, int ranks,
         Progress& progress);
  // This process's one rank (an MPI process, or one rank without MPI), or
  // every rank of `group`.
  static std::vector<LocalRank> one_local_rank(InstrumentedTransport& transport);
  static std::vector<LocalRank> local_ranks(RankGroup& group);
  // What every constructor does once the local ranks and `group` are there.
  void start_up(std::unique_ptr<HarnessGroup> group);
  // `body` on every rank of this process: directly (one), or on all of
  // them at once through the group.
  void each_rank(const std::function<void(LocalRank&)>& body);
  LocalRank& local_rank(int rank);
  // The slowest rank's time of the latest call (the lowest rank of equal
  // ones), over the job.
  SecondsOnRank slowest_call(const char* what);
  // The sum over the job's ranks of `value(rank)` of the local ranks.
  std::uint64_t job_sum(const std::function<std::uint64_t(const LocalRank&)>& value,
                        const char* what);
  // At the start of the first benchmark: every pair of ranks exchanges
  // messages over the transport, so that no connection is set up inside a
  // timed call.
  void connect_every_pair();
  // Every rank's median of its own per-call times, on rank 0 (empty
  // elsewhere). Reorders their own_seconds.
  std::vector<double> gather_medians();
  void run_unguarded(benchmark::State& state, BenchmarkCase& benchmark_case, int round);
  // The timeout of its size, progress and --debug-fault-after's count at a
  // benchmark's first call; the connection warm-up at the first benchmark's.
  void start(const BenchmarkCase& benchmark_case, int round);
  // The family's buffers and algorithm for `benchmark_case` on every local
  // rank: the current ones, the previous benchmark's when they serve it,
  // or new ones.
  void prepare(const BenchmarkCase& benchmark_case);
  // The untimed calls before the timed loop: --check (false, with the error
  // set on `state`, when it found wrong elements), warm-up, calibration.
  bool get_ready(benchmark::State& state, BenchmarkCase& benchmark_case, int round);
  // The family's --check calls, and every rank's agreement on their result.
  void check(BenchmarkCase& benchmark_case);
  void calibrate_batch(BenchmarkCase& benchmark_case);
  // One call on every local rank (each rank's time in LocalRank::seconds),
  // after the barrier unless `synchronized` is false.
  void call_everywhere(const BenchmarkCase& benchmark_case, bool synchronized);
  std::uint64_t sample_count(const benchmark::State& state,
                             const BenchmarkCase& benchmark_case) const;
  void expect_every_peer_contacted() const;
  // The timed loop: every sample's time, the slowest rank's (and this
  // rank's own).
  Samples time_samples(benchmark::State& state, const BenchmarkCase& benchmark_case);
  // The counters of a run (see above) from its samples, which it reorders.
  void set_counters(benchmark::State& state, const BenchmarkCase& benchmark_case,
                    Samples& measured);
  // The load counters of the run, from every rank's readings (load_watch.cpp).
  void record_load(benchmark::State& state);
  // The barrier before a call on `rank`, unless --sync none.
  void synchronize(InstrumentedTransport& rank);
  // Runs `work`, which sends through the transport for the harness, keeping
  // what it sends out of the CSV's counts (the algorithm's alone).
  template <typename Work>
  void uncounted(Work&& work) {
    harness::uncounted(transport_, harness_traffic_, std::forward<Work>(work));
  }
  // What a timeout's report says of this rank (TimeoutReport::where).
  Whereabouts whereabouts() const;
  // On the lowest rank heard from after a timeout (the MPI group's): the one
  // line that names the benchmark, where it stopped and the ranks that had
  // not arrived.
  void report_timeout(const Arrivals& arrivals, const std::string& detail);
  // --debug-stuck-rank and --debug-crash-rank, on `rank`.
  void inject_fault(int rank) const;

  // timing_conventions.cpp: the OSU- and nccl-tests-comparable times and
  // --sync window.
  // --sync window: the clocks synchronized at the first benchmark; at each
  // benchmark's first call the residual clock error and the window (from
  // probe calls).
  void prepare_windows(const BenchmarkCase& benchmark_case);
  // Right before the timed loop: every rank's first start.
  void agree_on_windows();
  // Context::synchronize in the timed loop under --sync window: waits for
  // the rank's next start and records its lateness.
  void start_in_window(const Transport& transport);
  // Whether a sample whose slowest time is `slowest_seconds` started late
  // (then counted, and every rank's schedule moved past its lateness).
  bool late_start(double slowest_seconds);
  // Seconds on `local`'s clock (its RunContext's).
  double now(const LocalRank& local) const;
  // A barrier on `local`'s rank, whatever --sync says.
  void barrier_on(LocalRank& local, const char* what);
  // The mean over the job's ranks of `value(rank)` of the local ranks.
  double job_mean(const std::function<double(const LocalRank&)>& value, const char* what);
  // osu_avg_us, nccl_avg_us (after a batch of back-to-back calls), and
  // --sync window's window_us, clock_error_us and late_starts.
  void set_convention_counters(benchmark::State& state, const BenchmarkCase& benchmark_case);

  // Where this rank is, for the timeout report.
  enum class Phase { connect, setup, check, warmup, calibration, timed, after };

  const Options& options_;
  std::vector<LocalRank> local_;  // by rank, from this process's first
  // The first local rank's: the one rank of an MPI process, or rank 0.
  InstrumentedTransport& transport_;
  // The mpi transport's communicator, the one `mpi` uses (mpi_bare); else null.
  MPI_Comm bare_comm_ = MPI_COMM_NULL;
  Progress& progress_;
  int rank_ = 0;  // this process's (0 in a group: it reports)
  int ranks_ = 0;
  // What the harness itself sent through transport_, since the timed loop
  // reset its counters.
  HarnessTraffic harness_traffic_;
  std::unique_ptr<HarnessGroup> group_;             // the harness's collectives and clock
  std::unique_ptr<Watchdog> watchdog_;              // with a timeout only
  std::unique_ptr<CoreHandoffProbe> core_handoff_;  // MPI only
  std::unique_ptr<LoadWatch> load_watch_;           // after watch_load only
  int benchmark_index_ = -1;  // benchmarks (rounds of one, under --interleave) started, minus one
  // The registration Google Benchmark is calling: its first call starts a
  // benchmark (progress, --debug-fault-after).
  std::pair<const BenchmarkCase*, int> current_{nullptr, -1};
  Phase phase_ = Phase::setup;
  bool connected_ = false;                // connect_every_pair ran (at the first benchmark)
  std::uint64_t timed_calls_ = 0;         // of the current benchmark, over Google Benchmark's calls
  std::unique_ptr<SyncWindows> windows_;  // --sync window, from the first benchmark on
};

}  // namespace collbench::harness
