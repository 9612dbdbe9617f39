// ring — reduce_scatter around a ring: the first phase of ring allreduce.
//
// The vector is split into p blocks (sizes differ by at most one element).
// Rank r sends to r+1 and receives from r−1, p−1 steps: in step s it sends
// its partial sum of block r−1−s (its own input of that block at s = 0) and
// receives the partial sum of block r−2−s, which it reduces with its own
// input of that block. After the last step (s = p−2) the block received is
// block r, reduced over every rank: the output.
// Partial sums alternate between two staging blocks (one is being sent while
// the next arrives); the last step reduces straight into out.
//
// Cost (p ranks, n bytes): (p−1)α + (p−1)/p·nβ + (p−1)/p·nγ — bandwidth
// optimal (the lower bound's β and γ), latency linear in p.
#include <algorithm>

#include "algorithm_common.h"

namespace collbench {
namespace {

// This algorithm's tags: offsets in its slot (CollectiveBase::tag).
enum Tag : int { kStepTag };

class RingReduceScatter final : public detail::ReduceScatterBase {
 public:
  RingReduceScatter(Transport& transport, const CollectiveSpec& spec, std::span<const std::byte> in,
                    std::span<std::byte> out)
      : ReduceScatterBase(transport, spec, in, out), left_(rank_at(-1)), right_(rank_at(1)) {
    if (ranks_ > 1) {
      const std::size_t largest_block = block(0).count;
      for (auto& staging : staging_) staging = allocate_workspace(largest_block);
    }
    requests_.reserve(2);
  }

  void run() override {
    if (ranks_ == 1) {
      copy_input_to_output();
    } else {
      const std::byte* partial = nullptr;  // what this step sends
      for (int step = 0; step + 1 < ranks_; ++step) {
        const detail::Block outgoing = block(rank_at(-1 - step));
        const detail::Block incoming = block(rank_at(-2 - step));
        if (step == 0) partial = in_at(outgoing.offset);
        std::byte* arrival = staging_[step % 2];
        requests_.push_back(recv(arrival, incoming.count, left_, tag(kStepTag)));
        requests_.push_back(send(partial, outgoing.count, right_, tag(kStepTag)));
        wait_all(requests_);
        const bool last = step + 2 == ranks_;
        // The last block received is this rank's: reduced into out.
        std::byte* sum = last ? out_ : arrival;
        reduce_ordered(sum, in_at(incoming.offset), arrival, incoming.count);
        partial = sum;
      }
    }
    finish_average({0, block(rank_).count});
  }

 private:
  const int left_;
  const int right_;
  std::byte* staging_[2] = {};
  std::vector<RequestId> requests_;
};

CostTerms ring_cost(int p, double n) {
  const double steps = p - 1;
  return {steps, steps / p * n, steps / p * n};
}

std::size_t ring_workspace(int p, std::size_t n) {
  return p > 1 ? 2 * (n / static_cast<std::size_t>(p) + 16) : 0;
}

}  // namespace

extern const AlgorithmInfo kRingReduceScatter = {
    "ring",
    "p−1 steps around a ring, each reducing one block; bandwidth-optimal",
    detail::common_unsupported_reason,
    ring_cost,
    /*reduces_on_every_rank=*/true,  // every rank reduces at once
    ring_workspace,
    detail::build_as<RingReduceScatter>,
};

}  // namespace collbench
