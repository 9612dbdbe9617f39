// The sim transport's mechanics on a star of 17 nodes (one platform per
// process: SimGrid seals it at the first run): units, bad platforms,
// ping-pong times against the links, o and γ charged, MPI's matching order,
// SimGrid's pairing of exactly the matched sides (a stranger's comm on the mailbox aside, each
// half on its own rank's host whichever rank matches), truncation, deadlock, size-only mode, the
// ideal barrier and the clock, bounded waits through the harness's instrumented transport, a
// test() that never blocks and polling test() alone. Every
// expected time is exact arithmetic on the platform's numbers.
#include "collbench/transport/sim_transport.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <map>
#include <memory>
#include <random>
#include <simgrid/s4u.hpp>
#include <stdexcept>
#include <vector>

#include "../transport/sim/flat_map.h"
#include "collbench/transport/instrumented_transport.h"

namespace collbench {
namespace {

constexpr double kLinkLatency = 0.5e-6;  // per link: α = 1 µs end to end
constexpr double kBandwidth = 1e9;       // β = 1 ns per byte

SimParams star(int ranks) {
  SimParams params;
  params.ranks = ranks;
  params.platform = "star:17";
  params.link_latency = kLinkLatency;
  params.link_bandwidth = kBandwidth;
  params.allow_unused_slots = true;
  return params;
}

// Simulated seconds of one run of `body`: the latest end less the common start.
double timed_run(RankGroup& group, const std::function<void(Transport&)>& body) {
  std::vector<double> ends(static_cast<std::size_t>(group.size()));
  double start = 0;
  group.run([&](Transport& transport) {
    start = group.now(transport);
    body(transport);
    ends[static_cast<std::size_t>(transport.rank())] = group.now(transport);
  });
  return *std::max_element(ends.begin(), ends.end()) - start;
}

void expect_seconds(double actual, double expected) {
  EXPECT_NEAR(actual, expected, 1e-9 * expected + 1e-15);
}

// The matching's table against std::map, on keys shaped as the transport's
// (ranks and tags at fixed bit offsets, so that they cluster), through
// growth and erasures in random order.
TEST(SimFlatMap, AgreesWithAMapThroughGrowthAndErasures) {
  sim::FlatMap<int> table;
  std::map<std::uint64_t, int> expected;
  std::mt19937_64 random(42);
  const auto key = [](std::uint64_t rank, std::uint64_t tag) {
    return (rank << 40) | (((rank + 255) % 256) << 16) | tag;
  };
  for (int round = 0; round < 20000; ++round) {
    const std::uint64_t k = key(random() % 256, random() % 4);
    const int action = static_cast<int>(random() % 3);
    if (action < 2) {
      const auto [value, added] = table.try_emplace(k, round);
      const auto [it, expected_added] = expected.try_emplace(k, round);
      ASSERT_EQ(added, expected_added) << "round " << round;
      ASSERT_EQ(*value, it->second) << "round " << round;
    } else if (expected.erase(k) == 1) {
      table.erase(k);
    }
    ASSERT_EQ(table.size(), expected.size()) << "round " << round;
  }
  for (std::uint64_t rank = 0; rank < 256; ++rank) {
    for (std::uint64_t tag = 0; tag < 4; ++tag) {
      const auto it = expected.find(key(rank, tag));
      const int* value = table.find(key(rank, tag));
      ASSERT_EQ(value != nullptr, it != expected.end()) << rank << " " << tag;
      if (value != nullptr) {
        EXPECT_EQ(*value, it->second);
      }
    }
  }
}

TEST(SimUnits, ParsesWhatSimGridWrites) {
  EXPECT_DOUBLE_EQ(parse_latency("1.5us"), 1.5e-6);
  EXPECT_DOUBLE_EQ(parse_latency("2ms"), 2e-3);
  EXPECT_DOUBLE_EQ(parse_latency("3s"), 3.0);
  EXPECT_DOUBLE_EQ(parse_latency("40ns"), 40e-9);
  EXPECT_DOUBLE_EQ(parse_latency("0s"), 0.0);
  EXPECT_DOUBLE_EQ(parse_bandwidth("10GBps"), 1e10);
  EXPECT_DOUBLE_EQ(parse_bandwidth("100Gbps"), 12.5e9);
  EXPECT_DOUBLE_EQ(parse_bandwidth("5MBps"), 5e6);
  EXPECT_DOUBLE_EQ(parse_bandwidth("8kbps"), 1e3);
  EXPECT_DOUBLE_EQ(parse_bandwidth("3Bps"), 3.0);
  EXPECT_DOUBLE_EQ(parse_bandwidth("16bps"), 2.0);
  EXPECT_DOUBLE_EQ(parse_rate_or_zero("0"), 0.0);
  EXPECT_DOUBLE_EQ(parse_rate_or_zero("2GBps"), 2e9);
}

TEST(SimUnits, RefusesMissingOrWrongUnitsAndBadValues) {
  for (const char* text : {"1", "1 us", "us", "-1us", "1xs", "1.5", "", "nanus", "1e999s"}) {
    EXPECT_THROW(parse_latency(text), std::invalid_argument) << text;
  }
  for (const char* text :
       {"10", "10GB", "10gbps", "0GBps", "-1GBps", "GBps", "1 GBps", "infGBps"}) {
    EXPECT_THROW(parse_bandwidth(text), std::invalid_argument) << text;
  }
  EXPECT_THROW(parse_rate_or_zero("0s"), std::invalid_argument);
  try {
    parse_latency("5");
    FAIL();
  } catch (const std::invalid_argument& error) {
    EXPECT_NE(std::string(error.what()).find("ns, us, ms, s"), std::string::npos) << error.what();
  }
}

TEST(SimPlatform, RefusesBadSpecsAndRankCounts) {
  const auto with = [](std::string platform, int ranks) {
    SimParams params;
    params.platform = std::move(platform);
    params.ranks = ranks;
    return params;
  };
  for (const SimParams& params :
       {with("ring", 4), with("star:", 4), with("star:x", 4), with("torus:4", 4),
        with("torus:2x0", 4), with("torus:2x2x2x2", 16), with("fat-tree:2;4,4;1,2", 16),
        with("fat-tree:2;4;1,2;1,2", 4), with("dragonfly:1,1;1,1;1", 1),
        with("dragonfly:2,1;1,1;1,1;1", 2), with("star:4", 5), with("torus:2x2", 3),
        with("star", 0), with("/nonexistent.xml", 2)}) {
    EXPECT_THROW(make_sim_rank_group(params), std::invalid_argument) << params.platform;
  }
  SimParams uneven = with("star", 5);
  uneven.ppn = 2;
  EXPECT_THROW(make_sim_rank_group(uneven), std::invalid_argument);
  SimParams negative = star(2);
  negative.overhead = -1;
  EXPECT_THROW(make_sim_rank_group(negative), std::invalid_argument);
}

// Rank 0 sends n bytes, rank 1 returns them: 2(α + nβ) (+ 2o each way).
double ping_pong(RankGroup& group, std::size_t bytes) {
  std::vector<std::byte> buffer0(bytes), buffer1(bytes);
  return timed_run(group, [&](Transport& transport) {
    if (transport.rank() == 0) {
      transport.wait(transport.isend(buffer0, 1, 1));
      transport.wait(transport.irecv(buffer0, 1, 2));
    } else if (transport.rank() == 1) {
      transport.wait(transport.irecv(buffer1, 0, 1));
      transport.wait(transport.isend(buffer1, 0, 2));
    }
  });
}

TEST(SimTransport, PingPongIsTheRoutesLatencyAndBandwidth) {
  auto group = make_sim_rank_group(star(2));
  const EndToEndLinks links = group->end_to_end();
  EXPECT_DOUBLE_EQ(links.alpha, 2 * kLinkLatency);
  EXPECT_DOUBLE_EQ(links.beta, 1 / kBandwidth);
  for (const std::size_t bytes : {std::size_t{0}, std::size_t{8}, std::size_t{1} << 20}) {
    expect_seconds(ping_pong(*group, bytes), 2 * (links.alpha + bytes * links.beta));
  }
}

// The harness wraps each rank in an InstrumentedTransport with a timeout,
// which sends every wait through wait_until: on an actor that wait must
// suspend (polling would never let simulated time pass), so the ping-pong
// takes the bare transport's simulated time, and its sends are counted.
TEST(SimTransport, BoundedWaitsOfAnInstrumentedTransportSuspendTheActor) {
  auto group = make_sim_rank_group(star(2));
  const EndToEndLinks links = group->end_to_end();
  std::vector<std::unique_ptr<InstrumentedTransport>> instrumented(2);
  group->run([&](Transport& transport) {
    auto& mine = instrumented[static_cast<std::size_t>(transport.rank())];
    mine = std::make_unique<InstrumentedTransport>(transport);
    mine->set_timeout(std::chrono::seconds(60));
  });
  constexpr std::size_t kBytes = 1000;
  std::vector<std::byte> buffer0(kBytes), buffer1(kBytes);
  const double seconds = timed_run(*group, [&](Transport& bare) {
    InstrumentedTransport& transport = *instrumented[static_cast<std::size_t>(bare.rank())];
    if (transport.rank() == 0) {
      transport.wait(transport.isend(buffer0, 1, 1));
      transport.wait(transport.irecv(buffer0, 1, 2));
    } else {
      transport.wait(transport.irecv(buffer1, 0, 1));
      transport.wait(transport.isend(buffer1, 0, 2));
    }
  });
  expect_seconds(seconds, 2 * (links.alpha + kBytes * links.beta));
  for (const auto& transport : instrumented) {
    EXPECT_EQ(transport->bytes_sent(), kBytes);
    EXPECT_EQ(transport->peers_contacted(), 1u);
  }
}

TEST(SimTransport, OverheadIsChargedOnBothSidesOfEveryMessage) {
  SimParams params = star(2);
  params.overhead = 3e-6;
  auto group = make_sim_rank_group(params);
  const EndToEndLinks links = group->end_to_end();
  EXPECT_DOUBLE_EQ(links.alpha, 2 * kLinkLatency + 2 * params.overhead);
  expect_seconds(ping_pong(*group, 1000), 2 * (links.alpha + 1000 * links.beta));
}

// Two flows into one port share it (max-min): the receiver's link carries
// both, so they end together after α + 2nβ, not α + nβ.
TEST(SimTransport, FlowsIntoOnePortShareItsBandwidth) {
  auto group = make_sim_rank_group(star(3));
  const std::size_t bytes = 1 << 20;
  std::vector<std::vector<std::byte>> buffers(3, std::vector<std::byte>(2 * bytes));
  const double seconds = timed_run(*group, [&](Transport& transport) {
    auto& mine = buffers[static_cast<std::size_t>(transport.rank())];
    if (transport.rank() == 0) {
      const RequestId first = transport.irecv(std::span(mine).first(bytes), 1, 0);
      const RequestId second = transport.irecv(std::span(mine).last(bytes), 2, 0);
      const RequestId both[] = {first, second};
      transport.wait_all(both);
    } else {
      transport.wait(transport.isend(std::span(mine).first(bytes), 0, 0));
    }
  });
  expect_seconds(seconds, 2 * kLinkLatency + 2.0 * bytes / kBandwidth);
}

// A message that waited on its lane (rank 0's second message to rank 1,
// behind its first) then shares rank 0's port fairly with the message to
// rank 2 that runs meanwhile: 1 MiB at half the bandwidth after the first
// ended at α + 2nβ, so rank 1 is done at α + 4nβ (it starved behind the
// 3 MiB when it started with no latency: α + 5nβ).
TEST(SimTransport, AMessageThatWaitedOnItsLaneSharesAPortFairly) {
  auto group = make_sim_rank_group(star(3));
  const std::size_t bytes = 1 << 20;
  std::vector<std::vector<std::byte>> buffers(3, std::vector<std::byte>(3 * bytes));
  std::vector<double> ends(3);
  double start = 0;
  group->run([&](Transport& transport) {
    start = group->now(transport);
    auto& mine = buffers[static_cast<std::size_t>(transport.rank())];
    if (transport.rank() == 0) {
      const RequestId sends[] = {transport.isend(std::span(mine).first(bytes), 1, 0),
                                 transport.isend(std::span(mine).last(bytes), 1, 0),
                                 transport.isend(std::span(mine), 2, 0)};
      transport.wait_all(sends);
    } else if (transport.rank() == 1) {
      const RequestId receives[] = {transport.irecv(std::span(mine).first(bytes), 0, 0),
                                    transport.irecv(std::span(mine).last(bytes), 0, 0)};
      transport.wait_all(receives);
    } else {
      transport.wait(transport.irecv(std::span(mine), 0, 0));
    }
    ends[static_cast<std::size_t>(transport.rank())] = group->now(transport);
  });
  const double alpha = 2 * kLinkLatency, n_beta = bytes / kBandwidth;
  expect_seconds(ends[1] - start, alpha + 4 * n_beta);
  expect_seconds(ends[2] - start, alpha + 5 * n_beta);
}

TEST(SimTransport, ReductionsChargeGammaAndCopiesTheMemoryRate) {
  SimParams params = star(1);
  params.gamma_rate = 2e9;
  params.memory_rate = 4e9;
  auto group = make_sim_rank_group(params);
  std::vector<float> a(1000, 1.0f), b(1000, 2.0f), c(1000);
  const double reduced = timed_run(*group, [&](Transport& transport) {
    transport.reduce(DType::f32, ReduceOp::sum, a.data(), b.data(), a.size());
    transport.reduce_into(DType::f32, ReduceOp::sum, c.data(), a.data(), b.data(), a.size());
  });
  expect_seconds(reduced, 2 * 4000 / params.gamma_rate);
  EXPECT_EQ(a[0], 3.0f);
  EXPECT_EQ(c[0], 5.0f);
  const double copied = timed_run(*group, [&](Transport& transport) {
    transport.copy(c.data(), b.data(), 4000);
    transport.scale_for_average(DType::f32, c.data(), c.size(), 2);
  });
  expect_seconds(copied, 2 * 4000 / params.memory_rate);
  EXPECT_EQ(c[0], 1.0f);
}

// Sends of one source and tag arrive in the order they were posted, other
// tags and sources aside, however the receives are interleaved.
TEST(SimTransport, MatchingKeepsMpisOrder) {
  auto group = make_sim_rank_group(star(3));
  constexpr int kMessages = 6;
  std::vector<std::vector<int>> received(2 * kMessages, std::vector<int>(1, -1));
  group->run([&](Transport& transport) {
    std::vector<RequestId> requests;
    std::vector<std::vector<int>> values;
    if (transport.rank() > 0) {
      for (int i = 0; i < kMessages; ++i) values.push_back({transport.rank() * 100 + i});
      // Tag i % 2: the receiver asks for tag 1 first.
      for (int i = 0; i < kMessages; ++i) {
        requests.push_back(transport.isend(std::as_bytes(std::span(values[i])), 0, i % 2));
      }
    } else {
      for (const int tag : {1, 0}) {
        for (int source = 2; source >= 1; --source) {
          for (int i = tag; i < kMessages; i += 2) {
            auto& slot = received[static_cast<std::size_t>((source - 1) * kMessages + i)];
            requests.push_back(
                transport.irecv(std::as_writable_bytes(std::span(slot)), source, tag));
          }
        }
      }
    }
    transport.wait_all(requests);
  });
  for (int source = 1; source <= 2; ++source) {
    for (int i = 0; i < kMessages; ++i) {
      EXPECT_EQ(received[static_cast<std::size_t>((source - 1) * kMessages + i)][0],
                source * 100 + i)
          << "source " << source << " message " << i;
    }
  }
}

// test() does not block (Endpoint's promise): a receive not matched yet (its
// sender computes first) and a receive matched but queued on its lane
// behind another are not done, and asking leaves the caller's clock where
// it was; so is a running one (asked once); a finished one is done. The
// waits after the tests end when they would have without them.
TEST(SimTransport, TestNeverBlocksAndLeavesTheClock) {
  auto group = make_sim_rank_group(star(3));
  constexpr std::size_t kBytes = 1000;
  constexpr double kLate = 10e-6;
  const double alpha = 2 * kLinkLatency, n_beta = kBytes / kBandwidth;
  std::vector<std::vector<int>> buffers(3, std::vector<int>(2 * kBytes / sizeof(int)));
  std::vector<double> ends(3);
  std::vector<double> moved;  // what each test() did to its caller's clock
  std::vector<bool> answers;
  double start = 0;
  // A request test() finished must not be waited for (its handle is back
  // in the pool): each wait below is for one it did not.
  const auto ask = [&](Transport& transport, RequestId request) {
    const double before = group->now(transport);
    const bool done = transport.test(request);
    answers.push_back(done);
    moved.push_back(group->now(transport) - before);
    return done;
  };
  group->run([&](Transport& transport) {
    start = group->now(transport);
    auto bytes =
        std::as_writable_bytes(std::span(buffers[static_cast<std::size_t>(transport.rank())]));
    if (transport.rank() == 0) {
      const RequestId unmatched = transport.irecv(bytes.first(kBytes), 2, 0);
      if (!ask(transport, unmatched)) transport.wait(unmatched);
    } else if (transport.rank() == 1) {
      // Two messages from rank 2: the second waits on its lane.
      const RequestId first = transport.irecv(bytes.first(kBytes), 2, 1);
      const RequestId second = transport.irecv(bytes.last(kBytes), 2, 1);
      const bool second_done = ask(transport, second);
      const bool first_done = ask(transport, first);
      dynamic_cast<SimulatedCompute&>(transport).compute(kLate);
      if (!first_done) ask(transport, first);  // over by now
      if (!second_done) transport.wait(second);
    } else {
      const auto sent = std::as_bytes(std::span(buffers[2]));
      const RequestId to_one[] = {transport.isend(sent.first(kBytes), 1, 1),
                                  transport.isend(sent.first(kBytes), 1, 1)};
      transport.wait_all(to_one);
      dynamic_cast<SimulatedCompute&>(transport).compute(kLate);
      transport.wait(transport.isend(sent.first(kBytes), 0, 0));
    }
    ends[static_cast<std::size_t>(transport.rank())] = group->now(transport);
  });
  // Rank 0's and rank 1's first two at the start, in some order, then rank
  // 1's last.
  EXPECT_EQ(answers, (std::vector<bool>{false, false, false, true}));
  EXPECT_EQ(moved, std::vector<double>(4, 0.0));
  expect_seconds(ends[1] - start, kLate);
  // Rank 2's second message to rank 1 starts with kLeastLatencyFactor of its
  // latency: a picosecond.
  EXPECT_NEAR(ends[0] - start, alpha + 2 * n_beta + kLate + alpha + n_beta, 2e-12);
}

// A rank that only polls test() gets its message: its polls let the
// instant end (no livelock while its sender computes), and a request queued
// on its lane starts when the pair ahead of it ends though nobody waits for
// that one. Each poll loop is bounded, so that a broken test() fails here
// instead of hanging.
TEST(SimTransport, PollingTestAloneCompletesEveryRequest) {
  auto group = make_sim_rank_group(star(2));
  constexpr std::size_t kBytes = 1000;
  constexpr double kLate = 5e-6;
  constexpr int kMostPolls = 1'000'000;
  const double alpha = 2 * kLinkLatency, n_beta = kBytes / kBandwidth;
  std::vector<std::vector<int>> buffers(2, std::vector<int>(2 * kBytes / sizeof(int)));
  for (int& value : buffers[0]) value = 7;
  std::vector<double> ends(2);
  std::vector<int> polls(2);
  double start = 0;
  const auto poll = [&](Transport& transport, RequestId request) {
    int& mine = polls[static_cast<std::size_t>(transport.rank())];
    for (int i = 0; i < kMostPolls; ++i, ++mine) {
      if (transport.test(request)) return true;
    }
    return false;
  };
  group->run([&](Transport& transport) {
    start = group->now(transport);
    auto bytes =
        std::as_writable_bytes(std::span(buffers[static_cast<std::size_t>(transport.rank())]));
    if (transport.rank() == 0) {
      dynamic_cast<SimulatedCompute&>(transport).compute(kLate);
      const RequestId first = transport.isend(bytes.first(kBytes), 1, 0);
      const RequestId second = transport.isend(bytes.last(kBytes), 1, 0);
      EXPECT_TRUE(poll(transport, second));
      EXPECT_TRUE(poll(transport, first));
    } else {
      const RequestId first = transport.irecv(bytes.first(kBytes), 0, 0);
      const RequestId second = transport.irecv(bytes.last(kBytes), 0, 0);
      EXPECT_TRUE(poll(transport, second));
      EXPECT_TRUE(poll(transport, first));
    }
    ends[static_cast<std::size_t>(transport.rank())] = group->now(transport);
  });
  EXPECT_EQ(buffers[1], buffers[0]);
  // The second message's bytes follow the first's (latencies overlap);
  // the polls see the end within one poll's kTestPollSeconds (0.1 us).
  const double done = kLate + alpha + 2 * n_beta;
  EXPECT_GE(ends[1] - start, done - 1e-12);
  EXPECT_LT(ends[1] - start, done + 0.5e-6);
  EXPECT_LT(polls[1], kMostPolls);
}

// Each receive ends with the send collbench matched it with, on its own
// rank's host: rank 0's receives are posted first, so ranks 1 and 2 start
// both halves of their transfers, and SimGrid must pair each half with its
// own on rank 0's mailbox. The small receive ends at its own message's time
// (both flows share rank 0's link while it lasts), not at the MiB's, and
// not alone on the link as it would be if its half were not rank 0's.
TEST(SimTransport, EachReceiveEndsWithTheSendItMatched) {
  auto group = make_sim_rank_group(star(3));
  const EndToEndLinks links = group->end_to_end();
  constexpr std::size_t kBig = 1 << 20, kSmall = 8;
  std::vector<std::vector<std::byte>> buffers(3, std::vector<std::byte>(kBig));
  double start = 0, small_end = 0;
  group->run([&](Transport& transport) {
    const std::span<std::byte> mine(buffers[static_cast<std::size_t>(transport.rank())]);
    if (transport.rank() == 0) {
      start = group->now(transport);
      const RequestId small = transport.irecv(mine.first(kSmall), 2, 0);
      const RequestId big = transport.irecv(mine, 1, 0);
      transport.wait(small);
      small_end = group->now(transport);
      transport.wait(big);
    } else {
      transport.wait(transport.isend(mine.first(transport.rank() == 1 ? kBig : kSmall), 0, 0));
    }
  });
  expect_seconds(small_end - start, links.alpha + 2 * kSmall * links.beta);
}

// Another comm waiting on rank 0's mailbox (here rank 2's, of a GiB: any
// other code of the process may use SimGrid) must not pair with the half
// of collbench's message that meets it there: rank 0's receive of 8 bytes
// from rank 1 takes its own α + 8β, not the stranger's transfer.
TEST(SimTransport, AStrangeCommOnTheMailboxPairsWithNoHalf) {
  auto group = make_sim_rank_group(star(3));
  const EndToEndLinks links = group->end_to_end();
  constexpr double kLater = 1e-6;  // rank 1 sends once the stranger waits
  std::vector<std::byte> message(8), arrival(8);
  int stranger_payload = 0;
  double posted = 0, received = 0;
  group->run([&](Transport& transport) {
    if (transport.rank() == 0) {
      const RequestId request = transport.irecv(arrival, 1, 0);
      transport.wait(request);
      received = group->now(transport);
    } else if (transport.rank() == 1) {
      simgrid::s4u::this_actor::sleep_for(kLater);
      posted = group->now(transport);
      transport.wait(transport.isend(message, 0, 0));
    } else {
      const simgrid::s4u::CommPtr stranger =
          simgrid::s4u::Mailbox::by_name(sim_mailbox_name(0))
              ->put_init(&stranger_payload, std::uint64_t{1} << 30);
      stranger->start();
      simgrid::s4u::this_actor::sleep_for(2 * kLater + links.alpha);
      stranger->cancel();  // still waiting: off the mailbox
    }
  });
  expect_seconds(received - posted, links.alpha + 8 * links.beta);
}

// Each half of a message is its own rank's, whichever rank matches: here
// the receivers match (rank 1 posts both sends first), so the send halves
// are started by ranks 0 and 2, for rank 1. Both transfers leave rank 1's
// host and share its link: each takes α + 2nβ (from another host, or
// from the receiver's own, each would have a link to itself).
TEST(SimTransport, TheSendHalfLeavesTheSendersHostWhoeverMatches) {
  auto group = make_sim_rank_group(star(3));
  const EndToEndLinks links = group->end_to_end();
  constexpr std::size_t kBytes = 1 << 20;
  constexpr double kLater = 1e-6;  // the receivers post after the sends
  std::vector<std::vector<std::byte>> buffers(3, std::vector<std::byte>(kBytes));
  std::vector<double> received(3, 0);
  double start = 0;
  group->run([&](Transport& transport) {
    const auto rank = static_cast<std::size_t>(transport.rank());
    start = group->now(transport);
    if (rank == 1) {
      const std::vector<RequestId> sends = {transport.isend(buffers[rank], 0, 0),
                                            transport.isend(buffers[rank], 2, 0)};
      transport.wait_all(sends);
    } else {
      simgrid::s4u::this_actor::sleep_for(kLater);
      transport.wait(transport.irecv(buffers[rank], 1, 0));
      received[rank] = group->now(transport);
    }
  });
  for (const std::size_t rank : {0, 2}) {
    expect_seconds(received[rank] - start, kLater + links.alpha + 2 * kBytes * links.beta);
  }
}

TEST(SimTransport, ATruncatedReceiveFailsAndTheGroupRunsAgain) {
  auto group = make_sim_rank_group(star(2));
  std::vector<std::byte> big(16), small(8);
  try {
    group->run([&](Transport& transport) {
      if (transport.rank() == 0) transport.wait(transport.isend(big, 1, 0));
      if (transport.rank() == 1) transport.wait(transport.irecv(small, 0, 0));
    });
    FAIL() << "no error";
  } catch (const std::runtime_error& error) {
    EXPECT_NE(std::string(error.what()).find("truncated"), std::string::npos) << error.what();
  }
  expect_seconds(ping_pong(*group, 8), 2 * (2 * kLinkLatency + 8 / kBandwidth));
}

TEST(SimTransport, ADeadlockIsReportedNotHung) {
  auto group = make_sim_rank_group(star(2));
  std::vector<std::byte> buffer(8);
  try {
    group->run([&](Transport& transport) {
      if (transport.rank() == 1) transport.wait(transport.irecv(buffer, 0, 5));
    });
    FAIL() << "no error";
  } catch (const std::runtime_error& error) {
    EXPECT_NE(std::string(error.what()).find("rank 1 receives from rank 0 tag 5"),
              std::string::npos)
        << error.what();
  }
  expect_seconds(ping_pong(*group, 8), 2 * (2 * kLinkLatency + 8 / kBandwidth));
}

// Size-only: the same time, and not a byte written or reduced.
TEST(SimTransport, SizeOnlyModeTimesTheSameAndTouchesNothing) {
  SimParams params = star(2);
  params.gamma_rate = 1e9;
  const auto exchange_and_reduce = [](RankGroup& group, std::vector<float>& in,
                                      std::vector<float>& out) {
    return timed_run(group, [&](Transport& transport) {
      if (transport.rank() == 0) {
        transport.wait(transport.isend(std::as_bytes(std::span(in)), 1, 0));
      } else {
        transport.wait(transport.irecv(std::as_writable_bytes(std::span(out)), 0, 0));
        transport.reduce(DType::f32, ReduceOp::sum, out.data(), in.data(), out.size());
      }
    });
  };
  std::vector<float> in(4096, 1.0f), out(4096, 7.0f);
  auto real = make_sim_rank_group(params);
  const double real_seconds = exchange_and_reduce(*real, in, out);
  EXPECT_EQ(out[0], 2.0f);
  params.payload = false;
  auto size_only = make_sim_rank_group(params);
  std::fill(out.begin(), out.end(), 7.0f);
  const double size_only_seconds = exchange_and_reduce(*size_only, in, out);
  EXPECT_EQ(out[0], 7.0f);
  expect_seconds(size_only_seconds, real_seconds);
  expect_seconds(real_seconds, 2 * kLinkLatency + 16384 / kBandwidth + 16384 / 1e9);
}

// Every rank leaves the barrier when the last arrives, at that instant.
TEST(SimTransport, TheBarrierIsIdealAndTheClockNeverResets) {
  SimParams params = star(4);
  params.memory_rate = 1e9;
  auto group = make_sim_rank_group(params);
  std::vector<std::byte> scratch(4000);
  std::vector<double> after(4);
  double start = 0;
  group->run([&](Transport& transport) {
    start = group->now(transport);
    // Rank r copies r·1000 bytes: r µs.
    transport.copy(scratch.data(), scratch.data(),
                   1000 * static_cast<std::size_t>(transport.rank()));
    transport.barrier();
    after[static_cast<std::size_t>(transport.rank())] = group->now(transport);
  });
  for (const double time : after) expect_seconds(time - start, 3e-6);
  double next = 0;
  group->run([&](Transport& transport) { next = group->now(transport); });
  EXPECT_GE(next, after[0]);
}

TEST(SimTransport, UntouchedBuffersCostNoMemoryUntilWritten) {
  const UntouchedBuffer huge(std::size_t{1} << 40);  // 1 TiB of address space
  EXPECT_EQ(huge.span().size(), std::size_t{1} << 40);
  huge.span()[12345] = std::byte{7};
  EXPECT_EQ(huge.span()[12345], std::byte{7});
  const UntouchedBuffer empty(0);
  EXPECT_TRUE(empty.span().empty());
}

}  // namespace
}  // namespace collbench
