// --segment reaches every algorithm that travels in segments: on the
// simulated star, each sends more messages with 64 KiB segments than with
// the default 512 KiB, and the others send the same (the simulator counts
// every message; CollectiveSpec::segment_bytes is what the harness's
// --segment sets). A pipelined algorithm that ignored the spec's segment
// would send the same count at both.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "collbench/collectives/collective.h"
#include "collbench/transport/sim_transport.h"

namespace collbench {
namespace {

constexpr int kRanks = 4;
constexpr std::size_t kBytes = 4 << 20;  // 1 MiB blocks at 4 ranks: 2 default segments each

SimRankGroup& star() {
  static const std::unique_ptr<SimRankGroup> group = [] {
    SimParams params;
    params.ranks = kRanks;
    params.platform = "star:4";
    params.link_latency = 0.5e-6;
    params.link_bandwidth = 1e9;
    params.gamma_rate = 2e9;
    params.payload = false;
    return make_sim_rank_group(params);
  }();
  return *group;
}

// Messages of one call of `algorithm` with `segment_bytes` segments.
std::uint64_t messages_of(const CollectiveInfo& collective, const AlgorithmInfo& algorithm,
                          std::size_t segment_bytes) {
  SimRankGroup& group = star();
  const CollectiveSpec spec{DType::f32, ReduceOp::sum, kBytes / 4, segment_bytes, {}};
  const std::uint64_t before = group.messages();
  group.run([&](Transport& transport) {
    const int rank = transport.rank();
    const UntouchedBuffer in(collective.input_block(spec, kRanks, rank).count * 4);
    const UntouchedBuffer out(collective.output_block(spec, kRanks, rank).count * 4);
    algorithm.build(transport, spec, in.span(), out.span())->run();
  });
  return group.messages() - before;
}

TEST(SimSegment, EveryPipelinedAlgorithmSendsMoreSmallerSegments) {
  // (collective, algorithm) pairs that travel in segments: the ring phases,
  // the chain and the double binary tree.
  const std::vector<std::pair<std::string, std::string>> pipelined = {
      {"allreduce", "ring"},
      {"allreduce", "double_binary_tree"},
      {"reduce_scatter", "ring"},
      {"allgather", "ring"},
      {"broadcast", "chain"},
      {"broadcast", "scatter_allgather"},
      {"reduce", "reduce_scatter_gather"}};
  for (const auto& [collective_name, algorithm_name] : pipelined) {
    const CollectiveInfo* collective = find_collective(collective_name);
    ASSERT_NE(collective, nullptr) << collective_name;
    const AlgorithmInfo* algorithm = collective->find_algorithm(algorithm_name);
    ASSERT_NE(algorithm, nullptr) << algorithm_name;
    const std::uint64_t coarse = messages_of(*collective, *algorithm, 0);
    const std::uint64_t fine = messages_of(*collective, *algorithm, 64 << 10);
    EXPECT_GT(fine, coarse) << collective_name << "/" << algorithm_name << ": " << fine
                            << " messages with 64 KiB segments, " << coarse << " by default";
  }
  // Recursive doubling sends whole vectors: the segment is not its knob.
  const CollectiveInfo* allreduce = find_collective("allreduce");
  const AlgorithmInfo* doubling = allreduce->find_algorithm("recursive_doubling");
  EXPECT_EQ(messages_of(*allreduce, *doubling, 64 << 10), messages_of(*allreduce, *doubling, 0));
}

}  // namespace
}  // namespace collbench
