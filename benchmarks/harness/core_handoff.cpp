#include "core_handoff.h"

#include <algorithm>
#include <chrono>
#include <exception>
#include <new>
#include <vector>

#include "collbench/transport/mpi_transport.h"

namespace collbench::harness {
namespace {

using Clock = std::chrono::steady_clock;

constexpr int kBlocks = 8;
constexpr int kRoundTripsPerBlock = 32;
// Rank 0's limit for one measure(), its wait for rank 1 to arrive included.
// Near cores take ~15 µs for all blocks, far ones ~150 µs; ranks that share
// a core can need a scheduler time slice per handoff.
constexpr auto kBudget = std::chrono::milliseconds(20);
// Rank 1's limit: it leaves when rank 0 says so, well before this; the limit
// only keeps a rank 0 that never comes from hanging it.
constexpr auto kAnswererLimit = std::chrono::seconds(5);
constexpr std::uint32_t kStop = 0xFFFFFFFFu;
constexpr int kSpinsPerClockRead = 64;
// The line is shared between processes: only a lock-free atomic is a plain
// word in it that both can operate on.
static_assert(std::atomic<std::uint64_t>::is_always_lock_free);

std::uint64_t tagged(std::uint32_t probe, std::uint32_t step) {
  return (static_cast<std::uint64_t>(probe) << 32) | step;
}

}  // namespace

CoreHandoffProbe::CoreHandoffProbe(MPI_Comm comm) {
  int ranks = 0;
  MPI_Comm_rank(comm, &rank_);
  MPI_Comm_size(comm, &ranks);
  if (ranks < 2) return;
  MPI_Comm first_two = MPI_COMM_NULL;
  check_mpi(MPI_Comm_split(comm, rank_ < 2 ? 0 : MPI_UNDEFINED, rank_, &first_two),
            "MPI_Comm_split", "core handoff probe: ranks 0 and 1");
  if (first_two == MPI_COMM_NULL) return;
  MPI_Comm same_node = MPI_COMM_NULL;
  check_mpi(MPI_Comm_split_type(first_two, MPI_COMM_TYPE_SHARED, rank_, MPI_INFO_NULL, &same_node),
            "MPI_Comm_split_type", "core handoff probe: do ranks 0 and 1 share a node");
  MPI_Comm_free(&first_two);
  int node_ranks = 0;
  MPI_Comm_size(same_node, &node_ranks);
  if (node_ranks != 2) {
    MPI_Comm_free(&same_node);
    return;
  }
  pair_comm_ = same_node;
  void* base = nullptr;
  check_mpi(
      MPI_Win_allocate_shared(rank_ == 0 ? 64 : 0, 1, MPI_INFO_NULL, pair_comm_, &base, &window_),
      "MPI_Win_allocate_shared", "core handoff probe: one cache line");
  MPI_Aint size = 0;
  int unit = 0;
  check_mpi(MPI_Win_shared_query(window_, 0, &size, &unit, &base), "MPI_Win_shared_query",
            "core handoff probe");
  if (rank_ == 0) new (base) std::atomic<std::uint64_t>(tagged(0, kStop));
  line_ = static_cast<std::atomic<std::uint64_t>*>(base);
  // Rank 1 must not read the line before rank 0 has constructed it.
  check_mpi(MPI_Barrier(pair_comm_), "MPI_Barrier", "core handoff probe");
}

CoreHandoffProbe::~CoreHandoffProbe() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  // Freeing the window synchronizes ranks 0 and 1; while an exception
  // unwinds (the job is about to be aborted) the other rank may never come.
  if (finalized != 0 || std::uncaught_exceptions() > 0) return;
  if (window_ != MPI_WIN_NULL) MPI_Win_free(&window_);
  if (pair_comm_ != MPI_COMM_NULL) MPI_Comm_free(&pair_comm_);
}

std::optional<double> CoreHandoffProbe::measure() {
  if (line_ == nullptr) return std::nullopt;
  const std::uint32_t probe = ++probe_index_;
  std::atomic<std::uint64_t>& line = *line_;

  if (rank_ == 1) {
    // Answer every odd step of this probe until rank 0 says stop, or has
    // already begun a later probe (this rank was descheduled and missed the
    // stop). The compare-exchange never overwrites a stop written meanwhile.
    const Clock::time_point limit = Clock::now() + kAnswererLimit;
    for (int spins = 0;; ++spins) {
      std::uint64_t value = line.load(std::memory_order_acquire);
      if ((value >> 32) > probe) return std::nullopt;
      if ((value >> 32) == probe) {
        const auto step = static_cast<std::uint32_t>(value);
        if (step == kStop) return std::nullopt;
        if ((step & 1) != 0) {
          line.compare_exchange_strong(value, value + 1, std::memory_order_acq_rel);
          continue;
        }
      }
      if (spins % kSpinsPerClockRead == 0 && Clock::now() > limit) return std::nullopt;
    }
  }

  const Clock::time_point deadline = Clock::now() + kBudget;
  std::uint32_t step = 1;
  // One handoff there and back; false when the deadline passed first.
  auto round_trip = [&]() {
    line.store(tagged(probe, step), std::memory_order_release);
    const std::uint64_t answer = tagged(probe, step + 1);
    for (int spins = 1; line.load(std::memory_order_acquire) != answer; ++spins) {
      if (spins % kSpinsPerClockRead == 0 && Clock::now() > deadline) return false;
    }
    step += 2;
    return true;
  };

  std::vector<double> one_way_ns;
  one_way_ns.reserve(kBlocks);
  // The first round trip also waits for rank 1 to arrive: not timed.
  if (round_trip()) {
    for (int block = 0; block < kBlocks; ++block) {
      const Clock::time_point start = Clock::now();
      int completed = 0;
      while (completed < kRoundTripsPerBlock && round_trip()) ++completed;
      if (completed > 0) {
        const std::chrono::duration<double, std::nano> elapsed = Clock::now() - start;
        one_way_ns.push_back(elapsed.count() / completed / 2);
      }
      if (completed < kRoundTripsPerBlock) break;  // out of budget
    }
  }
  line.store(tagged(probe, kStop), std::memory_order_release);
  if (one_way_ns.empty()) return std::nullopt;
  auto middle = one_way_ns.begin() + static_cast<std::ptrdiff_t>(one_way_ns.size() / 2);
  std::nth_element(one_way_ns.begin(), middle, one_way_ns.end());
  return *middle;
}

}  // namespace collbench::harness
