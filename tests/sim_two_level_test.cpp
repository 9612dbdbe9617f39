// The placed cost formulas against the code on a two-level platform: a star
// of nodes of kPerNode ranks each, every rank behind an intra-node link of
// its own (--ppn), intra-node α and β far from the network's. Every
// hierarchical algorithm (needs_equal_ranks_per_node) must take its
// placed_cost() on that layout, priced at the platform's two levels (the
// end-to-end α and β a ping-pong inside a node and between nodes measures),
// within 1% (or at most 1% above it where a ring pipelines its reductions). A platform of its own,
// so a binary of its own (one per process).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <iostream>
#include <string>
#include <vector>

#include "collbench/collectives/collective.h"
#include "collbench/transport/sim_transport.h"

namespace collbench {
namespace {

constexpr int kPerNode = 2;
constexpr int kLargestNodes = 8;
constexpr double kGammaRate = 2e9;
constexpr std::size_t kSegment = 512 << 10;

SimRankGroup& group(int nodes) {
  static std::vector<std::unique_ptr<SimRankGroup>> groups(kLargestNodes + 1);
  auto& slot = groups[static_cast<std::size_t>(nodes)];
  if (!slot) {
    SimParams params;
    params.platform = "star:" + std::to_string(kLargestNodes);
    params.ppn = kPerNode;
    params.ranks = nodes * kPerNode;  // the first nodes, whole (slots are node-major)
    params.link_latency = 0.5e-6;
    params.link_bandwidth = 1e9;
    params.intra_latency = 0.1e-6;
    params.intra_bandwidth = 20e9;
    params.gamma_rate = kGammaRate;
    params.payload = false;
    params.allow_unused_slots = true;
    slot = make_sim_rank_group(params);
  }
  return *slot;
}

double simulated_call(const CollectiveInfo& collective, const AlgorithmInfo& algorithm, int nodes,
                      std::size_t bytes) {
  SimRankGroup& ranks_group = group(nodes);
  const int ranks = ranks_group.size();
  const CollectiveSpec spec{DType::f32, ReduceOp::sum, bytes / 4, 0, {}};
  std::vector<double> starts(static_cast<std::size_t>(ranks)), ends(starts.size());
  ranks_group.run([&](Transport& transport) {
    const int rank = transport.rank();
    const UntouchedBuffer in(collective.input_block(spec, ranks, rank).count * 4);
    const UntouchedBuffer out(collective.output_block(spec, ranks, rank).count * 4);
    auto call = algorithm.build(transport, spec, in.span(), out.span());
    transport.barrier();
    starts[static_cast<std::size_t>(rank)] = ranks_group.now(transport);
    call->run();
    ends[static_cast<std::size_t>(rank)] = ranks_group.now(transport);
  });
  return *std::max_element(ends.begin(), ends.end()) - starts[0];
}

TEST(SimTwoLevel, HierarchicalAlgorithmsTakeTheirPlacedCost) {
  std::string disagreements;
  int checked = 0;
  for (const int nodes : {2, 3, 4, 8}) {
    const EndToEndLinks links = group(nodes).end_to_end();
    ASSERT_GT(links.intra_beta, 0);
    const TwoLevelLinks two_level{links.intra_alpha, links.intra_beta, links.alpha, links.beta};
    for (const std::size_t bytes :
         {std::size_t{8}, std::size_t{64} << 10, std::size_t{1} << 20, std::size_t{16} << 20}) {
      for (const CollectiveInfo& collective : collectives()) {
        for (const AlgorithmInfo& algorithm : collective.algorithms) {
          if (!algorithm.needs_equal_ranks_per_node || algorithm.placed_cost == nullptr) continue;
          const int ranks = nodes * kPerNode;
          if (!algorithm.unsupported_reason("sim", ranks, bytes / 4).empty()) continue;
          const double simulated = simulated_call(collective, algorithm, nodes, bytes);
          const double model = algorithm.placed_cost({nodes, kPerNode, MapBy::slot}, bytes)
                                   .seconds(two_level, 1 / kGammaRate);
          // As on the flat star (sim_truth_test): where a reducing ring's
          // block spans several 512 KiB segments, its reductions overlap the
          // next segments' transfers, which the formula adds: a bound there.
          const bool bound =
              collective.reduces && bytes / static_cast<std::size_t>(nodes) > kSegment;
          ++checked;
          if (bound ? simulated > 1.01 * model : std::abs(simulated - model) > 0.01 * model) {
            disagreements += "\n  " + std::string(collective.name) + "/" +
                             std::string(algorithm.name) + " nodes=" + std::to_string(nodes) +
                             " n=" + std::to_string(bytes) + ": simulated " +
                             std::to_string(simulated * 1e6) + " us, placed cost " +
                             std::to_string(model * 1e6) + " us (" +
                             std::to_string((simulated / model - 1) * 100) + "%)";
          }
        }
      }
    }
  }
  std::cout << checked << " cases checked\n";
  EXPECT_GE(checked, 4 * 4 * 4);
  EXPECT_TRUE(disagreements.empty()) << "cases that disagree:" << disagreements;
}

}  // namespace
}  // namespace collbench
