// The harness's own collectives: what the Runner (families.h) needs from the
// job around the timed calls (the barrier before a call, the slowest rank's
// time, the sums and the minimum its agreements take, rank 0's decisions,
// every rank's median) and the clock it times by. One interface, so that the
// Runner has one code path; three implementations, chosen once when the
// Runner is built:
//
//   harness_group_mpi.cpp        one rank per MPI process: non-blocking MPI
//                                calls on a communicator of the harness's own,
//                                polled against the transport's timeout, whose
//                                expiry finds the ranks that had not arrived
//                                and takes the job down (MPI_Abort);
//   harness_group_in_process.cpp every rank in this process (a RankGroup):
//                                the values are all here already, the barrier
//                                is the transport's, the clock the group's;
//   harness_group_transport.cpp  one rank per process without MPI
//                                (--bootstrap file:DIR): point-to-point
//                                messages over the transport itself, with
//                                tags below its slots, kept out of its
//                                counters.
//
// A process holds one rank (MPI, transport) or all of them (in process). The
// reductions take this process's part, already reduced over its ranks; the
// barrier runs on each of its ranks (`rank`: that rank's transport).
#pragma once

#include <mpi.h>

#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "collbench/transport/instrumented_transport.h"
#include "collbench/transport/rank_group.h"

namespace collbench::harness {

// A time and the rank it was measured on.
struct SecondsOnRank {
  double seconds = 0;
  int rank = 0;
};

// The bytes and messages the harness sent through a transport for itself, to
// be subtracted from its counters (the CSV's are the algorithm's alone).
struct HarnessTraffic {
  std::uint64_t bytes = 0;
  std::uint64_t messages = 0;
};

// Runs `work`, which sends through `transport` for the harness, adding what
// it sent to `traffic`.
template <typename Work>
void uncounted(InstrumentedTransport& transport, HarnessTraffic& traffic, Work&& work) {
  const std::uint64_t bytes = transport.bytes_sent();
  const std::uint64_t messages = transport.messages_sent();
  std::forward<Work>(work)();
  traffic.bytes += transport.bytes_sent() - bytes;
  traffic.messages += transport.messages_sent() - messages;
}

// Where a rank waits when a wait times out: (benchmark index, phase, timed
// calls so far), the Runner's.
using Whereabouts = std::array<long long, 3>;

// What a rank whose wait timed out learned from the others.
struct Arrivals {
  // Ranks heard from (this one included), not heard from, and heard from at
  // another benchmark, phase or call.
  std::vector<int> arrived;
  std::vector<int> missing;
  std::vector<int> elsewhere;
};

// What the Runner tells the group about a timeout: where this rank is, and
// the report the lowest rank that arrived prints.
struct TimeoutReport {
  std::function<Whereabouts()> where;
  std::function<void(const Arrivals& arrivals, const std::string& detail)> report;
};

class HarnessGroup {
 public:
  virtual ~HarnessGroup() = default;

  // Each of this process's ranks, by job rank: `body(rank)` on each of them
  // (on the group's threads or actors when there are several).
  virtual void each_rank(const std::function<void(int rank)>& body) = 0;
  // Seconds on `rank`'s clock: MPI_Wtime, the group's (RankGroup::now), or
  // the steady clock.
  virtual double now(InstrumentedTransport& rank) const = 0;
  // Whether an error's message must name this process's rank (the ranks of
  // a group name their own).
  virtual bool names_rank_in_errors() const = 0;

  // Every rank waits for every other; `what` names the wait in a timeout's
  // message. The sleeping one yields the core while it waits (the ranks
  // that take no part in a p2p or local sample: an oversubscribed run must
  // not steal the measured ranks' cores).
  virtual void barrier(InstrumentedTransport& rank, const char* what) = 0;
  virtual void sleeping_barrier(InstrumentedTransport& rank, const char* what) = 0;

  // The slowest of every rank's time (the lowest rank of equal ones), from
  // this process's slowest.
  virtual SecondsOnRank slowest(SecondsOnRank mine, const char* what) = 0;
  // Sums and the minimum over the job, from this process's.
  virtual std::uint64_t sum(std::uint64_t mine, const char* what) = 0;
  virtual double sum(double mine, const char* what) = 0;
  virtual int min(int mine, const char* what) = 0;
  // `bytes` of `root` on every rank (the same size on every rank).
  virtual void broadcast(std::span<std::byte> bytes, int root, const char* what) = 0;
  // Every rank's value, by rank, on every rank, from this process's ranks'.
  virtual std::vector<double> gather(std::span<const double> mine, const char* what) = 0;

  // A wait of the transport's timed out inside a benchmark, while the
  // buffers of its pending operations are alive: under MPI this finds the
  // ranks that had not arrived, reports them (from the lowest rank that had)
  // and ends the job; elsewhere it returns, and the wait throws (the run
  // ends with the transport's message).
  virtual void timed_out(const std::string& detail) = 0;

  // A trivially copyable value of `root` on every rank.
  template <typename Value>
  Value broadcast_value(Value value, int root, const char* what) {
    broadcast(std::as_writable_bytes(std::span(&value, 1)), root, what);
    return value;
  }
};

// This process is one rank of an MPI job; the collectives go over `comm`,
// bounded by `transport`'s timeout.
std::unique_ptr<HarnessGroup> make_mpi_harness_group(InstrumentedTransport& transport,
                                                     MPI_Comm comm, TimeoutReport report);
// Every rank is in this process, in `group`.
std::unique_ptr<HarnessGroup> make_in_process_harness_group(RankGroup& group);
// This process is one rank of a job without MPI: the collectives go over
// `transport`, whose bytes and messages they add to `traffic`.
std::unique_ptr<HarnessGroup> make_transport_harness_group(InstrumentedTransport& transport,
                                                           HarnessTraffic& traffic);

}  // namespace collbench::harness
