// tree — binomial-tree reduce to rank 0, then binomial-tree broadcast.
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
#include "algorithm_common.h"

namespace collbench {
namespace {

// This algorithm's tags: offsets in its slot (CollectiveBase::tag).
enum Tag : int { kReduceTag, kBroadcastTag };

class TreeAllreduce final : public detail::AllreduceBase {
 public:
  TreeAllreduce(Transport& transport, const CollectiveSpec& spec, std::span<const std::byte> in,
                std::span<std::byte> out)
      : AllreduceBase(transport, spec, in, out) {
    // The schedule depends only on (rank, p): compute it once.
    for (int distance = 1; distance < ranks_; distance <<= 1) {
      if (rank_ & distance) {
        parent_ = rank_ - distance;
        break;
      }
      if (rank_ + distance < ranks_) children_.push_back(rank_ + distance);
    }
    if (!children_.empty()) staging_ = allocate_workspace(spec.count);
  }

  void run() override {
    const std::size_t count = spec_.count;
    // Reduce: nearest child first, as their subtrees finish in that order.
    // No copy of in to out: the first reduction writes out = in op the
    // child's, and a leaf sends straight from in.
    const std::byte* mine = in_;
    for (int child : children_) {
      std::byte* received = mine == out_ ? staging_ : out_;
      transport_.wait(recv(received, count, child, tag(kReduceTag)));
      reduce_ordered(out_, mine, received, count);
      mine = out_;
    }
    if (parent_ >= 0) {
      // Sent before out is written: out may be in (in place).
      transport_.wait(send(mine, count, parent_, tag(kReduceTag)));
      transport_.wait(recv(out_, count, parent_, tag(kBroadcastTag)));
    } else {
      if (mine != out_) copy_input_to_output();  // one rank: nothing to reduce
      finish_average({0, count});
    }
    // One child at a time: concurrent sends would share this rank's link and
    // delay the farthest subtree, costing more than the model's nβ per round.
    for (auto child = children_.rbegin(); child != children_.rend(); ++child) {
      transport_.wait(send(out_, count, *child, tag(kBroadcastTag)));
    }
  }

 private:
  int parent_ = -1;
  std::vector<int> children_;  // nearest first
  std::byte* staging_ = nullptr;
};

CostTerms tree_cost(int p, double n) {
  const double rounds = ceil_log2(p);
  return {2 * rounds, 2 * rounds * n, rounds * n};
}

std::size_t tree_workspace(int p, std::size_t n) { return p > 1 ? n : 0; }

}  // namespace

extern const AlgorithmInfo kTreeAllreduce = {
    "tree",
    "binomial-tree reduce to rank 0 + binomial broadcast; log-latency, for small messages",
    detail::common_unsupported_reason,
    tree_cost,
    /*reduces_on_every_rank=*/false,  // at most half the ranks at once, the root alone last
    tree_workspace,
    detail::build_as<TreeAllreduce>,
};

}  // namespace collbench
