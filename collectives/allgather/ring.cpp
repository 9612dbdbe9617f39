// ring — allgather around a ring: the second phase of ring allreduce.
//
// The vector is split into p blocks (sizes differ by at most one element);
// block r is rank r's input. Rank r sends to r+1 and receives from r−1, p−1
// steps: in step s it sends block r−s (its own input at s = 0) and receives
// block r−1−s into its place in out, which it forwards in the next step.
//
// Cost (p ranks, n bytes): (p−1)α + (p−1)/p·nβ — bandwidth optimal (the
// lower bound's β), latency linear in p.
#include "algorithm_common.h"

namespace collbench {
namespace {

// This algorithm's tags: offsets in its slot (CollectiveBase::tag).
enum Tag : int { kStepTag };

class RingAllgather final : public detail::AllgatherBase {
 public:
  RingAllgather(Transport& transport, const CollectiveSpec& spec, std::span<const std::byte> in,
                std::span<std::byte> out)
      : AllgatherBase(transport, spec, in, out), left_(rank_at(-1)), right_(rank_at(1)) {
    requests_.reserve(2);
  }

  void run() override {
    // Sent from in at step 0, so the copy into out does not delay it.
    const std::byte* outgoing_data = in_;
    for (int step = 0; step + 1 < ranks_; ++step) {
      const detail::Block outgoing = block(rank_at(-step));
      const detail::Block incoming = block(rank_at(-1 - step));
      requests_.push_back(recv(out_at(incoming.offset), incoming.count, left_, tag(kStepTag)));
      requests_.push_back(send(outgoing_data, outgoing.count, right_, tag(kStepTag)));
      if (step == 0) place_own_block();
      wait_all(requests_);
      outgoing_data = out_at(incoming.offset);
    }
    if (ranks_ == 1) place_own_block();
  }

 private:
  const int left_;
  const int right_;
  std::vector<RequestId> requests_;
};

CostTerms ring_cost(int p, double n) {
  const double steps = p - 1;
  return {steps, steps / p * n, 0};
}

}  // namespace

extern const AlgorithmInfo kRingAllgather = {
    "ring",
    "p−1 steps around a ring, each forwarding one block; bandwidth-optimal",
    detail::common_unsupported_reason,
    ring_cost,
    /*reduces_on_every_rank=*/false,  // nothing is reduced
    detail::no_workspace,
    detail::build_as<RingAllgather>,
};

}  // namespace collbench
