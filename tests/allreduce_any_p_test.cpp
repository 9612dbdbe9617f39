// The allreduce algorithms for scale (double_binary_tree, swing_latency,
// swing_bandwidth) at the rank counts the all-algorithm suite
// (collective_inproc_test.cpp, p ≤ 9, 13 and 16) leaves out, up to 17 in the
// default tier and 31, 33, 63 and 100 in the full one: every dtype and op,
// awkward counts (0, 1, p − 1, p + 1: fewer elements than ranks and uneven
// halves and blocks), in place and out, and many small segments. Their cost
// formulas' spot values are in Registry.NamesAndCosts' manner, here.
// Mutants these tests were shown to catch, for the double binary tree and
// each Swing form (1-D and torus): a wrong peer (tree 1 placed two
// positions off; ρ's sign flipped: the peers tests), a skipped segment or
// block (the last segment of a half; one element of a step's exchange), a
// rank left out (a node's second child dropped; the last step dropped), and
// a fold that forgets its neighbour's vector (torus forms).
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <atomic>
#include <string>
#include <tuple>
#include <vector>

#include "collbench/collectives/collective.h"
#include "collbench/transport/forwarding_transport.h"
#include "collbench/transport/inproc_transport.h"
#include "collective_case.h"

namespace collbench {
namespace {

constexpr std::string_view kScaleAlgorithms[] = {"double_binary_tree", "swing_latency",
                                                 "swing_bandwidth"};

const CollectiveInfo& allreduce() { return *find_collective("allreduce"); }

std::size_t wrong_elements(const AlgorithmInfo& algorithm, int ranks, std::size_t count,
                           DType dtype, ReduceOp op, bool in_place, std::size_t segment_bytes) {
  std::atomic<std::size_t> wrong{0};
  run_in_process(ranks, [&](Transport& transport) {
    wrong += testing::run_checked_calls(transport, allreduce(), algorithm, count, dtype, op,
                                        in_place, segment_bytes);
  });
  return wrong;
}

// (algorithm, ranks)
using Param = std::tuple<std::string, int>;

class AllreduceAnyP : public ::testing::TestWithParam<Param> {};

TEST_P(AllreduceAnyP, EveryDtypeOpAndCount) {
  const auto& [name, p] = GetParam();
  const AlgorithmInfo& algorithm = *allreduce().find_algorithm(name);
  const auto ranks = static_cast<std::size_t>(p);
  for (const std::size_t count :
       {std::size_t{0}, std::size_t{1}, ranks - 1, ranks + 1, std::size_t{1001}}) {
    for (const DType dtype : kAllDTypes) {
      for (const ReduceOp op : kAllReduceOps) {
        const std::string where =
            fmt::format("{} p={} count={} {} {}", name, p, count, to_string(dtype), to_string(op));
        EXPECT_EQ(wrong_elements(algorithm, p, count, dtype, op, false, 0), 0u) << where;
        if (count > ranks) {
          EXPECT_EQ(wrong_elements(algorithm, p, count, dtype, op, true, 0), 0u)
              << where << " in place";
        }
      }
    }
    // Segments of 40 bytes: the double binary tree's halves of 1001
    // elements travel in 13 to 51 segments, many of them in flight at once.
    for (const bool in_place : {false, true}) {
      EXPECT_EQ(wrong_elements(algorithm, p, count, DType::f32, ReduceOp::sum, in_place, 40), 0u)
          << name << " p=" << p << " count=" << count << " 40-byte segments"
          << (in_place ? " in place" : "");
    }
  }
}

std::vector<Param> cases(std::initializer_list<int> rank_counts) {
  std::vector<Param> all;
  for (const std::string_view name : kScaleAlgorithms) {
    for (const int p : rank_counts) all.emplace_back(std::string(name), p);
  }
  return all;
}

std::string case_name(const ::testing::TestParamInfo<Param>& info) {
  return fmt::format("{}_p{}", std::get<0>(info.param), std::get<1>(info.param));
}

// Instances named Full run only in the full tier (tests/CMakeLists.txt,
// COLLBENCH_FULL_GTESTS).
INSTANTIATE_TEST_SUITE_P(BeyondTheSuite, AllreduceAnyP,
                         ::testing::ValuesIn(cases({10, 11, 12, 14, 15, 17})), case_name);
INSTANTIATE_TEST_SUITE_P(Full, AllreduceAnyP, ::testing::ValuesIn(cases({31, 33, 63, 100})),
                         case_name);

TEST(AllreduceAnyP, TheScaleAlgorithmsAreRegistered) {
  for (const std::string_view name : kScaleAlgorithms) {
    EXPECT_NE(allreduce().find_algorithm(name), nullptr) << name;
  }
}

// Spot values of the header comments' costs.
TEST(AllreduceAnyP, Costs) {
  const auto cost = [](std::string_view name, int p, double n) {
    return allreduce().find_algorithm(name)->cost(p, n);
  };
  // p = 4, one segment: trees 3 → 1 → {0, 2} and 0 → 2 → {1, 3}. Transfers:
  // leaves up (ranks 1 and 2 receive two), 1 → 3 and 2 → 0, the roots down,
  // 1 and 2 down to two children each: one α each, 2 + 1 + 1 + 2 halves of
  // n/2 at the busiest link; 1 and 2 reduce two halves, then the roots one.
  const CostTerms tree4 = cost("double_binary_tree", 4, 1000);
  EXPECT_DOUBLE_EQ(tree4.messages, 4);
  EXPECT_DOUBLE_EQ(tree4.bytes, 3000);
  EXPECT_DOUBLE_EQ(tree4.reduce_bytes, 1500);
  // p = 2, 4 MiB: halves in 4 segments of 512 KiB; 5 transfers, the 3 of the
  // steady state with a segment up one tree and down the other at once; each
  // root reduces its child's 4 segments.
  const CostTerms tree2 = cost("double_binary_tree", 2, 4 << 20);
  EXPECT_DOUBLE_EQ(tree2.messages, 5);
  EXPECT_DOUBLE_EQ(tree2.bytes, 4 << 20);
  EXPECT_DOUBLE_EQ(tree2.reduce_bytes, 2 << 20);
  EXPECT_DOUBLE_EQ(cost("double_binary_tree", 1, 1000).messages, 0);
  // Swing costs what recursive doubling and Rabenseifner cost on a flat
  // network.
  const CostTerms latency = cost("swing_latency", 8, 1000);
  EXPECT_DOUBLE_EQ(latency.messages, 3);
  EXPECT_DOUBLE_EQ(latency.bytes, 3000);
  EXPECT_DOUBLE_EQ(latency.reduce_bytes, 3000);
  EXPECT_DOUBLE_EQ(cost("swing_latency", 6, 1000).messages, 4);  // 2 steps, fold, unfold
  const CostTerms bandwidth = cost("swing_bandwidth", 8, 800);
  EXPECT_DOUBLE_EQ(bandwidth.messages, 6);
  EXPECT_DOUBLE_EQ(bandwidth.bytes, 1400);
  EXPECT_DOUBLE_EQ(bandwidth.reduce_bytes, 700);
}

// Every rank is an inner node of at most one tree: with one segment per
// half it sends at most 4 messages (up and to two children in one tree, up
// in the other) and receives at most 4; a rank inner in both would send 6.
TEST(AllreduceAnyP, NoRankIsInnerInBothTrees) {
  const AlgorithmInfo& algorithm = *allreduce().find_algorithm("double_binary_tree");
  for (int p = 2; p <= 17; ++p) {
    std::atomic<std::uint64_t> most{0}, total{0};
    run_in_process(p, [&](InstrumentedTransport& transport) {
      const CollectiveSpec spec{DType::f32, ReduceOp::sum, 64, 0, {}};
      std::vector<std::byte> in(64 * 4), out(64 * 4);
      const auto call = algorithm.build(transport, spec, in, out);
      transport.reset_counters();
      call->run();
      total += transport.messages_sent();
      std::uint64_t seen = most.load();
      while (transport.messages_sent() > seen &&
             !most.compare_exchange_weak(seen, transport.messages_sent())) {
      }
    });
    EXPECT_LE(most.load(), 4u) << "p=" << p;
    // Two trees of p − 1 edges, each edge used once each way.
    EXPECT_EQ(total.load(), 4u * static_cast<std::uint64_t>(p - 1)) << "p=" << p;
  }
}

// Swing's peers: ρ_s = 1, −1, 3, −5, 11; even ranks add it, odd ones
// subtract it, so rank 0 meets 1, 15, 3, 11 at p = 16 and rank 1 meets 0,
// 2, 14, 6 — shown by the bytes each rank exchanges with each peer: a
// transport that counts messages per peer.
class PeerLedger final : public ForwardingTransport {
 public:
  using ForwardingTransport::ForwardingTransport;
  RequestId isend(std::span<const std::byte> data, int peer, int tag) override {
    peers.push_back(peer);
    return ForwardingTransport::isend(data, peer, tag);
  }
  std::vector<int> peers;
};

// The peers each rank sends to, in order, in one call of allreduce `name` on
// `p` ranks, placed at `coordinates` where there are any (the torus forms).
std::vector<std::vector<int>> peers_in_one_call(
    std::string_view name, int p, const std::vector<std::vector<int>>& coordinates = {}) {
  std::vector<std::vector<int>> peers(static_cast<std::size_t>(p));
  run_in_process(p, [&](Transport& transport) {
    if (!coordinates.empty()) transport.set_coordinates(coordinates);
    PeerLedger ledger(transport);
    const CollectiveSpec spec{DType::f32, ReduceOp::sum, 64, 0, {}};
    std::vector<std::byte> in(64 * 4), out(64 * 4);
    allreduce().find_algorithm(name)->build(ledger, spec, in, out)->run();
    peers[static_cast<std::size_t>(transport.rank())] = ledger.peers;
  });
  return peers;
}

TEST(AllreduceAnyP, SwingPeers) {
  for (const std::string_view name : {"swing_latency", "swing_bandwidth"}) {
    const std::vector<std::vector<int>> peers = peers_in_one_call(name, 16);
    std::vector<int> expected0 = {1, 15, 3, 11};
    std::vector<int> expected1 = {0, 2, 14, 6};
    if (name == "swing_bandwidth") {  // the allgather retraces the steps backwards
      for (auto* expected : {&expected0, &expected1}) {
        const std::vector<int> forward = *expected;
        expected->insert(expected->end(), forward.rbegin(), forward.rend());
      }
    }
    EXPECT_EQ(peers[0], expected0) << name;
    EXPECT_EQ(peers[1], expected1) << name;
  }
}

// Torus coordinates, dimension 0 fastest (as SimGrid places a torus's
// nodes), of rank (r · stride) mod p: stride 1 is the simulated torus's own
// order, an odd stride places the ranks elsewhere.
std::vector<std::vector<int>> torus_coordinates(const std::vector<int>& sizes, int stride) {
  int p = 1;
  for (const int size : sizes) p *= size;
  std::vector<std::vector<int>> coordinates;
  for (int rank = 0; rank < p; ++rank) {
    int index = rank * stride % p;
    std::vector<int> where;
    for (const int size : sizes) {
      where.push_back(index % size);
      index /= size;
    }
    coordinates.push_back(where);
  }
  return coordinates;
}

std::size_t wrong_on_torus(const AlgorithmInfo& algorithm,
                           const std::vector<std::vector<int>>& coordinates, std::size_t count,
                           DType dtype, ReduceOp op, bool in_place) {
  std::atomic<std::size_t> wrong{0};
  run_in_process(static_cast<int>(coordinates.size()), [&](Transport& transport) {
    transport.set_coordinates(coordinates);
    wrong +=
        testing::run_checked_calls(transport, allreduce(), algorithm, count, dtype, op, in_place);
  });
  return wrong;
}

constexpr std::string_view kTorusForms[] = {"swing_latency_torus", "swing_bandwidth_torus"};

// peers_in_one_call on a torus of `shape`, the ranks in its own order.
std::vector<std::vector<int>> torus_peers(const std::vector<int>& shape, std::string_view name) {
  const std::vector<std::vector<int>> coordinates = torus_coordinates(shape, 1);
  return peers_in_one_call(name, static_cast<int>(coordinates.size()), coordinates);
}

// The torus forms on tori of 1, 2 and 3 dimensions, a dimension of size 1
// among them, every side a power of two or not (folded: even and odd sides,
// one or several of them, a rank that absorbs a neighbour along one side and
// sits out along the next), the ranks in the torus's order and elsewhere
// (stride 7, prime to every p here). Without coordinates
// collective_inproc_test's suite runs them, as every algorithm.
TEST(AllreduceAnyP, TorusFormsOnTori) {
  const std::vector<std::vector<int>> shapes = {{2, 2}, {2, 8},    {4, 4},   {4, 2, 2}, {8, 1, 2},
                                                {4, 3}, {6, 6},    {4, 6},   {3, 5},    {3, 3},
                                                {5},    {2, 3, 3}, {3, 1, 5}};
  for (const std::string_view name : kTorusForms) {
    const AlgorithmInfo& algorithm = *allreduce().find_algorithm(name);
    for (const std::vector<int>& sizes : shapes) {
      for (const int stride : {1, 7}) {
        const std::vector<std::vector<int>> coordinates = torus_coordinates(sizes, stride);
        const std::size_t p = coordinates.size();
        for (const std::size_t count : {std::size_t{1}, p + 1, std::size_t{1001}}) {
          for (const auto& [dtype, op] :
               {std::pair{DType::f32, ReduceOp::sum}, std::pair{DType::bf16, ReduceOp::avg}}) {
            const std::string where =
                fmt::format("{} on {} stride {} count={} {} {}", name, fmt::join(sizes, "x"),
                            stride, count, to_string(dtype), to_string(op));
            EXPECT_EQ(wrong_on_torus(algorithm, coordinates, count, dtype, op, false), 0u) << where;
            EXPECT_EQ(wrong_on_torus(algorithm, coordinates, count, dtype, op, true), 0u)
                << where << " in place";
          }
        }
      }
    }
  }
}

// Two Swings per dimension at once: on a 4x4 torus (rank = x + 4y) rank 0
// at (0, 0) sends, step by step, to its peers along x (part 0) and y (part
// 1) and to their mirrors' (parts 2 and 3): ρ = 1 to ranks 1 and 4, the
// mirrors −1 to ranks 3 (x = −1) and 12 (y = −1); then the other way round;
// then ρ = −1 to 3 and 12 and the mirrors +1 to 1 and 4. The bandwidth form
// retraces them.
TEST(AllreduceAnyP, TorusPeers) {
  constexpr std::size_t kPerStep = 4;
  for (const std::string_view name : kTorusForms) {
    const std::vector<std::vector<int>> peers = torus_peers({4, 4}, name);
    std::vector<int> expected0 = {1, 4, 3, 12, 4, 1, 12, 3, 3, 12, 1, 4, 12, 3, 4, 1};
    // Rank 5 at (1, 1): odd coordinates subtract ρ (their mirrors add it).
    std::vector<int> expected5 = {4, 1, 6, 9, 1, 4, 9, 6, 6, 9, 4, 1, 9, 6, 1, 4};
    if (name == "swing_bandwidth_torus") {
      for (auto* expected : {&expected0, &expected5}) {
        std::vector<int> back;
        for (std::size_t s = expected->size(); s >= kPerStep; s -= kPerStep) {
          back.insert(back.end(), expected->begin() + static_cast<std::ptrdiff_t>(s - kPerStep),
                      expected->begin() + static_cast<std::ptrdiff_t>(s));
        }
        expected->insert(expected->end(), back.begin(), back.end());
      }
    }
    EXPECT_EQ(peers[0], expected0) << name;
    EXPECT_EQ(peers[5], expected5) << name;
  }
}

// A side that is no power of two is folded first: on a 3x4 torus (rank =
// x + 3y) x = 0 sits out into x = 1 and x = 1, 2 become 0, 1 of a 2x4 torus.
// Rank 0 at (0, 0) sends its vector to rank 1 and nothing else; rank 1 runs
// the Swings from (0, 0) of the 2x4 torus — along x to x' = 1 (rank 2),
// along y to y = 1 (rank 4), then along y to y = −1 (rank 10) for both parts,
// with no mirrors (the folded side of 2) — and sends the result back to
// rank 0.
TEST(AllreduceAnyP, TorusFoldPeers) {
  for (const std::string_view name : kTorusForms) {
    const std::vector<std::vector<int>> peers = torus_peers({3, 4}, name);
    std::vector<int> expected1 = {2, 4, 4, 2, 10, 10};
    if (name == "swing_bandwidth_torus") {
      expected1.insert(expected1.end(), {10, 10, 4, 2, 2, 4});
    }
    expected1.push_back(0);
    EXPECT_EQ(peers[0], std::vector<int>{1}) << name;
    EXPECT_EQ(peers[1], expected1) << name;
  }
}

}  // namespace
}  // namespace collbench
