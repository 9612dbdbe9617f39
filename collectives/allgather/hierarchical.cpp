// hierarchical — allgather over two levels for several ranks per node:
// the network only for what must cross it, shared memory for the rest (the
// second half of the hierarchical allreduce). Every node runs K ranks of N
// nodes; local rank l is a rank's index among its node's ranks.
//
//   Phase 1, K concurrent inter-node allgathers: the ring allgather over
//     the N ranks of local index l (one per node), of their blocks, each
//     padded to the largest, ⌈count/p⌉; they land as part l of a workspace
//     laid out local index major, node minor (detail::StagedBlocks). Each
//     NIC carries its K ranks' flows of n/(KN) per step: (N−1)/N·n in all.
//   Phase 2, intra-node allgather: the ring allgather over the node's K
//     ranks, of their parts, in place on the workspace.
//   Unstaging: every block is copied from the workspace to its place in out.
//
// Cost (N nodes of K ranks, n bytes; s inside a node, net between nodes):
//   (N−1)α_net + (N−1)/N·nβ_net + (K−1)α_s + (K−1)/K·nβ_s, plus the staging
//   copies of n.
// A flat ring placed by slot carries (p−1)/p·n through each NIC (N=K=2:
// 0.75n against 0.5n), placed by node K·(p−1)/p·n (1.5n).
// Needs the same K on every node (the harness refuses other placements).
#include <algorithm>
#include <memory>

#include "algorithm_common.h"
#include "collbench/transport/subgroup_transport.h"

namespace collbench {

extern const AlgorithmInfo kRingAllgather;

namespace {

class HierarchicalAllgather final : public detail::AllgatherBase {
 public:
  HierarchicalAllgather(Transport& transport, const CollectiveSpec& spec,
                        std::span<const std::byte> in, std::span<std::byte> out)
      : AllgatherBase(transport, spec, in, out),
        groups_(transport, "hierarchical"),
        staged_(groups_, spec.count),
        node_(transport, groups_.node.members_with(rank_)),
        across_(transport, groups_.across.members_with(rank_)),
        workspace_(allocate_workspace(staged_.elements())),
        own_(allocate_workspace(staged_.padded_block)) {
    const std::span<std::byte> all{workspace_, bytes(staged_.elements())};
    const std::span<std::byte> part = all.subspan(bytes(staged_.part(node_.rank()).offset),
                                                  bytes(staged_.part(node_.rank()).count));
    CollectiveSpec whole = spec, within_part = spec;
    whole.count = staged_.elements();
    within_part.count = staged_.part(0).count;
    across_nodes_ =
        kRingAllgather.build(across_, within_part, {own_, bytes(staged_.padded_block)}, part);
    inside_node_ = kRingAllgather.build(node_, whole, part, all);
  }

  void run() override {
    // Out of in before anything lands in out (in place, in lies in out).
    const Block mine = block(rank_);
    copy_bytes(own_, in_, bytes(mine.count));
    across_nodes_->run();
    inside_node_->run();
    unstage_output();
  }

 private:
  // out := every rank's block, from its place in the workspace.
  void unstage_output() {
    for (int slot = 0; slot < ranks_; ++slot) {
      const detail::Block to = block(staged_.rank_at(slot));
      copy_bytes(out_at(to.offset), workspace_ + bytes(staged_.block_offset(slot)),
                 bytes(to.count));
    }
  }

  const detail::NodeGroups groups_;
  const detail::StagedBlocks staged_;
  detail::SubgroupTransport node_;
  detail::SubgroupTransport across_;
  std::byte* const workspace_;
  std::byte* const own_;
  std::unique_ptr<Collective> across_nodes_, inside_node_;
};

CostTerms hierarchical_cost(const Layout& layout, double n) {
  const int k = layout.per_node, nodes = layout.nodes;
  const detail::NodeGroups groups(layout);
  CostTerms terms;
  detail::add_ring_steps(terms, layout, groups.across, nodes - 1, n / k / nodes);
  detail::add_ring_steps(terms, layout, groups.node, k - 1, n / k);
  return terms;
}

// The staged copy (n, padded by less than one element per rank) and this
// rank's padded block.
std::size_t hierarchical_workspace(int ranks, std::size_t n) {
  return detail::StagedBlocks::workspace_bytes(ranks, n) +
         detail::StagedBlocks::workspace_bytes(ranks, n / static_cast<std::size_t>(ranks));
}

}  // namespace

extern const AlgorithmInfo kHierarchicalAllgather = {
    "hierarchical",
    "K concurrent ring allgathers between nodes, then an allgather in each node; the network "
    "carries (N−1)/N·n per NIC",
    detail::common_unsupported_reason,
    detail::flat_cost<hierarchical_cost>,
    /*reduces_on_every_rank=*/false,  // nothing is reduced
    hierarchical_workspace,
    detail::build_as<HierarchicalAllgather>,
    hierarchical_cost,
    /*needs_equal_ranks_per_node=*/true,
};

}  // namespace collbench
