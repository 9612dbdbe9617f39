// tree — binomial-tree reduce to rank 0, then binomial-tree broadcast (the
// phases of phases.h).
//
//   Phase 1, reduce, ⌈lg p⌉ rounds: in round k (distance 2^k) every rank
//     whose bit k is set sends its partial result to rank − 2^k and leaves;
//     the others receive from rank + 2^k (if it exists) and reduce.
//   Phase 2, broadcast, ⌈lg p⌉ rounds: the same tree backwards; each rank
//     receives the result from its parent and forwards it to its children,
//     farthest child first so the deepest subtree starts earliest.
// Whole vectors travel, unsegmented: on the critical path the vector crosses
// ⌈lg p⌉ links twice and is reduced ⌈lg p⌉ times. Out of place, the first
// child's vector is received straight into out (unwritten until then) and
// reduced there, so a parent of one child touches in and out only.
//
// Cost (p ranks, n bytes): 2⌈lg p⌉α + 2⌈lg p⌉·nβ + ⌈lg p⌉·nγ — logarithmic
// latency, but every link carries the whole vector: for small messages.
#include "phases.h"

namespace collbench {
namespace {

// This algorithm's tags: offsets in its slot (CollectiveBase::tag).
enum Tag : int { kReduceTag, kBroadcastTag };

class TreeAllreduce final : public detail::AllreduceBase {
 public:
  TreeAllreduce(Transport& transport, const CollectiveSpec& spec, std::span<const std::byte> in,
                std::span<std::byte> out)
      : AllreduceBase(transport, spec, in, out), tree_(ranks_, rank_, /*root=*/0) {
    if (!tree_.children.empty()) staging_ = allocate_workspace(spec.count);
  }

  void run() override {
    const std::size_t count = spec_.count;
    const std::byte* result =
        detail::binomial_reduce(*this, tree_, in_, out_, staging_, count, tag(kReduceTag));
    if (tree_.is_root()) {
      if (result != out_) copy_input_to_output();  // one rank: nothing to reduce
      finish_average({0, count});
    }
    detail::binomial_broadcast(*this, tree_, out_, out_, count, tag(kBroadcastTag));
  }

 private:
  // The schedule depends only on (rank, p): computed once.
  const detail::BinomialTree tree_;
  std::byte* staging_ = nullptr;
};

CostTerms tree_cost(const Layout& layout, double n) {
  const detail::RankGroups job = detail::whole_job(layout.ranks());
  CostTerms terms;
  detail::add_binomial_reduce(terms, layout, job, n);
  detail::add_binomial_broadcast(terms, layout, job, n);
  terms.reduce_bytes = ceil_log2(layout.ranks()) * n;
  return terms;
}

std::size_t tree_workspace(int p, std::size_t n) { return p > 1 ? n : 0; }

}  // namespace

extern const AlgorithmInfo kTreeAllreduce = {
    "tree",
    "binomial-tree reduce to rank 0 + binomial broadcast; log-latency, for small messages",
    detail::common_unsupported_reason,
    detail::flat_cost<tree_cost>,
    /*reduces_on_every_rank=*/false,  // at most half the ranks at once, the root alone last
    tree_workspace,
    detail::build_as<TreeAllreduce>,
    tree_cost,
};

}  // namespace collbench
