// How far apart the cores of ranks 0 and 1 are while a benchmark runs.
//
// Over shared memory, an allreduce's time depends on how long a modified
// cache line takes to move from one rank's core to another's (see
// benchmarks/corelatency/): on a VM whose host moves the vCPUs between dies,
// the same job takes 1 MiB ring allreduces of 108 µs or 403 µs
// (docs/performance.md, "The distance between the two cores decides most of
// it"). Each benchmark repetition
// therefore records that latency, measured between ranks 0 and 1 right
// before and right after its timed loop, so that every CSV row says which
// machine it was measured on.
//
// Method: ranks 0 and 1 pass a counter back and forth in one cache line of
// an MPI shared-memory window (the method of collbench-core-latency, between
// processes instead of threads): one-way latency = half a round trip.
// Bounded: rank 0 stops after kBudget of wall time, so ranks that share a
// core (an oversubscribed job) cost a few milliseconds, not a hang, and
// report the scheduler's latency, which is what those ranks live with.
#pragma once

#include <mpi.h>

#include <atomic>
#include <cstdint>
#include <optional>

namespace collbench::harness {

class CoreHandoffProbe {
 public:
  // Collective over `comm`. The probe is active when `comm` has at least 2
  // ranks and ranks 0 and 1 can share memory (the same node); otherwise
  // measure() returns nothing.
  explicit CoreHandoffProbe(MPI_Comm comm);
  ~CoreHandoffProbe();
  CoreHandoffProbe(const CoreHandoffProbe&) = delete;
  CoreHandoffProbe& operator=(const CoreHandoffProbe&) = delete;

  // Called by every rank of `comm` (ranks other than 0 and 1 return at
  // once). On rank 0: the median over blocks of round trips of the one-way
  // handoff latency in nanoseconds; nothing on other ranks, when inactive,
  // or when no round trip completed within the budget.
  std::optional<double> measure();

 private:
  int rank_ = 0;
  MPI_Comm pair_comm_ = MPI_COMM_NULL;  // ranks 0 and 1 of a node
  MPI_Win window_ = MPI_WIN_NULL;
  std::atomic<std::uint64_t>* line_ = nullptr;  // the shared cache line
  std::uint32_t probe_index_ = 0;               // tags each measure()'s values
};

}  // namespace collbench::harness
