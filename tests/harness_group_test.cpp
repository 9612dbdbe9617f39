// The harness's own collectives without MPI (benchmarks/harness/harness_group.h):
// over the transport (one rank per process, --bootstrap file:DIR), on three
// in-process ranks, every rank gets the job's answer and the transport's
// counters keep none of the group's traffic; in one process, every rank is
// visited once per step. The MPI group runs under mpirun (harness_full and
// the other harness_* CTest entries).
#include "harness_group.h"

#include <gtest/gtest.h>

#include <array>
#include <mutex>
#include <set>
#include <string>

#include "collbench/transport/inproc_transport.h"

namespace collbench::harness {
namespace {

struct Answers {
  SecondsOnRank slowest;
  std::uint64_t sum = 0;
  double real_sum = 0;
  int min = 0;
  int broadcast = 0;
  std::string text;
  std::vector<double> gathered;
  std::uint64_t counted_bytes = 0;  // by the transport, net of the group's own
  std::uint64_t counted_messages = 0;
  std::uint64_t group_bytes = 0;
};

TEST(TransportHarnessGroup, EveryRankGetsTheJobsAnswerAndNoneOfItIsCounted) {
  constexpr int kRanks = 3;
  std::array<Answers, kRanks> answers{};
  run_in_process(kRanks, [&](InstrumentedTransport& transport) {
    const int rank = transport.rank();
    HarnessTraffic traffic;
    const std::unique_ptr<HarnessGroup> group = make_transport_harness_group(transport, traffic);
    Answers& mine = answers[static_cast<std::size_t>(rank)];
    // Ranks 1 and 2 are equally slow: the lower one is named.
    mine.slowest = group->slowest({rank == 0 ? 0.5 : 2.0, rank}, "slowest");
    mine.sum = group->sum(static_cast<std::uint64_t>(rank + 1), "sum");
    mine.real_sum = group->sum(0.25 * rank, "real sum");
    mine.min = group->min(rank == 0 ? 7 : 3 + rank, "min");
    mine.broadcast = group->broadcast_value(40 + rank, 2, "broadcast");
    std::string text = rank == 1 ? "from rank 1" : "...........";
    group->broadcast(std::as_writable_bytes(std::span(text)), 1, "broadcast of bytes");
    mine.text = text;
    const std::array<double, 1> value = {1.5 * rank};
    mine.gathered = group->gather(value, "gather");
    group->barrier(transport, "barrier");
    group->sleeping_barrier(transport, "sleeping barrier");
    mine.counted_bytes = transport.bytes_sent() - traffic.bytes;
    mine.counted_messages = transport.messages_sent() - traffic.messages;
    mine.group_bytes = traffic.bytes;
  });
  for (int rank = 0; rank < kRanks; ++rank) {
    const Answers& got = answers[static_cast<std::size_t>(rank)];
    SCOPED_TRACE(rank);
    EXPECT_EQ(got.slowest.seconds, 2.0);
    EXPECT_EQ(got.slowest.rank, 1);
    EXPECT_EQ(got.sum, 6u);
    EXPECT_EQ(got.real_sum, 0.75);
    EXPECT_EQ(got.min, 4);
    EXPECT_EQ(got.broadcast, 42);
    EXPECT_EQ(got.text, "from rank 1");
    EXPECT_EQ(got.gathered, (std::vector<double>{0.0, 1.5, 3.0}));
    EXPECT_EQ(got.counted_bytes, 0u);
    EXPECT_EQ(got.counted_messages, 0u);
    EXPECT_GT(got.group_bytes, 0u);
  }
}

TEST(InProcessHarnessGroup, EachStepVisitsEveryRankOnce) {
  constexpr int kRanks = 4;
  const std::unique_ptr<RankGroup> ranks = make_inproc_rank_group(kRanks);
  const std::unique_ptr<HarnessGroup> group = make_in_process_harness_group(*ranks);
  std::multiset<int> visited;
  std::mutex mutex;
  group->each_rank([&](int rank) {
    const std::lock_guard<std::mutex> lock(mutex);
    visited.insert(rank);
  });
  EXPECT_EQ(visited, (std::multiset<int>{0, 1, 2, 3}));
  // This process holds every rank: its part is the job's.
  EXPECT_EQ(group->slowest({3.0, 2}, "slowest").rank, 2);
  EXPECT_EQ(group->sum(std::uint64_t{9}, "sum"), 9u);
  EXPECT_EQ(group->broadcast_value(5, 3, "broadcast"), 5);
  EXPECT_FALSE(group->names_rank_in_errors());
}

}  // namespace
}  // namespace collbench::harness
