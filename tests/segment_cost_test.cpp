// The costs of the algorithms that travel in segments count the segment
// the harness's --segment sets (Layout::segment_bytes): a chain broadcast
// of n bytes in S = ⌈n/segment⌉ segments is p − 2 + S messages on its
// critical path, and a double binary tree's transfers grow with ⌈n/2 ÷
// segment⌉ too. A cost that ignored the layout's segment would give the
// default's count at every segment.
#include <gtest/gtest.h>

#include "collbench/collectives/collective.h"

namespace collbench {
namespace {

const AlgorithmInfo& algorithm(std::string_view collective, std::string_view name) {
  const CollectiveInfo* info = find_collective(collective);
  EXPECT_NE(info, nullptr) << collective;
  const AlgorithmInfo* found = info->find_algorithm(name);
  EXPECT_NE(found, nullptr) << name;
  EXPECT_NE(found->placed_cost, nullptr) << name;
  return *found;
}

Layout flat_with_segment(int ranks, std::size_t segment_bytes) {
  Layout layout = Layout::flat(ranks);
  layout.segment_bytes = segment_bytes;
  return layout;
}

TEST(SegmentCost, ChainCountsTheSegmentsOfTheLayout) {
  const AlgorithmInfo& chain = algorithm("broadcast", "chain");
  const double n = 4 << 20;
  for (const int p : {2, 3, 5, 8}) {
    for (const std::size_t segment : {std::size_t{64} << 10, std::size_t{1} << 20}) {
      const CostTerms terms = chain.placed_cost(flat_with_segment(p, segment), n);
      const double segments = n / static_cast<double>(segment);
      EXPECT_DOUBLE_EQ(terms.messages, p - 2 + segments) << "p=" << p << " segment=" << segment;
      EXPECT_DOUBLE_EQ(terms.bytes, (p - 2 + segments) * n / segments) << "p=" << p;
    }
    // 0 is the default, as cost() prices it.
    EXPECT_DOUBLE_EQ(chain.placed_cost(flat_with_segment(p, 0), n).messages,
                     chain.cost(p, n).messages);
    EXPECT_DOUBLE_EQ(chain.cost(p, n).messages,
                     p - 2 + n / static_cast<double>(kDefaultSegmentBytes));
  }
}

TEST(SegmentCost, DoubleBinaryTreeGrowsWithItsSegments) {
  const AlgorithmInfo& tree = algorithm("allreduce", "double_binary_tree");
  const double n = 8 << 20;  // 4 MiB per tree: 8 segments by default, 64 of 64 KiB
  for (const int p : {4, 7, 16}) {
    const CostTerms coarse = tree.placed_cost(flat_with_segment(p, 0), n);
    const CostTerms fine = tree.placed_cost(flat_with_segment(p, 64 << 10), n);
    // One transfer per segment in the steady state: 56 more of them.
    EXPECT_GE(fine.messages - coarse.messages, 56) << "p=" << p;
    EXPECT_DOUBLE_EQ(coarse.messages, tree.cost(p, n).messages) << "p=" << p;
  }
}

}  // namespace
}  // namespace collbench
