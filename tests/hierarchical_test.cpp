// The hierarchical algorithms (allreduce, reduce_scatter, allgather) on
// in-process ranks told which node they run on (Transport::set_nodes), for
// node counts and ranks per node, both placements, awkward counts, every
// op, in place and out; the uneven
// placements they refuse; and the placed costs (AlgorithmInfo::placed_cost)
// against the bytes the algorithms really send across nodes and inside them.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <mutex>
#include <stdexcept>
#include <string>
#include <vector>

#include "collbench/collectives/collective.h"
#include "collbench/transport/forwarding_transport.h"
#include "collbench/transport/inproc_transport.h"
#include "collective_case.h"

namespace collbench {
namespace {

const CollectiveInfo& allreduce() { return *find_collective("allreduce"); }
const AlgorithmInfo& allreduce_algorithm(std::string_view name) {
  return *allreduce().find_algorithm(name);
}

std::vector<int> node_ids(const Layout& layout) {
  std::vector<int> ids;
  for (int rank = 0; rank < layout.ranks(); ++rank) ids.push_back(layout.node_of(rank));
  return ids;
}

std::string describe(const Layout& layout) {
  return fmt::format("{} nodes x {} by {}", layout.nodes, layout.per_node,
                     to_string(layout.map_by));
}

std::vector<Layout> layouts() {
  std::vector<Layout> result;
  for (const auto& [nodes, per_node] : std::vector<std::pair<int, int>>{
           {1, 2}, {1, 3}, {2, 1}, {2, 2}, {2, 3}, {3, 2}, {4, 2}, {3, 3}, {2, 4}}) {
    for (MapBy map_by : {MapBy::slot, MapBy::node}) result.push_back({nodes, per_node, map_by});
  }
  return result;
}

// Every hierarchical algorithm, by collective.
const std::vector<std::pair<std::string_view, std::string_view>> kHierarchical = {
    {"allreduce", "hierarchical"},
    {"allreduce", "hierarchical_tree"},
    {"reduce_scatter", "hierarchical"},
    {"allgather", "hierarchical"}};

TEST(Hierarchical, EveryLayoutCountOpAndPlacement) {
  for (const auto& [collective_name, name] : kHierarchical) {
    const CollectiveInfo& collective = *find_collective(collective_name);
    const AlgorithmInfo& algorithm = *collective.find_algorithm(name);
    const std::vector<ReduceOp> ops =
        collective.reduces
            ? std::vector<ReduceOp>(std::begin(kAllReduceOps), std::end(kAllReduceOps))
            : std::vector<ReduceOp>{ReduceOp::sum};
    for (const Layout& layout : layouts()) {
      const int p = layout.ranks();
      for (const std::size_t count : {std::size_t{0}, std::size_t{1}, std::size_t(p - 1),
                                      std::size_t(p + 1), std::size_t{4099}}) {
        for (const ReduceOp op : ops) {
          for (const bool in_place : {false, true}) {
            for (const DType dtype : {DType::f32, DType::bf16}) {
              std::atomic<std::uint64_t> wrong{0};
              run_in_process(p, [&](Transport& transport) {
                transport.set_nodes(node_ids(layout));
                wrong += testing::run_checked_calls(transport, collective, algorithm, count, dtype,
                                                    op, in_place);
              });
              EXPECT_EQ(wrong.load(), 0u)
                  << collective_name << " " << name << " on " << describe(layout) << ", count "
                  << count << " " << to_string(dtype) << " " << to_string(op)
                  << (in_place ? " in place" : "");
            }
          }
        }
      }
    }
  }
}

TEST(Hierarchical, LaterAlgorithmsStillShareTagSlots) {
  // Only a node's leader runs hierarchical_tree's phase 2; the others must
  // still take its tag slot, or a ring built after it would use different
  // tags on different ranks and never match (the bounded wait times out).
  const Layout layout{2, 3, MapBy::slot};
  const std::size_t count = 1000;
  std::atomic<std::uint64_t> wrong{0};
  run_in_process(
      layout.ranks(),
      [&](Transport& transport) {
        transport.set_nodes(node_ids(layout));
        const CollectiveSpec spec{DType::f32, ReduceOp::sum, count, 0, {}};
        std::vector<std::byte> in(count * sizeof(float)), out(count * sizeof(float));
        auto first = allreduce_algorithm("hierarchical_tree").build(transport, spec, in, out);
        wrong += testing::run_checked_calls(transport, allreduce(), allreduce_algorithm("ring"),
                                            count, DType::f32, ReduceOp::sum, false);
        first->run();
      },
      std::chrono::seconds(10));
  EXPECT_EQ(wrong.load(), 0u);
}

TEST(Hierarchical, UnevenNodesAreRefused) {
  for (const auto& [collective_name, name] : kHierarchical) {
    const CollectiveInfo& collective = *find_collective(collective_name);
    std::atomic<int> refused{0};
    run_in_process(3, [&](Transport& transport) {
      transport.set_nodes({0, 0, 1});
      const CollectiveSpec spec{DType::f32, ReduceOp::sum, 16, 0, {}};
      std::vector<std::byte> in(64), out(64);
      const auto span_of = [](std::vector<std::byte>& buffer, Block block) {
        return std::span<std::byte>(buffer).first(block.count * sizeof(float));
      };
      try {
        collective.find_algorithm(name)->build(
            transport, spec, span_of(in, collective.input_block(spec, 3, transport.rank())),
            span_of(out, collective.output_block(spec, 3, transport.rank())));
      } catch (const std::invalid_argument& error) {
        if (std::string(error.what()).find("same number of ranks on every node") !=
            std::string::npos) {
          ++refused;
        }
      }
    });
    EXPECT_EQ(refused.load(), 3) << collective_name << " " << name;
  }
}

TEST(Hierarchical, SetNodesNeedsOneIdPerRank) {
  run_in_process(2, [](Transport& transport) {
    EXPECT_THROW(transport.set_nodes({0}), std::invalid_argument);
  });
}

// Topology coordinates are optional (empty until set), one vector per rank,
// all of one length; a decorator starts with its inner transport's.
TEST(Hierarchical, CoordinatesAreEmptyUntilSetAndCheckedWhenSet) {
  run_in_process(2, [](Transport& transport) {
    EXPECT_TRUE(transport.coordinates_of(1).empty());
    EXPECT_THROW(transport.set_coordinates({{0, 1}}), std::invalid_argument);
    EXPECT_THROW(transport.set_coordinates({{0, 1}, {2}}), std::invalid_argument);
    transport.set_coordinates({{0, 1}, {2, 3}});
    EXPECT_EQ(transport.coordinates_of(1)[1], 3);
    transport.set_nodes({5, 5});
    ForwardingTransport view(transport);
    EXPECT_EQ(view.coordinates_of(0)[1], 1);
    EXPECT_EQ(view.node_of(1), 5);
  });
}

// A transport that counts the bytes each rank sends to each peer.
class CountingTransport final : public ForwardingTransport {
 public:
  CountingTransport(Transport& parent, std::vector<double>& sent_to)
      : ForwardingTransport(parent), sent_to_(sent_to) {}
  RequestId isend(std::span<const std::byte> data, int peer, int tag) override {
    sent_to_[static_cast<std::size_t>(peer)] += static_cast<double>(data.size());
    return ForwardingTransport::isend(data, peer, tag);
  }

 private:
  std::vector<double>& sent_to_;
};

struct Traffic {
  double busiest_nic = 0;   // bytes one node sends to other nodes, at most
  double busiest_rank = 0;  // bytes one rank sends inside its node, at most
};

Traffic measure_traffic(const CollectiveInfo& collective, const AlgorithmInfo& algorithm,
                        const Layout& layout, std::size_t count) {
  const int p = layout.ranks();
  std::vector<std::vector<double>> sent(static_cast<std::size_t>(p),
                                        std::vector<double>(static_cast<std::size_t>(p)));
  run_in_process(p, [&](Transport& inproc) {
    const int rank = inproc.rank();
    std::vector<double>& mine = sent[static_cast<std::size_t>(rank)];
    CountingTransport transport(inproc, mine);
    transport.set_nodes(node_ids(layout));
    const CollectiveSpec spec{DType::f32, ReduceOp::sum, count, 0, {}};
    std::vector<std::byte> in(collective.input_block(spec, p, rank).count * sizeof(float));
    std::vector<std::byte> out(collective.output_block(spec, p, rank).count * sizeof(float));
    auto call = algorithm.build(transport, spec, in, out);
    call->run();
  });
  Traffic traffic;
  std::vector<double> nic(static_cast<std::size_t>(layout.nodes));
  for (int from = 0; from < p; ++from) {
    double inside = 0;
    for (int to = 0; to < p; ++to) {
      const double bytes = sent[static_cast<std::size_t>(from)][static_cast<std::size_t>(to)];
      if (layout.node_of(from) == layout.node_of(to)) {
        inside += bytes;
      } else {
        nic[static_cast<std::size_t>(layout.node_of(from))] += bytes;
      }
    }
    traffic.busiest_rank = std::max(traffic.busiest_rank, inside);
  }
  for (const double bytes : nic) traffic.busiest_nic = std::max(traffic.busiest_nic, bytes);
  return traffic;
}

const AlgorithmInfo& algorithm_of(std::string_view collective, std::string_view algorithm) {
  return *find_collective(collective)->find_algorithm(algorithm);
}

// Every count p divides in these tests' layouts (p = 2, 3, 4, 6, 8, 9).
constexpr std::size_t kEvenCount = 2880;

// The algorithms that fold a rank count that is not a power of two.
const std::vector<std::pair<std::string_view, std::string_view>> kFolding = {
    {"allreduce", "recursive_doubling"},     {"allreduce", "rabenseifner"},
    {"allreduce", "swing_latency"},          {"allreduce", "swing_bandwidth"},
    {"reduce_scatter", "recursive_halving"}, {"allgather", "recursive_doubling"}};

TEST(PlacedCost, NetworkBytesAreWhatTheBusiestNicSends) {
  // Where every step loads the nodes' NICs alike, the placed cost's network
  // bytes (the busiest NIC's, step by step) are the bytes one node really
  // sends to the others; on counts p divides, exactly. The folding
  // algorithms only at powers of two, where nothing folds.
  const std::vector<std::pair<std::string_view, std::string_view>> balanced = {
      {"allreduce", "ring"},          {"allreduce", "ps_sharded"},
      {"allreduce", "hierarchical"},  {"reduce_scatter", "ring"},
      {"reduce_scatter", "pairwise"}, {"reduce_scatter", "hierarchical"},
      {"allgather", "ring"},          {"allgather", "bruck"},
      {"allgather", "hierarchical"},  {"alltoall", "pairwise"},
      {"alltoall", "linear"},         {"alltoall", "bruck"},
      {"alltoallv", "pairwise"}};
  int checked = 0;
  const auto check = [&](std::string_view collective, std::string_view name, const Layout& layout) {
    const AlgorithmInfo& algorithm = algorithm_of(collective, name);
    const CostTerms terms = algorithm.placed_cost(layout, kEvenCount * sizeof(float));
    const Traffic traffic =
        measure_traffic(*find_collective(collective), algorithm, layout, kEvenCount);
    EXPECT_DOUBLE_EQ(terms.bytes, traffic.busiest_nic)
        << collective << " " << name << " on " << describe(layout);
    ++checked;
  };
  for (const auto& [collective, name] : balanced) {
    for (const Layout& layout : layouts()) check(collective, name, layout);
  }
  for (const auto& [collective, name] : kFolding) {
    for (const Layout& layout :
         {Layout{2, 2, MapBy::slot}, Layout{2, 2, MapBy::node}, Layout{4, 2, MapBy::slot},
          Layout{2, 4, MapBy::node}, Layout{4, 1, MapBy::slot}}) {
      check(collective, name, layout);
    }
  }
  EXPECT_EQ(checked, 13 * 18 + 6 * 5);
}

TEST(PlacedCost, NeverBelowWhatTheBusiestNicSends) {
  // Summed step by step, the busiest NIC's bytes can exceed what any one
  // NIC sends in all (the busiest changes from step to step), never fall
  // short of it: a step priced without one of its messages would. Every
  // algorithm with a placed cost, every layout; the folding ones at powers
  // of two (their rounds price a participant at n/p' of the vector, not at
  // the ranks it stands for, as their one-level formula does).
  int checked = 0;
  for (const CollectiveInfo& collective : collectives()) {
    for (const AlgorithmInfo& algorithm : collective.algorithms) {
      if (algorithm.placed_cost == nullptr) continue;
      const bool folds = std::find(kFolding.begin(), kFolding.end(),
                                   std::pair{collective.name, algorithm.name}) != kFolding.end();
      for (const Layout& layout : layouts()) {
        const int p = layout.ranks();
        if (folds && (p & (p - 1)) != 0) continue;
        if (!algorithm.unsupported_reason("inproc", p, kEvenCount).empty()) continue;
        const CostTerms terms = algorithm.placed_cost(layout, kEvenCount * sizeof(float));
        const Traffic traffic = measure_traffic(collective, algorithm, layout, kEvenCount);
        EXPECT_GE(terms.bytes, traffic.busiest_nic * (1 - 1e-12))
            << collective.name << " " << algorithm.name << " on " << describe(layout);
        ++checked;
      }
    }
  }
  EXPECT_GE(checked, 300);
}

TEST(PlacedCost, EveryHandWrittenAlgorithmHasOne) {
  // collbench-fit predicts a point of several ranks per node only from a
  // placed cost: every algorithm but the library's own (by its choice or
  // forced) has one.
  for (const CollectiveInfo& collective : collectives()) {
    for (const AlgorithmInfo& algorithm : collective.algorithms) {
      EXPECT_EQ(algorithm.placed_cost != nullptr, !is_library_algorithm(algorithm))
          << collective.name << " " << algorithm.name;
    }
  }
}

TEST(PlacedCost, IntraBytesOfTheHierarchicalAreWhatEachRankSendsInside) {
  const std::size_t count = 4 * 3 * 64;
  for (const auto& [collective_name, name] : kHierarchical) {
    if (name != "hierarchical") continue;  // the tree's intra rounds load one rank only
    const CollectiveInfo& collective = *find_collective(collective_name);
    const AlgorithmInfo& algorithm = *collective.find_algorithm(name);
    for (const Layout& layout : {Layout{2, 2, MapBy::slot}, Layout{2, 3, MapBy::node},
                                 Layout{3, 4, MapBy::slot}, Layout{1, 4, MapBy::slot}}) {
      EXPECT_DOUBLE_EQ(algorithm.placed_cost(layout, count * sizeof(float)).intra_bytes,
                       measure_traffic(collective, algorithm, layout, count).busiest_rank)
          << collective_name << " " << name << " on " << describe(layout);
    }
  }
}

TEST(PlacedCost, TaperedFatTreeByHand) {
  // 16 nodes, leaf switches of 8 with 4 up-links (2:1). Recursive doubling's
  // steps at distances 1, 2, 4 stay in a leaf (n per NIC); at distance 8
  // all 8 nodes of a leaf send n out of it at once over 4 up-links: 2n.
  const double n = 1 << 20;
  Layout tapered = Layout::flat(16);
  tapered.switch_nodes = 8;
  tapered.switch_uplinks = 4;
  const CostTerms doubling = allreduce_algorithm("recursive_doubling").placed_cost(tapered, n);
  EXPECT_DOUBLE_EQ(doubling.bytes, 5 * n);
  EXPECT_DOUBLE_EQ(doubling.messages, 4);
  EXPECT_DOUBLE_EQ(allreduce_algorithm("recursive_doubling").placed_cost(Layout::flat(16), n).bytes,
                   4 * n);
  // Rabenseifner: only the last halving and the first doubling step (n/16
  // each) cross: n/8 each instead of n/16.
  EXPECT_DOUBLE_EQ(allreduce_algorithm("rabenseifner").placed_cost(tapered, n).bytes,
                   2 * (15.0 / 16 + 1.0 / 16) * n);
  // Ring: one flow leaves each leaf per step, below one up-link's rate.
  EXPECT_DOUBLE_EQ(allreduce_algorithm("ring").placed_cost(tapered, n).bytes,
                   allreduce_algorithm("ring").placed_cost(Layout::flat(16), n).bytes);
  // Up-links as many as nodes: no taper, the flat cost.
  tapered.switch_uplinks = 8;
  EXPECT_DOUBLE_EQ(allreduce_algorithm("recursive_doubling").placed_cost(tapered, n).bytes, 4 * n);
}

TEST(PlacedCost, TwoNodesOfTwoByHand) {
  const double n = 1 << 20;
  const Layout slot{2, 2, MapBy::slot}, node{2, 2, MapBy::node};
  // Flat ring: 6 steps of n/4. By slot one flow per NIC each step, by node two.
  const CostTerms ring_slot = allreduce_algorithm("ring").placed_cost(slot, n);
  EXPECT_DOUBLE_EQ(ring_slot.messages, 6);
  EXPECT_DOUBLE_EQ(ring_slot.bytes, 1.5 * n);
  EXPECT_DOUBLE_EQ(ring_slot.intra_messages, 0);
  EXPECT_DOUBLE_EQ(allreduce_algorithm("ring").placed_cost(node, n).bytes, 3 * n);
  // Hierarchical: one intra step each side of two network steps of n/4 per
  // flow, two flows per NIC.
  for (const Layout& layout : {slot, node}) {
    const CostTerms hierarchical = allreduce_algorithm("hierarchical").placed_cost(layout, n);
    EXPECT_DOUBLE_EQ(hierarchical.messages, 2) << describe(layout);
    EXPECT_DOUBLE_EQ(hierarchical.bytes, n) << describe(layout);
    EXPECT_DOUBLE_EQ(hierarchical.intra_messages, 2) << describe(layout);
    EXPECT_DOUBLE_EQ(hierarchical.intra_bytes, n) << describe(layout);
    EXPECT_DOUBLE_EQ(hierarchical.reduce_bytes, 0.75 * n) << describe(layout);
    const CostTerms tree = allreduce_algorithm("hierarchical_tree").placed_cost(layout, n);
    EXPECT_DOUBLE_EQ(tree.messages, 2) << describe(layout);
    EXPECT_DOUBLE_EQ(tree.bytes, 2 * n) << describe(layout);
    EXPECT_DOUBLE_EQ(tree.intra_messages, 2) << describe(layout);
    EXPECT_DOUBLE_EQ(tree.intra_bytes, 2 * n) << describe(layout);
  }
  // Hierarchical reduce_scatter and allgather: one intra step of n/2 and one
  // network step of n/4 per flow, two flows per NIC; against the flat ring's
  // 3 steps of n/4, by slot one flow per NIC (0.75n), by node two (1.5n).
  for (const std::string_view collective : {"reduce_scatter", "allgather"}) {
    for (const Layout& layout : {slot, node}) {
      const CostTerms hierarchical =
          algorithm_of(collective, "hierarchical").placed_cost(layout, n);
      EXPECT_DOUBLE_EQ(hierarchical.messages, 1) << collective << " " << describe(layout);
      EXPECT_DOUBLE_EQ(hierarchical.bytes, n / 2) << collective << " " << describe(layout);
      EXPECT_DOUBLE_EQ(hierarchical.intra_messages, 1) << collective << " " << describe(layout);
      EXPECT_DOUBLE_EQ(hierarchical.intra_bytes, n / 2) << collective << " " << describe(layout);
      EXPECT_DOUBLE_EQ(hierarchical.reduce_bytes, collective == "allgather" ? 0 : 0.75 * n)
          << collective << " " << describe(layout);
      EXPECT_DOUBLE_EQ(algorithm_of(collective, "ring").placed_cost(layout, n).bytes,
                       (layout.map_by == MapBy::slot ? 0.75 : 1.5) * n)
          << collective << " " << describe(layout);
    }
  }
  // Flat tree: by slot round 0 (1→0, 3→2) stays inside the nodes and round
  // 1 (2→0) crosses; by node (0, 2 on one node) the other way round, and
  // round 0's two messages leave the same node.
  for (const Layout& layout : {slot, node}) {
    const CostTerms tree = allreduce_algorithm("tree").placed_cost(layout, n);
    EXPECT_DOUBLE_EQ(tree.intra_messages, 2) << describe(layout);
    EXPECT_DOUBLE_EQ(tree.messages, 2) << describe(layout);
    EXPECT_DOUBLE_EQ(tree.bytes, (layout.map_by == MapBy::slot ? 2 : 4) * n) << describe(layout);
  }
  const CostTerms tree_four = allreduce_algorithm("tree").placed_cost({4, 2, MapBy::node}, n);
  EXPECT_DOUBLE_EQ(tree_four.messages, 4);  // distances 1 and 2 cross, 4 stays in
  EXPECT_DOUBLE_EQ(tree_four.intra_messages, 2);
  // Central server on rank 0: by slot its node's NIC takes the two remote
  // pushes; the local one goes by shared memory alongside.
  const CostTerms central = allreduce_algorithm("ps_central").placed_cost(slot, n);
  EXPECT_DOUBLE_EQ(central.bytes, 4 * n);
  EXPECT_DOUBLE_EQ(central.messages, 4);
}

TEST(PlacedCost, RootedCollectivesOnTwoNodesOfTwoByHand) {
  // By slot the nodes are {0, 1} and {2, 3}, by node {0, 2} and {1, 3}.
  const double n = 2 << 20;  // 4 segments of 512 KiB
  const Layout slot{2, 2, MapBy::slot}, node{2, 2, MapBy::node};
  const auto expect = [](const CostTerms& terms, double messages, double bytes,
                         double intra_messages, double intra_bytes, std::string_view what) {
    EXPECT_DOUBLE_EQ(terms.messages, messages) << what;
    EXPECT_DOUBLE_EQ(terms.bytes, bytes) << what;
    EXPECT_DOUBLE_EQ(terms.intra_messages, intra_messages) << what;
    EXPECT_DOUBLE_EQ(terms.intra_bytes, intra_bytes) << what;
  };
  // Binomial broadcast: 0→2, then 0→1 and 2→3. By slot the first crosses;
  // by node the second's two messages both leave node {0, 2}.
  const AlgorithmInfo& binomial = algorithm_of("broadcast", "binomial");
  expect(binomial.placed_cost(slot, n), 1, n, 1, n, "binomial broadcast by slot");
  expect(binomial.placed_cost(node, n), 1, 2 * n, 1, n, "binomial broadcast by node");
  // Its reduce runs the rounds the other way: 1→0 and 3→2, then 2→0.
  const AlgorithmInfo& reduce = algorithm_of("reduce", "binomial");
  expect(reduce.placed_cost(slot, n), 1, n, 1, n, "binomial reduce by slot");
  expect(reduce.placed_cost(node, n), 1, 2 * n, 1, n, "binomial reduce by node");
  EXPECT_DOUBLE_EQ(reduce.placed_cost(node, n).reduce_bytes, 2 * n);
  // Van de Geijn: scatter 0→2 (blocks 2 and 3), then 0→1 and 2→3 (one
  // block each); then 3 ring steps of n/4, by slot one flow per NIC
  // (1→2, 3→0), by node two.
  const AlgorithmInfo& van_de_geijn = algorithm_of("broadcast", "scatter_allgather");
  expect(van_de_geijn.placed_cost(slot, n), 1 + 3, n / 2 + 3 * n / 4, 1, n / 4,
         "scatter_allgather by slot");
  expect(van_de_geijn.placed_cost(node, n), 1 + 3, n / 2 + 3 * n / 2, 1, n / 2,
         "scatter_allgather by node");
  // Rabenseifner's reduce mirrors it: 3 ring steps, then the gather 1→0 and
  // 3→2 (one block each), then 2→0 (blocks 2 and 3).
  const AlgorithmInfo& gather = algorithm_of("reduce", "reduce_scatter_gather");
  expect(gather.placed_cost(slot, n), 3 + 1, 3 * n / 4 + n / 2, 1, n / 4,
         "reduce_scatter_gather by slot");
  expect(gather.placed_cost(node, n), 3 + 1, 3 * n / 2 + n / 2, 1, n / 2,
         "reduce_scatter_gather by node");
  // Chain 0→1→2→3 in 4 segments s, 6 transfers in lock step, the busy
  // links {0→1}, {0→1, 1→2}, all three twice, {1→2, 2→3}, {2→3}. By slot
  // only 1→2 crosses (transfers 2 to 5); by node all three do, and 0→1 and
  // 2→3 share node {0, 2}'s NIC only in the two transfers that hold both.
  const double s = n / 4;
  const AlgorithmInfo& chain = algorithm_of("broadcast", "chain");
  expect(chain.placed_cost(slot, n), 4, 4 * s, 2, 2 * s, "chain by slot");
  expect(chain.placed_cost(node, n), 6, 4 * s + 2 * 2 * s, 0, 0, "chain by node");
  // In 2 segments 0→1 is done before 2→3 starts: 4 transfers, none shared
  // (the pipeline measured 89 ms at 1 MiB and 200 Mbit/s, 4 segment times).
  expect(chain.placed_cost(node, n / 2), 4, 4 * (n / 4), 0, 0, "chain by node, 2 segments");
  // Linear alltoall: one step, each rank sending 2 messages off its node.
  expect(algorithm_of("alltoall", "linear").placed_cost(slot, n), 2, n, 0, 0, "linear by slot");
}

TEST(PlacedCost, FlatLayoutIsTheOneLevelCost) {
  // One rank per node: no intra terms, and cost() is placed_cost on it.
  for (const CollectiveInfo& collective : collectives()) {
    for (const AlgorithmInfo& algorithm : collective.algorithms) {
      if (algorithm.placed_cost == nullptr) continue;
      for (int p : {1, 2, 3, 5, 6, 8, 13}) {
        const CostTerms placed = algorithm.placed_cost(Layout::flat(p), 1000);
        const CostTerms flat = algorithm.cost(p, 1000);
        EXPECT_EQ(placed.intra_messages, 0) << algorithm.name << " p=" << p;
        EXPECT_EQ(placed.intra_bytes, 0) << algorithm.name << " p=" << p;
        EXPECT_EQ(placed.messages, flat.messages) << algorithm.name << " p=" << p;
        EXPECT_EQ(placed.bytes, flat.bytes) << algorithm.name << " p=" << p;
      }
    }
  }
}

// One rank per node under one switch is priced without walking every
// message (placed_cost.cpp's shortcut for the p² messages of an all-to-all
// step or of the shift steps). A fat-tree whose one leaf switch holds every
// node takes the walk and must cost the same, at sizes on both sides of
// ps_sharded's one-at-a-time threshold.
TEST(PlacedCost, FlatShortcutEqualsTheWalk) {
  for (const CollectiveInfo& collective : collectives()) {
    for (const AlgorithmInfo& algorithm : collective.algorithms) {
      if (algorithm.placed_cost == nullptr) continue;
      for (int p : {1, 2, 3, 5, 8, 13, 33}) {
        Layout one_leaf = Layout::flat(p);
        one_leaf.switch_nodes = p;
        one_leaf.switch_uplinks = 1;
        for (double n : {1000.0, 64.0 * 1024 * p}) {
          const CostTerms shortcut = algorithm.placed_cost(Layout::flat(p), n);
          const CostTerms walked = algorithm.placed_cost(one_leaf, n);
          const std::string where =
              fmt::format("{} {} p={} n={}", collective.name, algorithm.name, p, n);
          EXPECT_EQ(shortcut.messages, walked.messages) << where;
          EXPECT_EQ(shortcut.bytes, walked.bytes) << where;
          EXPECT_EQ(shortcut.reduce_bytes, walked.reduce_bytes) << where;
        }
      }
    }
  }
}

}  // namespace
}  // namespace collbench
