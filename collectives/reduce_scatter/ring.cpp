// ring — reduce_scatter around a ring: the first phase of ring allreduce
// (phases.h), on its own.
//
// The vector is split into p blocks (sizes differ by at most one element).
// p−1 steps, rank r receiving from r−1 and sending to r+1: in step s it
// forwards its partial sum of block r−1−s (its own input of that block at
// s = 0) and receives the partial sum of block r−2−s, which it reduces with
// its input of that block. The last block received is block r, reduced over
// every rank: the output.
// Blocks arrive, and partial sums are kept, at their block's place in a
// workspace of the whole vector, each place written once per call, so a
// forward never races a later step's arrival: the relay waits for forwards
// only at the end. The price is n bytes of workspace (allreduce's two
// staging blocks of n/p serve arrivals only, its sums go to out); a ring of
// three staging blocks would do if the relay waited for the forwards of
// step s−2 before posting step s+1. The last block's sum goes into out.
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
               tag(kStepTag), tag(kUnusedForwardTag)) {
    if (ranks_ > 1) partial_sums_ = allocate_workspace(spec.count);
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
  bool is_final(detail::Block part) const {
    return part.offset >= own_.offset && part.offset < own_.offset + own_.count;
  }
  std::byte* partial_sum_at(std::size_t element) { return partial_sums_ + bytes(element); }

  const std::byte* ring_source(detail::Block part) override { return in_at(part.offset); }
  // Every block arrives in the workspace, the last one too: in place, out
  // is this rank's block of in, still to be read.
  std::byte* ring_arrival(int /*step*/, detail::Block /*incoming*/, detail::Block part) override {
    return partial_sum_at(part.offset);
  }
  std::byte* ring_sum(int /*step*/, detail::Block part) override {
    return is_final(part) ? out_at(part.offset - own_.offset) : partial_sum_at(part.offset);
  }

  const detail::Block own_;
  std::byte* partial_sums_ = nullptr;
  detail::RingRelay relay_;
};

CostTerms ring_cost(int p, double n) {
  const double steps = p - 1;
  return {steps, steps / p * n, steps / p * n};
}

std::size_t ring_workspace(int p, std::size_t n) { return p > 1 ? n : 0; }

}  // namespace

extern const AlgorithmInfo kRingReduceScatter = {
    "ring",
    "p−1 steps around a ring, each reducing one block, pipelined in segments; bandwidth-optimal",
    detail::common_unsupported_reason,
    ring_cost,
    /*reduces_on_every_rank=*/true,  // every rank reduces at once
    ring_workspace,
    detail::build_as<RingReduceScatter>,
};

}  // namespace collbench
