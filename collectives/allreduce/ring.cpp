// ring — reduce-scatter then allgather around a ring, segmented and pipelined.
//
// The vector is split into p chunks (sizes differ by at most one element, so
// any count works, including count < p). Rank r sends to r+1 and receives
// from r−1.
//   Phase 1, reduce-scatter, p−1 steps: in step s rank r sends chunk r−s and
//     receives chunk r−s−1, which it reduces with its own input into out
//     (out = in op received; step 0 sends straight from in, so in is never
//     copied to out). After p−1 steps rank r holds chunk r+1 fully reduced.
//     Out of place, a chunk is received straight into its place in out, which
//     nothing has written yet in this call, and reduced there: no staging
//     buffer, so the call touches in and out only (2n bytes per rank, the
//     working set the sendrecv and reduce benchmarks of the cost model have)
//     and the reduction writes lines it has just read instead of a third
//     stream. In place, out is the input, so chunks arrive in staging.
//   Phase 2, allgather, p−1 steps: in step t rank r forwards chunk r+1−t and
//     receives chunk r−t, overwriting its copy.
// Each chunk travels in segments of `segment_bytes`: as soon as segment k of
// step s has arrived and been reduced it is sent on as segment k of step s+1,
// so sending, receiving and reducing overlap (gloo's and NCCL's pipelining)
// instead of each step waiting for a whole chunk.
//
// Cost (p ranks, n bytes): 2(p−1)α + 2(p−1)/p·nβ + (p−1)/p·nγ — bandwidth
// optimal, latency linear in p. Segmentation adds messages but, pipelined,
// not to the critical path's β term; the model keeps the textbook form.
#include <fmt/format.h>

#include <algorithm>

#include "algorithm_common.h"

namespace collbench {
namespace {

constexpr std::size_t kDefaultSegmentBytes = 512 * 1024;
// This algorithm's tags: offsets in its slot (CollectiveBase::tag).
enum Tag : int { kReduceScatterTag, kAllgatherTag };

class RingAllreduce final : public detail::AllreduceBase {
 public:
  RingAllreduce(Transport& transport, const CollectiveSpec& spec, std::span<const std::byte> in,
                std::span<std::byte> out)
      : AllreduceBase(transport, spec, in, out), left_(rank_at(-1)), right_(rank_at(1)) {
    const std::size_t segment_bytes =
        spec.segment_bytes > 0 ? spec.segment_bytes : kDefaultSegmentBytes;
    segment_elements_ = std::max<std::size_t>(1, segment_bytes / element_bytes_);
    const std::size_t largest_chunk = detail::partition(spec.count, ranks_, 0).count;
    const std::size_t max_segments = segments_in(largest_chunk);
    if (in_place()) {
      for (auto& staging : staging_) staging = allocate_workspace(largest_chunk);
    }
    for (auto& requests : step_receives_) requests.reserve(max_segments);
    const auto steps = static_cast<std::size_t>(ranks_ - 1);
    allgather_receives_.reserve(steps * max_segments);
    sends_.reserve(2 * steps * max_segments);
    final_sends_.reserve(2 * max_segments);
  }

  void run() override {
    if (ranks_ > 1) {
      // No copy of in to out: the first step sends from in, each reduction
      // writes out = in op received, and the allgather fills the rest.
      reduce_scatter();
      allgather();
    } else {
      copy_input_to_output();
    }
    finish_average({0, spec_.count});
  }

 private:
  std::size_t segments_in(std::size_t elements) const {
    return (elements + segment_elements_ - 1) / segment_elements_;
  }
  detail::Block chunk(int index) const { return detail::partition(spec_.count, ranks_, index); }
  detail::Block segment(detail::Block within, std::size_t k) const {
    const std::size_t begin = k * segment_elements_;
    return {within.offset + begin, std::min(segment_elements_, within.count - begin)};
  }

  // Where segment `part` (segment(incoming, k)) of a reduce-scatter step
  // arrives: its own place in out, or staging in place.
  std::byte* arrival(int step, detail::Block incoming, detail::Block part) {
    return in_place() ? staging_[step % 2] + bytes(part.offset - incoming.offset)
                      : out_at(part.offset);
  }

  void post_step_receives(int step) {
    const detail::Block incoming = chunk(rank_at(-step - 1));
    std::vector<RequestId>& requests = step_receives_[step % 2];
    for (std::size_t k = 0; k < segments_in(incoming.count); ++k) {
      const detail::Block part = segment(incoming, k);
      requests.push_back(
          recv(arrival(step, incoming, part), part.count, left_, tag(kReduceScatterTag)));
    }
  }

  void reduce_scatter() {
    const int steps = ranks_ - 1;
    post_step_receives(0);
    const detail::Block first = chunk(rank_);
    for (std::size_t k = 0; k < segments_in(first.count); ++k) {
      const detail::Block part = segment(first, k);
      sends_.push_back(send(in_at(part.offset), part.count, right_, tag(kReduceScatterTag)));
    }
    for (int step = 0; step < steps; ++step) {
      const bool last = step + 1 == steps;
      if (!last) post_step_receives(step + 1);
      const detail::Block incoming = chunk(rank_at(-step - 1));
      std::vector<RequestId>& requests = step_receives_[step % 2];
      for (std::size_t k = 0; k < requests.size(); ++k) {
        transport_.wait(requests[k]);
        const detail::Block part = segment(incoming, k);
        reduce_ordered(out_at(part.offset), in_at(part.offset), arrival(step, incoming, part),
                       part.count);
        // The reduced segment is what the next step sends; after the last
        // step it is final and starts the allgather.
        const RequestId id = send(out_at(part.offset), part.count, right_,
                                  last ? tag(kAllgatherTag) : tag(kReduceScatterTag));
        (last ? final_sends_ : sends_).push_back(id);
      }
      requests.clear();
    }
    // The allgather overwrites the chunks sent above: they must have left.
    wait_all(sends_);
  }

  void allgather() {
    const int steps = ranks_ - 1;
    for (int step = 0; step < steps; ++step) {
      const detail::Block incoming = chunk(rank_at(-step));
      for (std::size_t k = 0; k < segments_in(incoming.count); ++k) {
        const detail::Block part = segment(incoming, k);
        allgather_receives_.push_back(
            recv(out_at(part.offset), part.count, left_, tag(kAllgatherTag)));
      }
    }
    std::size_t next_receive = 0;
    for (int step = 0; step < steps; ++step) {
      const detail::Block incoming = chunk(rank_at(-step));
      for (std::size_t k = 0; k < segments_in(incoming.count); ++k) {
        transport_.wait(allgather_receives_[next_receive++]);
        if (step + 1 < steps) {
          const detail::Block part = segment(incoming, k);
          sends_.push_back(send(out_at(part.offset), part.count, right_, tag(kAllgatherTag)));
        }
      }
    }
    allgather_receives_.clear();
    wait_all(sends_);
    wait_all(final_sends_);
  }

  const int left_;
  const int right_;
  std::size_t segment_elements_ = 1;
  std::byte* staging_[2] = {};
  std::vector<RequestId> step_receives_[2];
  std::vector<RequestId> allgather_receives_;
  std::vector<RequestId> sends_;
  std::vector<RequestId> final_sends_;
};

CostTerms ring_cost(int p, double n) {
  const double steps = p - 1;
  return {2 * steps, 2 * steps / p * n, steps / p * n};
}

std::size_t ring_workspace(int p, std::size_t n) {
  return 2 * (n / static_cast<std::size_t>(p) + 16);
}

}  // namespace

extern const AlgorithmInfo kRingAllreduce = {
    "ring",
    "reduce-scatter + allgather around a ring, pipelined in segments; bandwidth-optimal",
    detail::common_unsupported_reason,
    ring_cost,
    /*reduces_on_every_rank=*/true,  // every rank reduces at once
    ring_workspace,
    detail::build_as<RingAllreduce>,
};

}  // namespace collbench
