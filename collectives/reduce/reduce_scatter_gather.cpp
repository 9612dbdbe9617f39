// reduce_scatter_gather — Rabenseifner's reduce for long messages
// (Rabenseifner 2004; Thakur, Rabenseifner & Gropp 2005, §4.2): a
// reduce-scatter leaves each rank one block of the reduction, then a
// binomial gather brings the blocks to the root. Rabenseifner reduces and
// scatters by recursive halving; here the reduce-scatter is the ring phase
// (phases.h), whose β and γ are the same and which needs no fold at any p,
// for p−1 instead of ⌈lg p⌉ messages.
//
//   Phase 1, reduce-scatter, p−1 ring steps, segmented and pipelined: rank r
//     ends with block r reduced over every rank, at its place in the gather
//     buffer (out at the root, a workspace elsewhere).
//   Phase 2, gather, ⌈lg p⌉ rounds up the binomial tree: each rank receives
//     its children's subtree blocks and sends its subtree's to its parent.
// Partial sums rotate through three staging blocks, as in reduce_scatter's
// ring.
//
// Cost (p ranks, n bytes): (p−1 + ⌈lg p⌉)α + 2(p−1)/p·nβ + (p−1)/p·nγ —
// the lower bound's γ, twice its β, instead of binomial's ⌈lg p⌉ of each.
#include "phases.h"

namespace collbench {
namespace {

// This algorithm's tags: offsets in its slot (CollectiveBase::tag).
enum Tag : int { kStepTag, kUnusedForwardTag, kGatherTag };

class ReduceScatterGatherReduce final : public detail::ReduceBase, detail::RingBuffers {
 public:
  ReduceScatterGatherReduce(Transport& transport, const CollectiveSpec& spec,
                            std::span<const std::byte> in, std::span<std::byte> out)
      : ReduceBase(transport, spec, in, out),
        tree_(ranks_, rank_, kRootRank),
        own_(partition(spec.count, ranks_, rank_)),
        relay_(*this, *this, detail::ring_reduce_scatter_steps(ranks_, rank_), spec.segment_bytes,
               tag(kStepTag), tag(kUnusedForwardTag), detail::kRingSumRotation) {
    if (ranks_ == 1) return;
    const std::size_t largest_block = partition(spec.count, ranks_, 0).count;
    for (auto& staging : staging_) staging = allocate_workspace(largest_block);
    gathered_ = is_root() ? out_ : allocate_workspace(spec.count);
  }

  void run() override {
    if (ranks_ == 1) {
      copy_input_to_output();
      finish_average({0, spec_.count});
      return;
    }
    relay_.run();
    // Each rank its own block, all at once, before the gather.
    if (spec_.op == ReduceOp::avg && own_.count > 0) {
      transport_.scale_for_average(spec_.dtype, gathered_ + bytes(own_.offset), own_.count, ranks_);
    }
    detail::binomial_gather(*this, tree_, gathered_, spec_.count, tag(kGatherTag));
  }

 private:
  const std::byte* ring_source(detail::Block part) override { return in_at(part.offset); }
  // The last block arrives in staging too: in place at the root, its place
  // in out is its block of in, still to be read.
  std::byte* ring_arrival(int step, detail::Block incoming, detail::Block part) override {
    return staging_[step % detail::kRingSumRotation] + bytes(part.offset - incoming.offset);
  }
  std::byte* ring_sum(int step, detail::Block incoming, detail::Block part) override {
    const bool last = step + 2 == ranks_;
    return last ? gathered_ + bytes(part.offset) : ring_arrival(step, incoming, part);
  }

  const detail::BinomialTree tree_;
  const detail::Block own_;
  detail::RingRelay relay_;
  std::byte* staging_[detail::kRingSumRotation] = {};
  std::byte* gathered_ = nullptr;  // the whole vector's places: out at the root
};

CostTerms reduce_scatter_gather_cost(const Layout& layout, double n) {
  const int p = layout.ranks();
  CostTerms terms;
  detail::add_ring_steps(terms, layout, detail::whole_job(p), p - 1, n / p);
  detail::add_binomial_gather(terms, layout, n / p);
  terms.reduce_bytes = static_cast<double>(p - 1) / p * n;
  return terms;
}

// Three staging blocks, and the gather buffer off the root.
std::size_t reduce_scatter_gather_workspace(int p, std::size_t n) {
  return p > 1 ? detail::ring_sum_rotation_bytes(p, n) + n : 0;
}

}  // namespace

extern const AlgorithmInfo kReduceScatterGatherReduce = {
    "reduce_scatter_gather",
    "ring reduce-scatter + binomial gather to the root (Rabenseifner); 2(p−1)/p·n per link",
    detail::common_unsupported_reason,
    detail::flat_cost<reduce_scatter_gather_cost>,
    /*reduces_on_every_rank=*/true,  // every rank reduces at once in the ring
    reduce_scatter_gather_workspace,
    detail::build_as<ReduceScatterGatherReduce>,
    reduce_scatter_gather_cost,
};

}  // namespace collbench
