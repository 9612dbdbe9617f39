// Benchmark families: planning and the timed calls; see families.h.
#include "families.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <csignal>
#include <cstdlib>
#include <mutex>
#include <numeric>
#include <optional>
#include <span>
#include <stdexcept>
#include <thread>

#include "collbench/catalog/sizes.h"
#include "collbench/core/check.h"
#include "collbench/transport/mpi_transport.h"
#include "load_watch.h"
#include "process_signals.h"
#include "statistics.h"

namespace collbench::harness {
namespace {

// The connection warm-up's tag; harness_group_transport.cpp has the
// harness's collectives' (10, 11, 17), p2p_family.cpp the ping-pong's (7) and
// the sendrecv chain's (8).
constexpr int kConnectTag = 9;

// Connection warm-up (Runner::connect_every_pair): rounds in which every
// rank exchanges a message with every other rank, until at least
// kConnectRounds rounds and kConnectSettle have passed. Why time as well as
// rounds: libfabric's rxm (tcp;ofi_rxm) handles connection events only
// every FI_OFI_RXM_CM_PROGRESS_INTERVAL (10 ms) of polling, and goes on
// after the first messages went through: on 4 ranks over tcp, rounds 1, 3
// and 4 each stalled ~10 ms (the first 30 ms), the rounds after took 0.1 ms.
constexpr int kConnectRounds = 3;
constexpr std::chrono::milliseconds kConnectSettle(100);

}  // namespace

std::string BenchmarkCase::family_column() const { return family->family_column(*this); }

std::string BenchmarkCase::algorithm_column() const { return family->algorithm_column(*this); }

std::vector<std::size_t> BenchmarkCase::message_slots() const {
  std::vector<std::size_t> slots;
  for (std::size_t k = 0; k < message_bytes.size(); ++k) {
    std::size_t slot = k;
    if (message_bytes[k] >= shared_message_bytes) {
      for (std::size_t earlier = 0; earlier < k; ++earlier) {
        if (message_bytes[earlier] == message_bytes[k] &&
            &collective_of(earlier) == &collective_of(k) && routing_of(earlier) == routing_of(k)) {
          slot = earlier;
          break;
        }
      }
    }
    slots.push_back(slot);
  }
  return slots;
}

const CollectiveInfo& BenchmarkCase::collective_of(std::size_t index) const {
  return message_collectives.empty() ? *collective : *message_collectives[index];
}

TokenRouting BenchmarkCase::routing_of(std::size_t index) const {
  return message_routings.empty() ? TokenRouting{} : message_routings[index];
}

const AlgorithmInfo& BenchmarkCase::algorithm_of(std::size_t index) const {
  if (message_collectives.empty()) return *algorithm;
  // The planner only pairs an algorithm name with collectives that have it.
  return *collective_of(index).find_algorithm(algorithm->name);
}

std::string BenchmarkCase::collective_column() const {
  if (collective == nullptr) return "";
  std::vector<std::string_view> names = {collective->name};
  for (const CollectiveInfo* other : message_collectives) {
    if (std::find(names.begin(), names.end(), other->name) == names.end()) {
      names.push_back(other->name);
    }
  }
  return fmt::format("{}", fmt::join(names, "+"));
}

bool BenchmarkCase::reduces() const {
  if (collective == nullptr) return false;
  return collective->reduces ||
         std::any_of(message_collectives.begin(), message_collectives.end(),
                     [](const CollectiveInfo* other) { return other->reduces; });
}

double BenchmarkCase::bus_bandwidth_factor(int ranks) const {
  if (collective == nullptr) return 1.0;
  if (message_collectives.empty()) return collective->bus_bandwidth_factor(ranks);
  double weighted = 0;
  double total = 0;
  for (std::size_t k = 0; k < message_bytes.size(); ++k) {
    const auto bytes = static_cast<double>(message_bytes[k]);
    weighted += bytes * collective_of(k).bus_bandwidth_factor(ranks);
    total += bytes;
  }
  return total > 0 ? weighted / total : 1.0;
}

std::uint64_t BenchmarkCase::bytes() const {
  std::uint64_t total = 0;
  for (const std::uint64_t message : message_bytes) total = saturating_add(total, message);
  return total;
}

// Bytes a message's input and output take beyond twice the message, on the
// rank with the most (an alltoallv's expert side holds p shares: a skewed
// routing gives rank 0 up to p·n), the layout priced in bytes as elements.
namespace {

std::uint64_t routed_share_bytes(const BenchmarkCase& benchmark_case, std::size_t index,
                                 int ranks) {
  const CollectiveInfo& message_collective = benchmark_case.collective_of(index);
  CollectiveSpec spec;
  spec.count = benchmark_case.message_bytes[index];
  spec.routing = benchmark_case.routing_of(index);
  std::uint64_t most = 0;
  for (int rank = 0; rank < ranks; ++rank) {
    const Block input = message_collective.input_block(spec, ranks, rank);
    const Block output = message_collective.output_block(spec, ranks, rank);
    most = std::max<std::uint64_t>(most, input.count + output.count);
  }
  return most > 2 * spec.count ? most - 2 * spec.count : 0;
}

}  // namespace

std::uint64_t BenchmarkCase::memory_bytes(int ranks) const {
  // A gemm case's one message is its operand buffers.
  if (family == &local_gemm_family()) return bytes();
  std::uint64_t total = compute_bytes;
  const std::vector<std::size_t> slots = message_slots();
  for (std::size_t k = 0; k < message_bytes.size(); ++k) {
    if (slots[k] != k) continue;  // on an earlier message's buffers
    const std::uint64_t message = message_bytes[k];
    // input and output (p2p: send and receive; local: dst and src); for
    // the collectives whose input or output is a block or empty (reduce_scatter,
    // allgather, broadcast, reduce), counted whole.
    total = saturating_add(total, saturating_multiply(2, message));
    if (algorithm == nullptr) continue;
    total = saturating_add(total, routed_share_bytes(*this, k, ranks));
    // The algorithms' workspace formulas (at most about message x ranks)
    // are unchecked; a message this large cannot be allocated anyway.
    const auto ranks_and_margin = static_cast<std::uint64_t>(std::max(ranks, 1)) + 2;
    if (saturating_multiply(message, ranks_and_margin) == kSaturatedBytes) return kSaturatedBytes;
    total = saturating_add(total, algorithm_of(k).workspace_bytes(ranks, message));
  }
  return total;
}

// ---------------------------------------------------------------------------

namespace {

std::string size_text(const BenchmarkCase& benchmark_case) {
  if (benchmark_case.message_bytes.size() == 1) {
    return fmt::format("{} per rank", format_bytes(benchmark_case.bytes()));
  }
  return fmt::format("{} per rank in {} messages", format_bytes(benchmark_case.bytes()),
                     benchmark_case.message_bytes.size());
}

}  // namespace

class Runner::Watchdog {
 public:
  explicit Watchdog(int rank) : rank_(rank), thread_([this] { watch(); }) {}
  ~Watchdog() {
    {
      const std::lock_guard<std::mutex> lock(mutex_);
      stop_ = true;
    }
    wake_.notify_one();
    thread_.join();
  }
  Watchdog(const Watchdog&) = delete;
  Watchdog& operator=(const Watchdog&) = delete;

  void arm(const BenchmarkCase& benchmark_case, std::chrono::milliseconds timeout) {
    case_.store(&benchmark_case, std::memory_order_relaxed);
    // Well after every bounded wait has timed out and been reported;
    // staggered by rank so that one rank speaks first.
    const auto limit =
        timeout + std::chrono::seconds(10) + std::chrono::milliseconds(200) * std::min(rank_, 50);
    limit_ms_.store(limit.count(), std::memory_order_relaxed);
    since_.store(Clock::now().time_since_epoch().count(), std::memory_order_release);
  }
  void disarm() { since_.store(0, std::memory_order_relaxed); }

 private:
  using Clock = std::chrono::steady_clock;

  void watch() {
    std::unique_lock<std::mutex> lock(mutex_);
    while (!wake_.wait_for(lock, std::chrono::milliseconds(250), [this] { return stop_; })) {
      const Clock::rep since = since_.load(std::memory_order_acquire);
      const std::chrono::milliseconds limit(limit_ms_.load(std::memory_order_relaxed));
      if (since == 0 || Clock::now() - Clock::time_point(Clock::duration(since)) < limit) continue;
      const BenchmarkCase& stuck = *case_.load(std::memory_order_relaxed);
      fmt::print(stderr,
                 "collbench: rank {}: {} ({}): the MPI library's own call has not returned "
                 "after {} s and --timeout cannot interrupt it, so this rank ends the job; the "
                 "ranks that had not arrived cannot be named from inside the library (--sync "
                 "barrier, the default, names a rank that stops before the call)\n",
                 rank_, stuck.name, size_text(stuck),
                 std::chrono::duration_cast<std::chrono::seconds>(limit).count());
      std::fflush(stderr);
      std::_Exit(1);
    }
  }

  const int rank_;
  std::atomic<std::chrono::milliseconds::rep> limit_ms_{0};
  std::atomic<Clock::rep> since_{0};  // 0: no library call in progress
  std::atomic<const BenchmarkCase*> case_{nullptr};
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stop_ = false;
  std::thread thread_;  // last: starts once everything above is initialized
};

// What the Runner lends the families (family.h), one per local rank.
class Runner::Context final : public RunContext {
 public:
  Context(Runner& runner, InstrumentedTransport& transport)
      : runner_(runner), transport_(transport) {}
  const Options& options() const override { return runner_.options_; }
  Transport& transport() const override { return transport_; }
  int rank() const override { return transport_.rank(); }
  int ranks() const override { return runner_.ranks_; }
  void synchronize() override {
    if (runner_.windows_ && runner_.phase_ == Phase::timed) {
      runner_.start_in_window(transport_);
    } else {
      runner_.synchronize(transport_);
    }
  }
  void wait_for_all_ranks_sleeping() override {
    runner_.group_->sleeping_barrier(transport_, "the barrier after a p2p or local call");
  }
  void library_call_started(const BenchmarkCase& benchmark_case) override {
    if (runner_.watchdog_) runner_.watchdog_->arm(benchmark_case, transport_.timeout());
  }
  void library_call_returned() override {
    if (runner_.watchdog_) runner_.watchdog_->disarm();
  }
  MPI_Comm library_comm() const override { return runner_.bare_comm_; }
  double now() const override { return runner_.group_->now(transport_); }

 private:
  Runner& runner_;
  InstrumentedTransport& transport_;
};

Runner::Runner(const Options& options, InstrumentedTransport& transport, MPI_Comm timing_comm,
               Progress& progress)
    : options_(options),
      local_(1),
      transport_(transport),
      progress_(progress),
      rank_(transport.rank()),
      ranks_(transport.size()) {
  local_.front().transport = &transport;
  if (auto* mpi = dynamic_cast<MpiTransport*>(&transport.unwrapped())) bare_comm_ = mpi->comm();
  if (transport.timeout().count() > 0) watchdog_ = std::make_unique<Watchdog>(rank_);
  core_handoff_ = std::make_unique<CoreHandoffProbe>(timing_comm);
  start_up(make_mpi_harness_group(
      transport, timing_comm,
      {.where = [this] { return whereabouts(); },
       .report = [this](const Arrivals& arrivals,
                        const std::string& detail) { report_timeout(arrivals, detail); }}));
}

Runner::Runner(const Options& options, RankGroup& group, Progress& progress)
    : options_(options),
      local_(local_ranks(group)),
      transport_(*local_.front().transport),
      progress_(progress),
      rank_(0),
      ranks_(group.size()) {
  for (LocalRank& local : local_) local.transport->set_timeout(start_up_timeout(options, ranks_));
  start_up(make_in_process_harness_group(group));
}

Runner::Runner(const Options& options, InstrumentedTransport& transport, Progress& progress)
    : options_(options),
      local_(1),
      transport_(transport),
      progress_(progress),
      rank_(transport.rank()),
      ranks_(transport.size()) {
  local_.front().transport = &transport;
  start_up(make_transport_harness_group(transport, harness_traffic_));
}

void Runner::start_up(std::unique_ptr<HarnessGroup> group) {
  group_ = std::move(group);
  for (LocalRank& local : local_) {
    local.context = std::make_unique<Context>(*this, *local.transport);
  }
  // Every wait of the harness happens inside a benchmark (current_ is set);
  // the report runs at the wait, before its buffers are freed.
  transport_.set_timeout_handler([this](const TimeoutError& error) {
    if (current_.first != nullptr) group_->timed_out(error.what());
  });
}

double Runner::now(const LocalRank& local) const { return local.context->now(); }

std::vector<Runner::LocalRank> Runner::local_ranks(RankGroup& group) {
  std::vector<LocalRank> local(static_cast<std::size_t>(group.size()));
  group.run([&](Transport& transport) {
    LocalRank& rank = local[static_cast<std::size_t>(transport.rank())];
    rank.instrumented = std::make_unique<InstrumentedTransport>(transport);
    rank.transport = rank.instrumented.get();
  });
  return local;
}

void Runner::each_rank(const std::function<void(LocalRank&)>& body) {
  group_->each_rank([&](int rank) { body(local_rank(rank)); });
}

Runner::LocalRank& Runner::local_rank(int rank) {
  return local_[static_cast<std::size_t>(rank - local_.front().transport->rank())];
}

SecondsOnRank Runner::slowest_call(const char* what) {
  // The first of equal times: the lowest rank's.
  SecondsOnRank slowest{local_.front().seconds, local_.front().transport->rank()};
  for (const LocalRank& local : local_) {
    if (local.seconds > slowest.seconds) slowest = {local.seconds, local.transport->rank()};
  }
  return group_->slowest(slowest, what);
}

std::uint64_t Runner::job_sum(const std::function<std::uint64_t(const LocalRank&)>& value,
                              const char* what) {
  std::uint64_t local_sum = 0;
  for (const LocalRank& local : local_) local_sum += value(local);
  return group_->sum(local_sum, what);
}

void Runner::connect_every_pair() {
  // Both directions of every pair carry a message in every round, so every
  // connection any algorithm, the ping-pong or the MPI library's own
  // allreduce (the mpi transport's communicator) can use exists before the
  // first benchmark, and none is set up inside a timed call. Rank 0 decides
  // when to stop, so every rank runs the same rounds.
  const auto start = std::chrono::steady_clock::now();
  for (int round = 0, more = ranks_ > 1 ? 1 : 0; more != 0; ++round) {
    each_rank([&](LocalRank& local) {
      Transport& transport = *local.transport;
      const int rank = transport.rank();
      std::vector<std::array<std::byte, 8>> inbox(static_cast<std::size_t>(ranks_));
      const std::array<std::byte, 8> outbox{};
      std::vector<RequestId> requests;
      requests.reserve(2 * static_cast<std::size_t>(ranks_));
      for (int shift = 1; shift < ranks_; ++shift) {
        const int from = (rank + ranks_ - shift) % ranks_;
        requests.push_back(
            transport.irecv(inbox[static_cast<std::size_t>(from)], from, kConnectTag));
        requests.push_back(transport.isend(outbox, (rank + shift) % ranks_, kConnectTag));
      }
      transport.wait_all(requests);
    });
    more = round + 1 < kConnectRounds || std::chrono::steady_clock::now() - start < kConnectSettle;
    more = group_->broadcast_value(more, 0, "the connection warm-up");
  }
}

Runner::~Runner() {
  transport_.set_timeout_handler({});  // it holds `this`
}

void Runner::release() {
  each_rank([](LocalRank& local) { local.prepared.reset(); });
}

void Runner::prepare(const BenchmarkCase& benchmark_case) {
  const std::unique_ptr<PreparedCase>& current = local_.front().prepared;
  if (current && current->owner == &benchmark_case) return;
  each_rank([&](LocalRank& local) {
    std::unique_ptr<PreparedCase>& prepared = local.prepared;
    // The previous benchmark's buffers serve this one as they are (the
    // family says when): keep them, and build only the new algorithm.
    if (!prepared || !prepared->adopt(benchmark_case)) {
      // Free the previous benchmark's memory before allocating this one's:
      // the memory guard assumes one benchmark at a time.
      prepared.reset();
      prepared = benchmark_case.family->prepare(benchmark_case, *local.context);
    }
    prepared->owner = &benchmark_case;
    prepared->warmed_up = false;
  });
}

void Runner::call_everywhere(const BenchmarkCase& benchmark_case, bool synchronized) {
  each_rank([&](LocalRank& local) {
    if (synchronized) local.context->synchronize();
    local.seconds = local.prepared->call(benchmark_case);
  });
}

void Runner::synchronize(InstrumentedTransport& rank) {
  // --sync window's untimed calls (warm-up, check, probes) are after a
  // barrier too; its timed ones never come here (Context::synchronize).
  if (options_.sync == SyncMode::none) return;
  group_->barrier(rank, "the barrier before a call");
}

void Runner::check(BenchmarkCase& benchmark_case) {
  each_rank([&](LocalRank& local) { local.check = local.prepared->check(benchmark_case); });

  // Every rank must take the same decision: total the wrong elements and
  // take the first mismatch from the lowest rank that saw one.
  const std::uint64_t total_wrong =
      job_sum([](const LocalRank& local) { return local.check.wrong; },
              "the agreement on the --check result");
  benchmark_case.checked = true;
  benchmark_case.wrong_elements = total_wrong;
  benchmark_case.wrong_elements_all_rounds += total_wrong;
  if (total_wrong == 0) return;
  constexpr const char* kWhat = "the agreement on the --check result";
  int reporter = ranks_;
  for (const LocalRank& local : local_) {
    if (local.check.wrong > 0) reporter = std::min(reporter, local.transport->rank());
  }
  const int first_reporter = group_->min(reporter, kWhat);
  std::string detail;
  if (first_reporter == reporter) {
    detail = fmt::format("rank {}, {}", reporter, local_rank(reporter).check.first_mismatch);
  }
  detail.resize(group_->broadcast_value(detail.size(), first_reporter, kWhat));
  group_->broadcast(std::as_writable_bytes(std::span(detail)), first_reporter, kWhat);
  benchmark_case.check_detail = detail;
}

void Runner::calibrate_batch(BenchmarkCase& benchmark_case) {
  // Rank 0 decides and broadcasts, so every rank agrees. A single call of a
  // tiny kernel is mostly timer overhead, so the first estimate (the fastest
  // of a few single calls) is refined by timing one batch of that size.
  constexpr int kProbes = 3;
  constexpr unsigned long long kMaxCalls = 1 << 22;
  auto batch_for = [&](double seconds_per_call) {
    unsigned long long calls = 1;
    if (rank_ == 0) {
      calls = static_cast<unsigned long long>(
          std::ceil(kBatchSeconds / std::max(seconds_per_call, 1e-10)));
      calls = std::clamp<unsigned long long>(calls, 1, kMaxCalls);
    }
    return group_->broadcast_value(calls, 0, "the agreement on the batch size");
  };
  // The first local rank is rank 0 whenever its time is the one that counts.
  benchmark_case.calls_per_sample = 1;
  double fastest = 0;
  for (int probe = 0; probe < kProbes; ++probe) {
    call_everywhere(benchmark_case, false);
    const double seconds = local_.front().seconds;
    fastest = probe == 0 ? seconds : std::min(fastest, seconds);
  }
  benchmark_case.calls_per_sample = batch_for(fastest);
  if (benchmark_case.calls_per_sample > 1) {
    call_everywhere(benchmark_case, false);
    const double batch_seconds = local_.front().seconds;
    benchmark_case.calls_per_sample =
        batch_for(batch_seconds / static_cast<double>(benchmark_case.calls_per_sample));
  }
}

std::vector<double> Runner::gather_medians() {
  std::vector<double> mine;
  for (LocalRank& local : local_) mine.push_back(summarize(local.own_seconds).median);
  std::vector<double> medians = group_->gather(mine, "the gathering of every rank's median");
  if (rank_ != 0) medians.clear();
  return medians;
}

std::string rank_median_label(const std::vector<double>& medians_seconds) {
  std::string label(kRankMedianLabel);
  for (std::size_t r = 0; r < medians_seconds.size(); ++r) {
    label += fmt::format("{}{:.6g}", r == 0 ? "" : ";", medians_seconds[r] * 1e6);
  }
  return label;
}

void Runner::inject_fault(int rank) const {
  if (rank == options_.debug_crash_rank) {
    std::raise(SIGSEGV);
  }
  if (rank == options_.debug_stuck_rank) {
    while (true) std::this_thread::sleep_for(std::chrono::hours(1));
  }
}

namespace {

std::string rank_list(const std::vector<int>& ranks) {
  return fmt::format("rank{} {}", ranks.size() == 1 ? "" : "s", fmt::join(ranks, ", "));
}

}  // namespace

Whereabouts Runner::whereabouts() const {
  return {benchmark_index_, static_cast<long long>(phase_), static_cast<long long>(timed_calls_)};
}

void Runner::report_timeout(const Arrivals& arrivals, const std::string& detail) {
  const BenchmarkCase& benchmark_case = *current_.first;
  static constexpr const char* kPhases[] = {
      "the connection warm-up", "setting up", "the --check calls",       "a warm-up call",
      "the batch calibration",  "timed call", "the end of the benchmark"};
  std::string where = kPhases[static_cast<int>(phase_)];
  if (phase_ == Phase::timed) where += fmt::format(" {}", timed_calls_);
  const std::string size = size_text(benchmark_case);
  const double seconds = static_cast<double>(transport_.timeout().count()) / 1000;
  const std::string limit =
      options_.timeout_seconds < 0
          ? fmt::format("the default timeout of {} s for its size (set one with --timeout)",
                        seconds)
          : fmt::format("--timeout {} s", seconds);
  const std::string who =
      arrivals.missing.empty()
          ? fmt::format(
                "every rank had arrived and was waiting, so the call itself did not "
                "finish (a deadlock, or slower than {})",
                limit)
          : fmt::format("{} had not arrived ({} waiting)", rank_list(arrivals.missing),
                        rank_list(arrivals.arrived));
  progress_.clear();
  fmt::print(stderr, "collbench: {} ({}) did not complete within {}, at {}: {}{}; {}\n",
             benchmark_case.name, size, limit, where, who,
             arrivals.elsewhere.empty()
                 ? ""
                 : fmt::format(" ({} waiting elsewhere: in another benchmark or "
                               "phase)",
                               rank_list(arrivals.elsewhere)),
             detail);
  std::fflush(stderr);
}

void Runner::run(benchmark::State& state, BenchmarkCase& benchmark_case, int round) {
  try {
    run_unguarded(state, benchmark_case, round);
  } catch (const std::exception& error) {
    progress_.clear();
    // In a group the ranks' errors name their rank themselves.
    fmt::print(stderr, "collbench: {}{} failed: {}\n",
               group_->names_rank_in_errors() ? fmt::format("rank {}: ", rank_) : std::string(),
               benchmark_case.name, error.what());
    std::fflush(stderr);
    abort_job();
  }
}

// What the timed loop measured, for the counters.
struct Runner::Samples {
  // Per-call seconds of every sample, the slowest rank's (each local
  // rank's own are in its LocalRank), and how often each rank was the
  // slowest.
  std::vector<double> seconds;
  std::vector<std::uint64_t> slowest_counts;
  std::optional<double> handoff_before;
  std::optional<double> handoff_after;
};

void Runner::run_unguarded(benchmark::State& state, BenchmarkCase& benchmark_case, int round) {
  start(benchmark_case, round);
  phase_ = Phase::setup;
  prepare(benchmark_case);
  if (!get_ready(state, benchmark_case, round)) return;
  prepare_windows(benchmark_case);
  Samples samples = time_samples(state, benchmark_case);
  set_counters(state, benchmark_case, samples);
  record_load(state);
}

void Runner::start(const BenchmarkCase& benchmark_case, int round) {
  if (options_.timeout_seconds < 0) {
    for (LocalRank& local : local_) {
      local.transport->set_timeout(
          timeout_milliseconds(default_timeout_seconds(benchmark_case.bytes(), ranks_)));
    }
  }
  if (current_ != std::pair<const BenchmarkCase*, int>{&benchmark_case, round}) {
    current_ = {&benchmark_case, round};
    ++benchmark_index_;
    timed_calls_ = 0;
    if (load_watch_) load_watch_->start();
    if (rank_ == 0) progress_.started(benchmark_case.name);
  }
  if (!connected_) {
    phase_ = Phase::connect;
    if (!options_.debug_skip_connection_warmup && !options_.no_connections) connect_every_pair();
    connected_ = true;
  }
}

bool Runner::get_ready(benchmark::State& state, BenchmarkCase& benchmark_case, int round) {
  // The --check calls are untimed calls of the same algorithm on the same
  // buffers, so they count as the first warm-up calls.
  int warmup_calls = options_.warmup;
  if (options_.check && benchmark_case.checked_round != round) {
    phase_ = Phase::check;
    check(benchmark_case);
    benchmark_case.checked_round = round;
    warmup_calls -= kCheckedCalls;
  }
  if (benchmark_case.wrong_elements > 0) {
    state.SkipWithError(fmt::format("--check: {} wrong elements (first: {})",
                                    benchmark_case.wrong_elements, benchmark_case.check_detail)
                            .c_str());
    return false;
  }
  each_rank([](LocalRank& local) { local.prepared->before_timing(); });
  if (!local_.front().prepared->warmed_up) {
    phase_ = Phase::warmup;
    for (int i = 0; i < warmup_calls; ++i) call_everywhere(benchmark_case, true);
    for (LocalRank& local : local_) local.prepared->warmed_up = true;
  }
  if (benchmark_case.family->batched() && !benchmark_case.calibrated) {
    phase_ = Phase::calibration;
    calibrate_batch(benchmark_case);
    benchmark_case.calibrated = true;
  }
  return true;
}

std::uint64_t Runner::sample_count(const benchmark::State& state,
                                   const BenchmarkCase& benchmark_case) const {
  // At least the floor, and as many as Google Benchmark asks for
  // (max_iterations grows until the samples' total reaches
  // --benchmark_min_time; with --samples main sets that to 0, so its first
  // request, 1, is the last). All of them run in a single KeepRunningBatch
  // step, which then counts samples x calls iterations: Google Benchmark's
  // documented overshoot of a batch, so a request below the floor still
  // gets the floor, and the count reported is the count timed.
  const std::uint64_t calls = benchmark_case.calls_per_sample;
  const auto requested = static_cast<std::uint64_t>(state.max_iterations);
  return std::max<std::uint64_t>(static_cast<std::uint64_t>(options_.sample_floor()),
                                 (requested + calls - 1) / calls);
}

void Runner::expect_every_peer_contacted() const {
  // Every peer has been addressed before the first timed call, so no
  // first contact (where transports set up connections) is timed. A
  // benchmark's own warm-up reaches only the peers its algorithm uses: this
  // holds only because connect_every_pair ran. A simulation has no
  // connections to set up, and skips it (main.cpp).
  if (options_.no_connections) return;
  for (const LocalRank& local : local_) {
    const InstrumentedTransport& transport = *local.transport;
    if (transport.peers_contacted() != static_cast<std::uint64_t>(ranks_ - 1)) {
      throw std::logic_error(fmt::format(
          "rank {} has addressed {} of its {} peers before timing: the connection warm-up "
          "(Runner::connect_every_pair) did not reach them all",
          transport.rank(), transport.peers_contacted(), ranks_ - 1));
    }
  }
}

Runner::Samples Runner::time_samples(benchmark::State& state, const BenchmarkCase& benchmark_case) {
  const std::uint64_t calls = benchmark_case.calls_per_sample;
  const std::uint64_t samples = sample_count(state, benchmark_case);
  // Reserved so that the timed loop allocates nothing.
  Samples measured;
  measured.seconds.reserve(samples);
  for (LocalRank& local : local_) {
    local.own_seconds.clear();
    local.own_seconds.reserve(samples);
    local.transport->reset_counters();
  }
  harness_traffic_ = {};
  measured.slowest_counts.assign(static_cast<std::size_t>(ranks_), 0);
  expect_every_peer_contacted();
  const bool fault = benchmark_index_ == options_.debug_fault_after;
  if (core_handoff_) {
    measured.handoff_before = core_handoff_->measure();
    // The probe holds ranks 0 and 1 for up to its budget while the others go
    // on; with --sync none nothing else lines the ranks up, and that wait
    // would land in the others' first timed call (and in Google Benchmark's
    // choice of the iteration count).
    if (ranks_ > 1) group_->barrier(transport_, "the barrier after the core-distance probe");
  }
  uncounted([&] { agree_on_windows(); });
  phase_ = Phase::timed;
  const std::function<void(LocalRank&)> sample_call = [&](LocalRank& local) {
    if (fault) inject_fault(local.transport->rank());
    if (!benchmark_case.bare) local.context->synchronize();
    local.seconds = local.prepared->call(benchmark_case);
    if (local.late > 0) local.seconds = kLateMarkSeconds + local.late;
  };
  while (state.KeepRunningBatch(static_cast<benchmark::IterationCount>(samples * calls))) {
    for (std::uint64_t sample = 0; sample < samples; ++sample) {
      ++timed_calls_;
      each_rank(sample_call);
      const SecondsOnRank slowest = slowest_call("the reduction of the iteration time");
      if (windows_ && late_start(slowest.seconds)) continue;
      state.SetIterationTime(slowest.seconds);
      measured.seconds.push_back(slowest.seconds / static_cast<double>(calls));
      for (LocalRank& local : local_) {
        local.own_seconds.push_back(local.seconds / static_cast<double>(calls));
      }
      ++measured.slowest_counts[static_cast<std::size_t>(slowest.rank)];
    }
  }
  phase_ = Phase::after;
  if (core_handoff_) measured.handoff_after = core_handoff_->measure();
  if (measured.seconds.empty()) {
    state.SkipWithError(fmt::format("--sync window: every one of the {} samples started late for "
                                    "its window of {:.3g} us (late_starts)",
                                    samples, windows_ ? windows_->window * 1e6 : 0.0)
                            .c_str());
  }
  return measured;
}

void Runner::set_counters(benchmark::State& state, const BenchmarkCase& benchmark_case,
                          Samples& measured) {
  std::vector<double>& seconds = measured.seconds;
  const auto iterations =
      static_cast<double>(seconds.size()) * static_cast<double>(benchmark_case.calls_per_sample);
  // The first local rank's: rank 0's, whose row it is.
  const std::uint64_t sent_bytes = transport_.bytes_sent() - harness_traffic_.bytes;
  const std::uint64_t all_messages = job_sum(
      [&](const LocalRank& local) {
        return local.transport->messages_sent() - harness_traffic_.messages;
      },
      "the sum of the message counts");
  if (seconds.empty()) return;
  const std::vector<double> rank_medians = gather_medians();

  const Summary summary = summarize(seconds);
  const double bytes = static_cast<double>(benchmark_case.bytes());
  const double algbw = summary.median > 0 ? bytes / summary.median / 1e9 : 0;
  auto& counters = state.counters;
  counters["bytes"] = bytes;
  counters["ranks"] = ranks_;
  counters["min_us"] = summary.min * 1e6;
  counters["median_us"] = summary.median * 1e6;
  counters["mean_us"] = summary.mean * 1e6;
  counters["p99_us"] = summary.p99 * 1e6;
  counters["max_us"] = summary.max * 1e6;
  counters["algbw_GBps"] = algbw;
  counters["busbw_GBps"] = algbw * benchmark_case.bus_bandwidth_factor(ranks_);
  counters["wrong_elements"] = static_cast<double>(benchmark_case.wrong_elements);
  counters["calls_per_sample"] = static_cast<double>(benchmark_case.calls_per_sample);
  counters["samples"] = static_cast<double>(seconds.size());
  if (benchmark_case.family->every_rank_timed()) {
    // The rank slowest most often (the lowest of a tie), how often, and
    // every rank's own median (rank 0 has them all): nccl-tests' straggler
    // view, so a sweep names a slow rank without the link matrix.
    const auto& slowest_counts = measured.slowest_counts;
    const auto most = std::max_element(slowest_counts.begin(), slowest_counts.end());
    counters["slowest_rank"] = static_cast<double>(most - slowest_counts.begin());
    counters["slowest_rank_share"] =
        static_cast<double>(*most) / static_cast<double>(seconds.size());
    if (rank_ == 0) state.SetLabel(rank_median_label(rank_medians));
  }
  // The larger of the two probes: a repetition counts as measured with the
  // cores near only if they were near at both ends.
  if (measured.handoff_before && measured.handoff_after) {
    counters["core_handoff_ns"] = std::max(*measured.handoff_before, *measured.handoff_after);
  }
  // The MPI library's own allreduce sends nothing through the transport; a
  // zero there would read as "sent nothing", so the counter is left out.
  const bool through_transport = benchmark_case.family->through_transport();
  if (through_transport && (all_messages > 0 || ranks_ == 1)) {
    counters["sent_bytes_per_rank"] = static_cast<double>(sent_bytes) / iterations;
  }
  set_convention_counters(state, benchmark_case);
}

}  // namespace collbench::harness
