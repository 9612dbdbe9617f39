// hierarchical — reduce_scatter over two levels for several ranks per node:
// shared memory inside a node, the network only for what must cross it
// (the first half of the hierarchical allreduce). Every node runs K ranks
// of N nodes; local rank l is a rank's index among its node's ranks.
//
//   Staging: the input is copied into a workspace in the order local index
//     major, node minor (detail::StagedBlocks), every block padded to the
//     largest, ⌈count/p⌉: the N blocks of the ranks of local index l become
//     one contiguous part, part l of K equal parts.
//   Phase 1, intra-node reduce-scatter: the ring reduce-scatter over the
//     node's K ranks, in place on the workspace; local rank l ends holding
//     part l reduced over its node.
//   Phase 2, K concurrent inter-node reduce-scatters: the ring
//     reduce-scatter over the N ranks of local index l (one per node), in
//     place on part l; each ends holding its own block reduced over every
//     rank, copied to out. Each NIC carries its K ranks' flows of n/(KN)
//     per step: (N−1)/N·n in all.
// An average is summed and divided at the end.
//
// Cost (N nodes of K ranks, n bytes; s inside a node, net between nodes):
//   (K−1)α_s + (K−1)/K·nβ_s + (N−1)α_net + (N−1)/N·nβ_net
//   + ((K−1)/K + (N−1)/(NK))·nγ, plus the staging copy of n.
// A flat ring placed by slot carries (p−1)/p·n through each NIC (its ring
// crosses each node boundary once per step; N=K=2: 0.75n against 0.5n),
// placed by node K·(p−1)/p·n (every step crosses, K flows per NIC: 1.5n).
// Needs the same K on every node (the harness refuses other placements).
#include <algorithm>
#include <memory>

#include "algorithm_common.h"
#include "collbench/transport/subgroup_transport.h"

namespace collbench {

extern const AlgorithmInfo kRingReduceScatter;

namespace {

class HierarchicalReduceScatter final : public detail::ReduceScatterBase {
 public:
  HierarchicalReduceScatter(Transport& transport, const CollectiveSpec& spec,
                            std::span<const std::byte> in, std::span<std::byte> out)
      : ReduceScatterBase(transport, spec, in, out),
        groups_(transport, "hierarchical"),
        staged_(groups_, spec.count),
        node_(transport, groups_.node.members_with(rank_)),
        across_(transport, groups_.across.members_with(rank_)),
        workspace_(allocate_workspace(staged_.elements())) {
    const CollectiveSpec sum = detail::summing(spec);
    const std::span<std::byte> all{workspace_, bytes(staged_.elements())};
    const std::span<std::byte> part = all.subspan(bytes(staged_.part(node_.rank()).offset),
                                                  bytes(staged_.part(node_.rank()).count));
    const std::span<std::byte> own =
        part.subspan(bytes(across_.rank() * staged_.padded_block), bytes(staged_.padded_block));
    CollectiveSpec whole = sum, within_part = sum;
    whole.count = staged_.elements();
    within_part.count = staged_.part(0).count;
    inside_node_ = kRingReduceScatter.build(node_, whole, all, part);
    across_nodes_ = kRingReduceScatter.build(across_, within_part, part, own);
    own_sum_ = own.data();
  }

  void run() override {
    stage_input();
    inside_node_->run();
    across_nodes_->run();
    const detail::Block mine = block(rank_);
    copy_bytes(out_, own_sum_, bytes(mine.count));
    finish_average({0, mine.count});
  }

 private:
  // The workspace := every rank's block of in, in staged order.
  void stage_input() {
    for (int slot = 0; slot < ranks_; ++slot) {
      const detail::Block from = block(staged_.rank_at(slot));
      copy_bytes(workspace_ + bytes(staged_.block_offset(slot)), in_at(from.offset),
                 bytes(from.count));
    }
  }

  const detail::NodeGroups groups_;
  const detail::StagedBlocks staged_;
  detail::SubgroupTransport node_;
  detail::SubgroupTransport across_;
  std::byte* const workspace_;
  const std::byte* own_sum_ = nullptr;
  std::unique_ptr<Collective> inside_node_, across_nodes_;
};

CostTerms hierarchical_cost(const Layout& layout, double n) {
  const int k = layout.per_node, nodes = layout.nodes;
  const detail::NodeGroups groups(layout);
  CostTerms terms;
  detail::add_ring_steps(terms, layout, groups.node, k - 1, n / k);
  detail::add_ring_steps(terms, layout, groups.across, nodes - 1, n / k / nodes);
  terms.reduce_bytes =
      (static_cast<double>(k - 1) / k + static_cast<double>(nodes - 1) / (nodes * k)) * n;
  return terms;
}

// The staged copy (n, padded by less than one element per rank) and the
// phases' workspaces at their largest, two ranks per group.
std::size_t hierarchical_workspace(int ranks, std::size_t n) {
  return detail::StagedBlocks::workspace_bytes(ranks, n) + kRingReduceScatter.workspace_bytes(2, n);
}

}  // namespace

extern const AlgorithmInfo kHierarchicalReduceScatter = {
    "hierarchical",
    "reduce-scatter in each node, then K concurrent ring reduce-scatters between nodes; the "
    "network carries (N−1)/N·n per NIC",
    detail::common_unsupported_reason,
    detail::flat_cost<hierarchical_cost>,
    /*reduces_on_every_rank=*/true,  // every rank reduces at once in both phases
    hierarchical_workspace,
    detail::build_as<HierarchicalReduceScatter>,
    hierarchical_cost,
    /*needs_equal_ranks_per_node=*/true,
};

}  // namespace collbench
