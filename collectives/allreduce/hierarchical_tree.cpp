// hierarchical_tree — a two-level tree for small messages on several ranks
// per node: one message per level where a flat tree pays the network for
// every round.
//
//   Phase 1, intra-node reduce: the binomial reduce over the node's K ranks
//     to its leader (its lowest rank), over shared memory.
//   Phase 2, inter-node allreduce: the binomial-tree allreduce (reduce, then
//     broadcast) over the N leaders, one per node.
//   Phase 3, intra-node broadcast: the binomial broadcast from the leader to
//     its node's ranks.
// The phases are the flat algorithms of reduce, allreduce (tree) and
// broadcast on subgroups of the transport (SubgroupTransport). The ranks
// that are not leaders take phase 2's tag slot without using it, so that
// every rank's later algorithms still take the same slots.
//
// Cost (N nodes of K ranks, n bytes):
//   2⌈lg K⌉(α_s + nβ_s) + 2⌈lg N⌉(α_net + nβ_net) + (⌈lg K⌉ + ⌈lg N⌉)·nγ;
// a flat tree placed by node sends every round over the network:
// 2⌈lg p⌉(α_net + nβ_net).
// Needs the same K on every node (the harness refuses other placements).
#include <memory>
#include <optional>

#include "algorithm_common.h"
#include "collbench/transport/subgroup_transport.h"

namespace collbench {

extern const AlgorithmInfo kBinomialReduce, kTreeAllreduce, kBinomialBroadcast;

namespace {

class HierarchicalTreeAllreduce final : public detail::AllreduceBase {
 public:
  HierarchicalTreeAllreduce(Transport& transport, const CollectiveSpec& spec,
                            std::span<const std::byte> in, std::span<std::byte> out)
      : AllreduceBase(transport, spec, in, out),
        groups_(transport, "hierarchical_tree"),
        node_(transport, groups_.node.members_with(rank_)) {
    const CollectiveSpec sum = detail::summing(spec);
    const bool leader = node_.rank() == kRootRank;
    const std::span<std::byte> none = out.subspan(0, 0);
    reduce_ = kBinomialReduce.build(node_, sum, in, leader ? out : none);
    if (leader) {
      leaders_.emplace(transport, groups_.leaders.members_with(rank_));
      allreduce_ = kTreeAllreduce.build(*leaders_, sum, out, out);
    } else {
      transport.take_tag_slot();
    }
    broadcast_ = kBinomialBroadcast.build(node_, sum, leader ? out : none, out);
  }

  void run() override {
    reduce_->run();
    if (allreduce_) allreduce_->run();
    broadcast_->run();
    finish_average({0, spec_.count});
  }

 private:
  const detail::NodeGroups groups_;
  detail::SubgroupTransport node_;
  std::optional<detail::SubgroupTransport> leaders_;
  std::unique_ptr<Collective> reduce_, allreduce_, broadcast_;
};

CostTerms hierarchical_tree_cost(const Layout& layout, double n) {
  const detail::NodeGroups groups(layout);
  CostTerms terms;
  detail::add_binomial_reduce(terms, layout, groups.node, n);
  detail::add_binomial_reduce(terms, layout, groups.leaders, n);
  detail::add_binomial_broadcast(terms, layout, groups.leaders, n);
  detail::add_binomial_broadcast(terms, layout, groups.node, n);
  terms.reduce_bytes = (ceil_log2(layout.per_node) + ceil_log2(layout.nodes)) * n;
  return terms;
}

// Phases 1 and 2 stage whole vectors (phase 3 sends from out).
std::size_t hierarchical_tree_workspace(int ranks, std::size_t n) {
  return kBinomialReduce.workspace_bytes(ranks, n) + kTreeAllreduce.workspace_bytes(ranks, n);
}

}  // namespace

extern const AlgorithmInfo kHierarchicalTreeAllreduce = {
    "hierarchical_tree",
    "binomial reduce in each node, tree allreduce between the nodes' leaders, binomial broadcast "
    "in each node; log latency on both levels, for small messages",
    detail::common_unsupported_reason,
    detail::flat_cost<hierarchical_tree_cost>,
    /*reduces_on_every_rank=*/false,  // a node's leader reduces while its other ranks wait
    hierarchical_tree_workspace,
    detail::build_as<HierarchicalTreeAllreduce>,
    hierarchical_tree_cost,
    /*needs_equal_ranks_per_node=*/true,
};

}  // namespace collbench
