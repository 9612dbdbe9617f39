// hierarchical — the two-level allreduce of NCCL and Horovod for several
// ranks per node: shared memory inside a node, the network only for what
// must cross it. Every node runs K ranks; local rank l is a rank's index
// among its node's ranks.
//
//   Phase 1, intra-node reduce-scatter: the ring reduce-scatter over the
//     node's K ranks; local rank l ends holding block l of a K-way split of
//     the vector, reduced over its node.
//   Phase 2, K concurrent inter-node allreduces: the ring allreduce over the
//     N ranks of local index l (one per node), on block l. Each NIC carries
//     its K ranks' flows of n/(KN) per step: n/N, as one flat ring with one
//     rank per node would.
//   Phase 3, intra-node allgather: the ring allgather over the node's ranks.
// The phases are the flat ring algorithms of reduce_scatter, allreduce and
// allgather, built on subgroups of the transport (SubgroupTransport), in
// place in out after phase 1. An average is summed and divided at the end.
//
// Cost (N nodes of K ranks, n bytes; s inside a node, net between nodes):
//   2(K−1)α_s + 2(K−1)/K·nβ_s + 2(N−1)α_net + 2(N−1)/N·nβ_net
//   + ((K−1)/K + (N−1)/(NK))·nγ.
// The network carries 2(N−1)/N·n per NIC, against 2(p−1)/p·n for a flat ring
// placed by slot (its ring crosses each node boundary once: N=K=2 gives n
// against 1.5n) and 2(p−1)/N·n placed by node (every step crosses: 3n).
// Needs the same K on every node (the harness refuses other placements).
#include <memory>
#include <vector>

#include "algorithm_common.h"
#include "collbench/transport/subgroup_transport.h"

namespace collbench {

extern const AlgorithmInfo kRingReduceScatter, kRingAllreduce, kRingAllgather;

namespace {

class HierarchicalAllreduce final : public detail::AllreduceBase {
 public:
  HierarchicalAllreduce(Transport& transport, const CollectiveSpec& spec,
                        std::span<const std::byte> in, std::span<std::byte> out)
      : AllreduceBase(transport, spec, in, out),
        groups_(transport, "hierarchical"),
        node_(transport, groups_.node.members_with(rank_)),
        across_(transport, groups_.across.members_with(rank_)) {
    const CollectiveSpec sum = detail::summing(spec);
    const detail::Block own = detail::partition(spec.count, node_.size(), node_.rank());
    const std::span<std::byte> own_out = out.subspan(bytes(own.offset), bytes(own.count));
    CollectiveSpec block_spec = sum;
    block_spec.count = own.count;
    reduce_scatter_ = kRingReduceScatter.build(node_, sum, in, own_out);
    allreduce_ = kRingAllreduce.build(across_, block_spec, own_out, own_out);
    allgather_ = kRingAllgather.build(node_, sum, own_out, out);
  }

  void run() override {
    reduce_scatter_->run();
    allreduce_->run();
    allgather_->run();
    finish_average({0, spec_.count});
  }

 private:
  const detail::NodeGroups groups_;
  detail::SubgroupTransport node_;
  detail::SubgroupTransport across_;
  std::unique_ptr<Collective> reduce_scatter_, allreduce_, allgather_;
};

CostTerms hierarchical_cost(const Layout& layout, double n) {
  const int k = layout.per_node, nodes = layout.nodes;
  const detail::NodeGroups groups(layout);
  CostTerms terms;
  detail::add_ring_steps(terms, layout, groups.node, k - 1, n / k);
  detail::add_ring_steps(terms, layout, groups.across, 2 * (nodes - 1), n / k / nodes);
  detail::add_ring_steps(terms, layout, groups.node, k - 1, n / k);
  terms.reduce_bytes =
      (static_cast<double>(k - 1) / k + static_cast<double>(nodes - 1) / (nodes * k)) * n;
  return terms;
}

// The phases' workspaces at their largest, two ranks per group: blocks
// shrink as K and N grow.
std::size_t hierarchical_workspace(int /*ranks*/, std::size_t n) {
  return kRingReduceScatter.workspace_bytes(2, n) + kRingAllreduce.workspace_bytes(2, n);
}

}  // namespace

extern const AlgorithmInfo kHierarchicalAllreduce = {
    "hierarchical",
    "reduce-scatter in each node, K concurrent ring allreduces between nodes, allgather in each "
    "node (NCCL/Horovod); the network carries n, not 2(p−1)/p·n",
    detail::common_unsupported_reason,
    detail::flat_cost<hierarchical_cost>,
    /*reduces_on_every_rank=*/true,  // every rank reduces at once in every phase
    hierarchical_workspace,
    detail::build_as<HierarchicalAllreduce>,
    hierarchical_cost,
    /*needs_equal_ranks_per_node=*/true,
};

}  // namespace collbench
