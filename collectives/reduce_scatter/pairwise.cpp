// pairwise — reduce_scatter by pairwise exchange (MPICH's
// MPIR_Reduce_scatter_block_intra_pairwise; Thakur, Rabenseifner & Gropp
// 2005), for any p.
//
// p−1 steps: in step d = 1, ..., p−1 rank r sends its input of block r+d to
// rank r+d (that block's owner) and receives rank r−d's input of block r,
// which it reduces into out (mod p, MPICH's order). The first step's sum
// reads this rank's own input of block r, so out starts as no copy of it.
// Each step's block arrives in one of two staging blocks in turn: step d+1's
// receive is posted before step d's reduction, and step d's send is waited
// for after it, so the next block travels while this one is reduced; at
// most one send and one receive of a rank are in flight between steps.
//
// Cost (p ranks, n bytes): (p−1)α + (p−1)/p·nβ + (p−1)/p·nγ — bandwidth
// optimal (the lower bound's β and γ, as ring), latency linear in p, and
// no relay: every block goes straight from its sender to its owner, so a
// slow rank delays only the steps that talk to it.
#include "algorithm_common.h"

namespace collbench {
namespace {

// This algorithm's tags: offsets in its slot (CollectiveBase::tag).
enum Tag : int { kStepTag };

class PairwiseReduceScatter final : public detail::ReduceScatterBase {
 public:
  PairwiseReduceScatter(Transport& transport, const CollectiveSpec& spec,
                        std::span<const std::byte> in, std::span<std::byte> out)
      : ReduceScatterBase(transport, spec, in, out), own_(block(rank_)) {
    if (ranks_ > 1) {
      for (auto& staging : staging_) staging = allocate_workspace(own_.count);
    }
  }

  void run() override {
    if (ranks_ == 1) {
      copy_input_to_output();
      finish_average({0, own_.count});
      return;
    }
    RequestId incoming = post_receive(1);
    for (int distance = 1; distance < ranks_; ++distance) {
      const int to = rank_at(distance);
      const detail::Block theirs = block(to);
      const RequestId outgoing = send(in_at(theirs.offset), theirs.count, to, tag(kStepTag));
      transport_.wait(incoming);
      const std::byte* received = staging_[distance % 2];
      if (distance + 1 < ranks_) incoming = post_receive(distance + 1);
      // In place, out is block r of in: the first sum reads and writes it.
      const std::byte* mine = distance == 1 ? in_at(own_.offset) : out_;
      reduce_pairwise_from(rank_at(-distance), out_, mine, received, own_.count);
      transport_.wait(outgoing);
    }
    finish_average({0, own_.count});
  }

 private:
  RequestId post_receive(int distance) {
    return recv(staging_[distance % 2], own_.count, rank_at(-distance), tag(kStepTag));
  }

  const detail::Block own_;
  std::byte* staging_[2] = {};
};

CostTerms pairwise_cost(const Layout& layout, double n) {
  const int p = layout.ranks();
  CostTerms terms;
  detail::add_shift_steps(terms, layout, n / p);
  terms.reduce_bytes = static_cast<double>(p - 1) / p * n;
  return terms;
}

std::size_t pairwise_workspace(int p, std::size_t n) {
  return p > 1 ? 2 * (n / static_cast<std::size_t>(p) + 16) : 0;
}

}  // namespace

extern const AlgorithmInfo kPairwiseReduceScatter = {
    "pairwise",
    "p−1 steps, each sending one block straight to its owner, who reduces it; bandwidth-optimal",
    detail::common_unsupported_reason,
    detail::flat_cost<pairwise_cost>,
    /*reduces_on_every_rank=*/true,  // every rank reduces at once
    pairwise_workspace,
    detail::build_as<PairwiseReduceScatter>,
    pairwise_cost,
};

}  // namespace collbench
