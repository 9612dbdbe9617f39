// ring — reduce_scatter around a ring: the first phase of ring allreduce
// (phases.h), on its own.
//
// The vector is split into p blocks (sizes differ by at most one element).
// p−1 steps, rank r receiving from r−1 and sending to r+1: in step s it
// forwards its partial sum of block r−1−s (its own input of that block at
// s = 0) and receives the partial sum of block r−2−s, which it reduces with
// its input of that block. The last block received is block r, reduced over
// every rank: the output.
// Each step's block arrives, and is reduced, in one of three staging blocks
// in turn, from where it is forwarded; the last block's sum goes into out.
// Three, not two: with one step's receives posted ahead, step s+1 arrives
// in step s−2's block, whose forwards left a step earlier (the relay waits
// for them); with two it would wait for the forwards just sent.
// Blocks travel in segments, pipelined as in ring allreduce.
//
// Cost (p ranks, n bytes): (p−1)α + (p−1)/p·nβ + (p−1)/p·nγ — bandwidth
// optimal (the lower bound's β and γ), latency linear in p.
#include "phases.h"

namespace collbench {
namespace {

// This algorithm's tags: offsets in its slot (CollectiveBase::tag).
enum Tag : int { kStepTag, kUnusedForwardTag };

class RingReduceScatter final : public detail::ReduceScatterBase, detail::RingBuffers {
 public:
  RingReduceScatter(Transport& transport, const CollectiveSpec& spec, std::span<const std::byte> in,
                    std::span<std::byte> out)
      : ReduceScatterBase(transport, spec, in, out),
        own_(block(rank_)),
        relay_(*this, *this, detail::ring_reduce_scatter_steps(ranks_, rank_), spec.segment_bytes,
               tag(kStepTag), tag(kUnusedForwardTag), detail::kRingSumRotation) {
    if (ranks_ > 1) {
      const std::size_t largest_block = block(0).count;
      for (auto& staging : staging_) staging = allocate_workspace(largest_block);
    }
  }

  void run() override {
    if (ranks_ > 1) {
      relay_.run();
    } else {
      copy_input_to_output();
    }
    finish_average({0, own_.count});
  }

 private:
  const std::byte* ring_source(detail::Block part) override { return in_at(part.offset); }
  // The last block arrives in staging too: in place, out is this rank's
  // block of in, still to be read.
  std::byte* ring_arrival(int step, detail::Block incoming, detail::Block part) override {
    return staging_[step % detail::kRingSumRotation] + bytes(part.offset - incoming.offset);
  }
  std::byte* ring_sum(int step, detail::Block incoming, detail::Block part) override {
    const bool last = step + 2 == ranks_;
    return last ? out_at(part.offset - own_.offset) : ring_arrival(step, incoming, part);
  }

  const detail::Block own_;
  std::byte* staging_[detail::kRingSumRotation] = {};
  detail::RingRelay relay_;
};

CostTerms ring_cost(const Layout& layout, double n) {
  const int p = layout.ranks();
  const double steps = p - 1;
  CostTerms terms;
  detail::add_ring_steps(terms, layout, detail::whole_job(p), steps, n / p);
  terms.reduce_bytes = steps / p * n;
  return terms;
}

std::size_t ring_workspace(int p, std::size_t n) { return detail::ring_sum_rotation_bytes(p, n); }

}  // namespace

extern const AlgorithmInfo kRingReduceScatter = {
    "ring",
    "p−1 steps around a ring, each reducing one block, pipelined in segments; bandwidth-optimal",
    detail::common_unsupported_reason,
    detail::flat_cost<ring_cost>,
    /*reduces_on_every_rank=*/true,  // every rank reduces at once
    ring_workspace,
    detail::build_as<RingReduceScatter>,
    ring_cost,
};

}  // namespace collbench
