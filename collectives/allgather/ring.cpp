// ring — allgather around a ring: the second phase of ring allreduce
// (phases.h), on its own.
//
// The vector is split into p blocks (sizes differ by at most one element);
// block r is rank r's input. p−1 steps, rank r receiving from r−1 and
// sending to r+1: in step s it forwards block r−s (its own input at s = 0)
// and receives block r−1−s into its place in out, from where it is forwarded
// in the next step. Blocks travel in segments, pipelined as in ring
// allreduce; at p = 2 the one step forwards nothing, so its block travels
// whole (RingRelay).
//
// Cost (p ranks, n bytes): (p−1)α + (p−1)/p·nβ — bandwidth optimal (the
// lower bound's β), latency linear in p.
#include "phases.h"

namespace collbench {
namespace {

// This algorithm's tags: offsets in its slot (CollectiveBase::tag).
enum Tag : int { kUnusedReduceTag, kStepTag };

class RingAllgather final : public detail::AllgatherBase, detail::RingBuffers {
 public:
  RingAllgather(Transport& transport, const CollectiveSpec& spec, std::span<const std::byte> in,
                std::span<std::byte> out)
      : AllgatherBase(transport, spec, in, out),
        own_(block(rank_)),
        relay_(*this, *this, detail::ring_allgather_steps(ranks_, rank_), spec.segment_bytes,
               tag(kUnusedReduceTag), tag(kStepTag)) {}

  void run() override {
    relay_.start();
    // After step 0's sends (from in), so the copy into out does not delay
    // them; nothing is received into or sent from this block of out.
    place_own_block();
    relay_.finish();
  }

 private:
  const std::byte* ring_source(detail::Block part) override {
    return in_ + bytes(part.offset - own_.offset);
  }
  std::byte* ring_arrival(int /*step*/, detail::Block /*incoming*/, detail::Block part) override {
    return out_at(part.offset);
  }
  // An allgather reduces nothing.
  std::byte* ring_sum(int /*step*/, detail::Block /*incoming*/, detail::Block /*part*/) override {
    return nullptr;
  }

  const detail::Block own_;
  detail::RingRelay relay_;
};

CostTerms ring_cost(const Layout& layout, double n) {
  const int p = layout.ranks();
  CostTerms terms;
  detail::add_ring_steps(terms, layout, detail::whole_job(p), p - 1, n / p);
  return terms;
}

}  // namespace

extern const AlgorithmInfo kRingAllgather = {
    "ring",
    "p−1 steps around a ring, each forwarding one block, pipelined in segments; bandwidth-optimal",
    detail::common_unsupported_reason,
    detail::flat_cost<ring_cost>,
    /*reduces_on_every_rank=*/false,  // nothing is reduced
    detail::no_workspace,
    detail::build_as<RingAllgather>,
    ring_cost,
};

}  // namespace collbench
