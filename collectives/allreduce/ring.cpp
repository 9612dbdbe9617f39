// ring — ring reduce-scatter, then ring allgather (MPICH's
// allreduce_intra_reduce_scatter_allgather), one pipelined relay.
//
// The vector is split into p blocks (sizes differ by at most one element, so
// any count works, including count < p); the phases are in phases.h.
//   Phase 1, reduce-scatter, p−1 steps: rank r ends holding block r+1
//     reduced over every rank. Step 0 sends straight from in, and each
//     reduction writes out = in op received, so in is never copied to out.
//     Out of place, a block is received straight into its place in out,
//     which nothing has written yet in this call, and reduced there: no
//     staging buffer, so the call touches in and out only (2n bytes per rank,
//     the working set the sendrecv and reduce benchmarks of the cost model
//     have) and the reduction writes lines it has just read instead of a
//     third stream. In place, out is the input, so blocks arrive in two
//     alternating staging blocks.
//   Phase 2, allgather, p−1 steps from block r+1: each block received lands
//     at its place in out and is forwarded from there.
// Segments pipeline through both phases and across their boundary: a
// segment of the last reduce-scatter step is sent on as the allgather's as
// soon as it is reduced.
//
// Cost (p ranks, n bytes): 2(p−1)α + 2(p−1)/p·nβ + (p−1)/p·nγ — bandwidth
// optimal, latency linear in p: the two phases' costs added.
#include <utility>

#include "phases.h"

namespace collbench {
namespace {

// This algorithm's tags: offsets in its slot (CollectiveBase::tag).
enum Tag : int { kReduceScatterTag, kAllgatherTag };

std::vector<detail::RingStep> allreduce_steps(int ranks, int rank) {
  // Reduce-scatter ends with block r+1 on rank r, where the allgather starts.
  const int held = (rank + 1) % ranks;
  std::vector<detail::RingStep> steps = detail::ring_reduce_scatter_steps(ranks, held);
  for (const detail::RingStep& step : detail::ring_allgather_steps(ranks, held)) {
    steps.push_back(step);
  }
  return steps;
}

class RingAllreduce final : public detail::AllreduceBase, detail::RingBuffers {
 public:
  RingAllreduce(Transport& transport, const CollectiveSpec& spec, std::span<const std::byte> in,
                std::span<std::byte> out)
      : AllreduceBase(transport, spec, in, out),
        relay_(*this, *this, allreduce_steps(ranks_, rank_), spec.segment_bytes,
               tag(kReduceScatterTag), tag(kAllgatherTag)) {
    if (in_place() && ranks_ > 1) {
      const std::size_t largest_block = detail::partition(spec.count, ranks_, 0).count;
      for (auto& staging : staging_) staging = allocate_workspace(largest_block);
    }
  }

  void run() override {
    if (ranks_ > 1) {
      relay_.run();
    } else {
      copy_input_to_output();
    }
    finish_average({0, spec_.count});
  }

 private:
  const std::byte* ring_source(detail::Block part) override { return in_at(part.offset); }
  std::byte* ring_arrival(int step, detail::Block incoming, detail::Block part) override {
    const bool staged = in_place() && step < ranks_ - 1;  // a reduce-scatter step in place
    return staged ? staging_[step % 2] + bytes(part.offset - incoming.offset) : out_at(part.offset);
  }
  std::byte* ring_sum(int /*step*/, detail::Block /*incoming*/, detail::Block part) override {
    return out_at(part.offset);
  }

  std::byte* staging_[2] = {};
  detail::RingRelay relay_;
};

CostTerms ring_cost(const Layout& layout, double n) {
  const int p = layout.ranks();
  const double steps = p - 1;
  CostTerms terms;
  detail::add_ring_steps(terms, layout, detail::whole_job(p), 2 * steps, n / p);
  terms.reduce_bytes = steps / p * n;
  return terms;
}

std::size_t ring_workspace(int p, std::size_t n) {
  return 2 * (n / static_cast<std::size_t>(p) + 16);
}

}  // namespace

extern const AlgorithmInfo kRingAllreduce = {
    "ring",
    "reduce-scatter + allgather around a ring, pipelined in segments; bandwidth-optimal",
    detail::common_unsupported_reason,
    detail::flat_cost<ring_cost>,
    /*reduces_on_every_rank=*/true,  // every rank reduces at once
    ring_workspace,
    detail::build_as<RingAllreduce>,
    ring_cost,
};

}  // namespace collbench
