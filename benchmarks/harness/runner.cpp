// The Runner: its ranks and harness group, the connection warm-up, each
// benchmark's buffers, the errors and the timeout report; see families.h.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <csignal>
#include <cstdlib>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

#include "collbench/catalog/sizes.h"
#include "collbench/transport/mpi_transport.h"
#include "families.h"
#include "load_watch.h"
#include "process_signals.h"
#include "runner_context.h"

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

Runner::Context::Context(Runner& runner, InstrumentedTransport& transport)
    : runner_(runner), transport_(transport) {}
const Options& Runner::Context::options() const { return runner_.options_; }
Transport& Runner::Context::transport() const { return transport_; }
int Runner::Context::rank() const { return transport_.rank(); }
int Runner::Context::ranks() const { return runner_.ranks_; }
void Runner::Context::synchronize() {
  if (runner_.windows_ && runner_.phase_ == Phase::timed) {
    runner_.start_in_window(transport_);
  } else {
    runner_.synchronize(transport_);
  }
}
void Runner::Context::wait_for_all_ranks_sleeping() {
  runner_.group_->sleeping_barrier(transport_, "the barrier after a p2p or local call");
}
void Runner::Context::library_call_started(const BenchmarkCase& benchmark_case) {
  if (runner_.watchdog_) runner_.watchdog_->arm(benchmark_case, transport_.timeout());
}
void Runner::Context::library_call_returned() {
  if (runner_.watchdog_) runner_.watchdog_->disarm();
}
MPI_Comm Runner::Context::library_comm() const { return runner_.bare_comm_; }
double Runner::Context::now() const { return runner_.group_->now(transport_); }

Runner::Runner(const Options& options, std::vector<LocalRank> local, int rank, int ranks,
               Progress& progress)
    : options_(options),
      local_(std::move(local)),
      transport_(*local_.front().transport),
      progress_(progress),
      rank_(rank),
      ranks_(ranks) {}

Runner::Runner(const Options& options, InstrumentedTransport& transport, MPI_Comm timing_comm,
               Progress& progress)
    : Runner(options, one_local_rank(transport), transport.rank(), transport.size(), progress) {
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
    : Runner(options, local_ranks(group), 0, group.size(), progress) {
  for (LocalRank& local : local_) local.transport->set_timeout(start_up_timeout(options, ranks_));
  start_up(make_in_process_harness_group(group));
}

Runner::Runner(const Options& options, InstrumentedTransport& transport, Progress& progress)
    : Runner(options, one_local_rank(transport), transport.rank(), transport.size(), progress) {
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

std::vector<Runner::LocalRank> Runner::one_local_rank(InstrumentedTransport& transport) {
  std::vector<LocalRank> local(1);
  local.front().transport = &transport;
  return local;
}

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

}  // namespace collbench::harness
