// The harness's collectives over the transport itself, for one rank per
// process without MPI (--bootstrap file:DIR); see harness_group.h. Rank 0
// gathers every rank's value and sends them all back; the transport's
// timeout bounds every wait, and one that expires ends the run with the
// transport's message (there is no second channel to diagnose over).
#include <algorithm>
#include <chrono>
#include <numeric>

#include "harness_group.h"

namespace collbench::harness {
namespace {

// Below kFirstSlotTag; runner.cpp has the harness's other tags,
// p2p_family.cpp the ping-pong's, clock_sync.cpp --sync window's (12-16).
constexpr int kGatherTag = 10;    // to rank 0
constexpr int kGatheredTag = 11;  // and back
constexpr int kBroadcastTag = 17;

class TransportHarnessGroup final : public HarnessGroup {
 public:
  TransportHarnessGroup(InstrumentedTransport& transport, HarnessTraffic& traffic)
      : transport_(transport), traffic_(traffic) {}

  void each_rank(const std::function<void(int rank)>& body) override { body(transport_.rank()); }
  double now(InstrumentedTransport&) const override {
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
  }
  bool names_rank_in_errors() const override { return true; }

  void barrier(InstrumentedTransport& rank, const char*) override {
    uncounted(rank, traffic_, [&] { rank.barrier(); });
  }
  void sleeping_barrier(InstrumentedTransport& rank, const char* what) override {
    barrier(rank, what);
  }

  SecondsOnRank slowest(SecondsOnRank mine, const char*) override {
    const std::vector<double> all = everyones(mine.seconds);
    const auto most = std::max_element(all.begin(), all.end());  // the first of equal ones
    return {*most, static_cast<int>(most - all.begin())};
  }
  std::uint64_t sum(std::uint64_t mine, const char*) override {
    const std::vector<std::uint64_t> all = everyones(mine);
    return std::accumulate(all.begin(), all.end(), std::uint64_t{0});
  }
  double sum(double mine, const char*) override {
    const std::vector<double> all = everyones(mine);
    return std::accumulate(all.begin(), all.end(), 0.0);
  }
  int min(int mine, const char*) override {
    const std::vector<int> all = everyones(mine);
    return *std::min_element(all.begin(), all.end());
  }
  void broadcast(std::span<std::byte> bytes, int root, const char*) override {
    uncounted(transport_, traffic_, [&] {
      Transport& transport = transport_;
      if (transport.rank() != root) {
        transport.wait(transport.irecv(bytes, root, kBroadcastTag));
        return;
      }
      std::vector<RequestId> requests;
      for (int r = 0; r < transport.size(); ++r) {
        if (r != root) requests.push_back(transport.isend(bytes, r, kBroadcastTag));
      }
      transport.wait_all(requests);
    });
  }
  std::vector<double> gather(std::span<const double> mine, const char*) override {
    return everyones(mine.front());
  }
  void timed_out(const std::string&) override {}

 private:
  // Every rank's `mine`, by rank, on every rank.
  template <typename Value>
  std::vector<Value> everyones(const Value& mine) {
    std::vector<Value> all(static_cast<std::size_t>(transport_.size()));
    uncounted(transport_, traffic_, [&] { gather_into(all, mine); });
    return all;
  }
  template <typename Value>
  void gather_into(std::vector<Value>& all, const Value& mine) {
    Transport& transport = transport_;
    const int rank = transport.rank();
    const int ranks = transport.size();
    all[static_cast<std::size_t>(rank)] = mine;
    if (rank == 0) {
      std::vector<RequestId> requests;
      for (int r = 1; r < ranks; ++r) {
        requests.push_back(
            transport.irecv(std::as_writable_bytes(std::span(&all[static_cast<std::size_t>(r)], 1)),
                            r, kGatherTag));
      }
      transport.wait_all(requests);
      requests.clear();
      for (int r = 1; r < ranks; ++r) {
        requests.push_back(transport.isend(std::as_bytes(std::span(all)), r, kGatheredTag));
      }
      transport.wait_all(requests);
    } else {
      transport.wait(transport.isend(std::as_bytes(std::span(&mine, 1)), 0, kGatherTag));
      transport.wait(transport.irecv(std::as_writable_bytes(std::span(all)), 0, kGatheredTag));
    }
  }

  InstrumentedTransport& transport_;
  HarnessTraffic& traffic_;
};

}  // namespace

std::unique_ptr<HarnessGroup> make_transport_harness_group(InstrumentedTransport& transport,
                                                           HarnessTraffic& traffic) {
  return std::make_unique<TransportHarnessGroup>(transport, traffic);
}

}  // namespace collbench::harness
