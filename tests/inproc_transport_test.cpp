// The in-process transport itself: MPI's matching rules, errors, timeouts,
// and one failing rank ending the others.
#include "collbench/transport/inproc_transport.h"

#include <gtest/gtest.h>

#include <array>
#include <atomic>
#include <chrono>
#include <list>
#include <memory>
#include <stdexcept>
#include <thread>
#include <vector>

#include "collbench/transport/forwarding_transport.h"
#include "transport_case.h"

namespace collbench {
namespace {

std::span<const std::byte> bytes_of(const std::vector<int>& values) {
  return std::as_bytes(std::span(values));
}
std::span<std::byte> writable_bytes_of(std::vector<int>& values) {
  return std::as_writable_bytes(std::span(values));
}

TEST(InProcessTransport, SameTagMessagesArriveInPostOrder) {
  run_in_process(2, [](InstrumentedTransport& transport) {
    if (transport.rank() == 0) {
      std::vector<int> first = {1, 2}, second = {3, 4, 5};
      RequestId a = transport.isend(bytes_of(first), 1, 7);
      RequestId b = transport.isend(bytes_of(second), 1, 7);
      transport.wait(a);
      transport.wait(b);
      EXPECT_EQ(transport.bytes_sent(), 20u);
      EXPECT_EQ(transport.messages_sent(), 2u);
    } else {
      std::vector<int> first(2), second(3);
      std::vector<RequestId> requests = {transport.irecv(writable_bytes_of(first), 0, 7),
                                         transport.irecv(writable_bytes_of(second), 0, 7)};
      transport.wait_all(requests);
      EXPECT_EQ(first, (std::vector<int>{1, 2}));
      EXPECT_EQ(second, (std::vector<int>{3, 4, 5}));
    }
  });
}

TEST(InProcessTransport, CountsEachPeerAddressedOnce) {
  // Rank 0 sends to 1 twice and receives from 2: two peers; a bad peer is
  // refused before it is counted.
  run_in_process(3, [](InstrumentedTransport& transport) {
    std::vector<int> value = {7};
    EXPECT_EQ(transport.peers_contacted(), 0u);
    if (transport.rank() == 0) {
      EXPECT_THROW(transport.isend(bytes_of(value), 3, 0), std::invalid_argument);
      transport.wait(transport.isend(bytes_of(value), 1, 0));
      transport.wait(transport.isend(bytes_of(value), 1, 0));
      transport.wait(transport.irecv(writable_bytes_of(value), 2, 0));
      EXPECT_EQ(transport.peers_contacted(), 2u);
      transport.reset_counters();  // the byte counters only
      EXPECT_EQ(transport.peers_contacted(), 2u);
    } else if (transport.rank() == 1) {
      transport.wait(transport.irecv(writable_bytes_of(value), 0, 0));
      transport.wait(transport.irecv(writable_bytes_of(value), 0, 0));
      EXPECT_EQ(transport.peers_contacted(), 1u);
    } else {
      transport.wait(transport.isend(bytes_of(value), 0, 0));
      EXPECT_EQ(transport.peers_contacted(), 1u);
    }
  });
}

TEST(InProcessTransport, TagsAndSourcesSelectTheMessage) {
  run_in_process(3, [](Transport& transport) {
    if (transport.rank() == 0) {
      std::vector<int> from1(1), from2(1), tag9(1);
      // Posted in the opposite order of the sends' tags and sources.
      std::vector<RequestId> requests = {transport.irecv(writable_bytes_of(tag9), 1, 9),
                                         transport.irecv(writable_bytes_of(from2), 2, 5),
                                         transport.irecv(writable_bytes_of(from1), 1, 5)};
      transport.wait_all(requests);
      EXPECT_EQ(from1[0], 15);
      EXPECT_EQ(from2[0], 25);
      EXPECT_EQ(tag9[0], 19);
    } else {
      std::vector<int> tag5 = {transport.rank() * 10 + 5}, tag9 = {transport.rank() * 10 + 9};
      RequestId a = transport.isend(bytes_of(tag5), 0, 5);
      if (transport.rank() == 1) transport.wait(transport.isend(bytes_of(tag9), 0, 9));
      transport.wait(a);
    }
  });
}

TEST(InProcessTransport, ZeroLengthMessagesAndBarrier) {
  std::atomic<int> arrived{0};
  run_in_process(4, [&](Transport& transport) {
    const int right = (transport.rank() + 1) % 4, left = (transport.rank() + 3) % 4;
    std::vector<RequestId> requests = {transport.irecv({}, left, 0), transport.isend({}, right, 0)};
    transport.wait_all(requests);
    ++arrived;
    transport.barrier();
    EXPECT_EQ(arrived.load(), 4);
  });
}

// test() completes a request without blocking and returns its handle.
TEST(InProcessTransport, TestCompletesWithoutBlockingAndReleases) {
  run_in_process(
      3, [&](Transport& transport) { testing::expect_test_completes_and_releases(transport); });
}

// Sends complete at once, as MPI's eager protocol completes a small send
// before its receive is posted: the payload is copied and sent in the
// background, so that a wait never waits for a send's receiver. The
// in-process transport's sends are rendezvous (a send completes when its
// receive has copied it), which holds a sender until its peer arrives and
// so can hide a protocol that forgets to wait for someone.
class EagerTransport final : public ForwardingTransport {
 public:
  using ForwardingTransport::ForwardingTransport;
  ~EagerTransport() override {
    try {
      drain();
    } catch (...) {
      // The test has failed already; its peers are being woken up.
    }
  }

  RequestId isend(std::span<const std::byte> data, int peer, int tag) override {
    reap();
    Background& sending = background_.emplace_back();
    sending.payload.assign(data.begin(), data.end());
    sending.request = ForwardingTransport::isend(sending.payload, peer, tag);
    return kCompletedSend;
  }
  void wait(RequestId request) override {
    if (request != kCompletedSend) ForwardingTransport::wait(request);
  }
  bool test(RequestId request) override {
    return request == kCompletedSend || ForwardingTransport::test(request);
  }
  void wait_all(std::span<const RequestId> requests) override {
    std::vector<RequestId> receives;
    for (const RequestId request : requests) {
      if (request != kCompletedSend) receives.push_back(request);
    }
    ForwardingTransport::wait_all(receives);
  }
  // Waits for the background sends: before their receivers leave.
  void drain() {
    for (Background& sending : background_) ForwardingTransport::wait(sending.request);
    background_.clear();
  }

 private:
  static constexpr RequestId kCompletedSend = RequestId{1} << 31;
  struct Background {
    std::vector<std::byte> payload;
    RequestId request = 0;
  };
  void reap() {
    background_.remove_if(
        [this](Background& sending) { return ForwardingTransport::test(sending.request); });
  }
  std::list<Background> background_;
};

TEST(EagerTransport, SendsCompleteBeforeTheirReceiveIsPosted) {
  std::atomic<bool> sent{false};
  run_in_process(2, [&](Transport& inner) {
    EagerTransport transport(inner);
    std::vector<int> value = {transport.rank() == 0 ? 42 : 0};
    if (transport.rank() == 0) {
      transport.wait(transport.isend(bytes_of(value), 1, 0));
      value[0] = 0;  // the payload was copied
      sent = true;
    } else {
      while (!sent) std::this_thread::yield();
      transport.wait(transport.irecv(writable_bytes_of(value), 0, 0));
      EXPECT_EQ(value[0], 42);
    }
    transport.drain();
  });
}

// A subgroup's barrier holds its members, and only them, until all of them
// arrived: two interleaved subgroups of 3 (members in parent order) and one
// of 5 in reverse order (not a power of two). The last member of each is
// late, so that a barrier that does not wait lets the others through early.
// Over rendezvous sends, and over eager ones, with which a barrier that
// skips a round lets a member through that waits only for early ones.
void expect_subgroup_barrier_holds(bool eager) {
  for (const int ranks : {6, 5}) {
    std::array<std::atomic<int>, 2> arrived{};
    run_in_process(ranks, [&](Transport& inner) {
      EagerTransport eager_transport(inner);
      Transport& transport = eager ? static_cast<Transport&>(eager_transport) : inner;
      const int group = ranks == 6 ? transport.rank() % 2 : 0;
      std::vector<int> members;
      if (ranks == 6) {
        members = group == 0 ? std::vector<int>{0, 2, 4} : std::vector<int>{1, 3, 5};
      } else {
        members = {4, 3, 2, 1, 0};
      }
      const std::unique_ptr<Transport> view = transport.subgroup(members);
      Transport& subgroup = *view;
      const int size = subgroup.size();
      for (int round = 1; round <= 3; ++round) {
        if (subgroup.rank() == size - 1) std::this_thread::sleep_for(std::chrono::milliseconds(20));
        ++arrived[static_cast<std::size_t>(group)];
        subgroup.barrier();
        EXPECT_GE(arrived[static_cast<std::size_t>(group)].load(), size * round)
            << "left the barrier of " << size << " before every member arrived"
            << (eager ? " (eager sends)" : "");
        subgroup.barrier();  // no member starts the next round before all checked
      }
      eager_transport.drain();
    });
  }
}

TEST(SubgroupTransport, BarrierHoldsTheMembersUntilAllArrive) {
  expect_subgroup_barrier_holds(/*eager=*/false);
}

TEST(SubgroupTransport, BarrierHoldsTheMembersUntilAllArriveWithEagerSends) {
  expect_subgroup_barrier_holds(/*eager=*/true);
}

TEST(InProcessTransport, TruncationIsAnError) {
  EXPECT_THROW(run_in_process(2,
                              [](Transport& transport) {
                                std::vector<int> data(4);
                                if (transport.rank() == 0) {
                                  transport.wait(transport.isend(bytes_of(data), 1, 0));
                                } else {
                                  std::vector<int> small(2);
                                  transport.wait(transport.irecv(writable_bytes_of(small), 0, 0));
                                }
                              }),
               std::runtime_error);
}

TEST(InProcessTransport, BadPeerOrTagIsRejected) {
  run_in_process(2, [](Transport& transport) {
    std::vector<int> data(1);
    EXPECT_THROW(transport.isend(bytes_of(data), 2, 0), std::invalid_argument);
    EXPECT_THROW(transport.irecv(writable_bytes_of(data), -1, 0), std::invalid_argument);
    EXPECT_THROW(transport.isend(bytes_of(data), 1, kMaxTag + 1), std::invalid_argument);
  });
}

TEST(InProcessTransport, MissingSenderTimesOutNamingThePeer) {
  try {
    run_in_process(
        2,
        [](Transport& transport) {
          std::vector<int> data(1);
          if (transport.rank() == 1) transport.wait(transport.irecv(writable_bytes_of(data), 0, 3));
        },
        std::chrono::milliseconds(100));
    FAIL() << "expected a timeout";
  } catch (const TimeoutError& error) {
    EXPECT_NE(std::string(error.what()).find("recv from rank 0 tag 3"), std::string::npos)
        << error.what();
  }
}

// The handler runs at the wait, before the waiting frame (which owns the
// pending receive's buffer) unwinds, then the wait throws
// (InstrumentedTransport::set_timeout_handler).
TEST(InProcessTransport, TimeoutHandlerRunsAtTheWaitThenTheWaitThrows) {
  std::atomic<int> handled = 0;
  EXPECT_THROW(
      run_in_process(
          2,
          [&](InstrumentedTransport& transport) {
            if (transport.rank() != 1) return;
            bool frame_alive = false;
            transport.set_timeout_handler([&](const TimeoutError& error) {
              ++handled;
              EXPECT_TRUE(frame_alive) << "the handler ran after the frame unwound";
              EXPECT_NE(std::string(error.what()).find("recv from rank 0 tag 3"), std::string::npos)
                  << error.what();
            });
            std::vector<int> data(1);
            frame_alive = true;
            struct Unwound {
              bool& alive;
              ~Unwound() { alive = false; }
            } unwound{frame_alive};
            transport.wait(transport.irecv(writable_bytes_of(data), 0, 3));
          },
          std::chrono::milliseconds(100)),
      TimeoutError);
  EXPECT_EQ(handled.load(), 1);
}

TEST(InProcessTransport, OneFailingRankEndsTheOthersPromptly) {
  const auto start = std::chrono::steady_clock::now();
  EXPECT_THROW(run_in_process(
                   4,
                   [](Transport& transport) {
                     if (transport.rank() == 2) throw std::logic_error("rank 2 broke");
                     transport.barrier();
                   },
                   std::chrono::seconds(30)),
               std::logic_error);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
}

// The single-process driver's group: one thread per rank for the group's
// life, each with its transport, one body per run().
TEST(InProcessRankGroup, RanksKeepTheirThreadAndTransportAcrossRuns) {
  const std::unique_ptr<RankGroup> group = make_inproc_rank_group(3);
  ASSERT_EQ(group->size(), 3);
  EXPECT_EQ(group->kind(), "inproc");
  std::array<std::thread::id, 3> threads{};
  std::array<Transport*, 3> transports{};
  std::array<int, 3> first_slots{};
  std::atomic<int> bodies{0};
  group->run([&](Transport& transport) {
    const auto rank = static_cast<std::size_t>(transport.rank());
    threads[rank] = std::this_thread::get_id();
    transports[rank] = &transport;
    first_slots[rank] = transport.take_tag_slot();
    ++bodies;
  });
  EXPECT_EQ(bodies.load(), 3);
  group->run([&](Transport& transport) {
    const auto rank = static_cast<std::size_t>(transport.rank());
    EXPECT_EQ(threads[rank], std::this_thread::get_id()) << "rank " << rank;
    EXPECT_EQ(transports[rank], &transport) << "rank " << rank;
    EXPECT_NE(threads[rank], std::thread::id{});
    // The slot taken in the first run is still taken: the transport is the same.
    EXPECT_EQ(transport.take_tag_slot(), first_slots[rank] + kTagsPerSlot) << "rank " << rank;
    // The ranks talk to each other within one run.
    std::vector<int> token = {static_cast<int>(rank)};
    std::vector<int> got(1);
    const int right = (transport.rank() + 1) % 3;
    const int left = (transport.rank() + 2) % 3;
    std::vector<RequestId> requests = {transport.irecv(writable_bytes_of(got), left, 5),
                                       transport.isend(bytes_of(token), right, 5)};
    transport.wait_all(requests);
    EXPECT_EQ(got[0], left);
    ++bodies;
  });
  EXPECT_EQ(bodies.load(), 6);
}

// Waits without a timeout: a rank the failure did not wake would hang here.
TEST(InProcessRankGroup, OneFailingRankEndsTheRunWithItsError) {
  const std::unique_ptr<RankGroup> group = make_inproc_rank_group(4, std::chrono::milliseconds(0));
  EXPECT_THROW(group->run([](Transport& transport) {
    if (transport.rank() == 2) throw std::logic_error("rank 2 broke");
    transport.barrier();
  }),
               std::logic_error);
  // The world ended with it: the next run fails instead of hanging.
  EXPECT_THROW(group->run([](Transport& transport) { transport.barrier(); }), std::runtime_error);
}

}  // namespace
}  // namespace collbench
