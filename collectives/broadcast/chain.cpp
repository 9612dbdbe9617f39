// chain — pipelined broadcast along a chain, root → 1 → 2 → … → p−1 (Open
// MPI's tuned "pipeline" broadcast): the vector travels in segments, and a
// rank forwards each segment as soon as it has arrived, so every link is
// busy with a different segment at once.
//
//   Every rank but the root posts the receives of all S segments up front
//   (each lands at its own place in out) and forwards segment k to the
//   next rank the moment it has arrived; the root sends all S in order.
// The root sends from its input and, out of place, copies it into out
// after posting its sends.
//
// Cost (p ranks, n bytes, S = ⌈n / segment⌉ segments of --segment, by default 512
// KiB): (p−2+S)·(α + n/S·β) — the last segment leaves the root after S−1
// others and crosses p−1 links: nβ plus the pipeline's fill, (p−2)·n/S·β.
// For long messages at small p; the fill grows with p. Placed on nodes:
// the p−2+S transfers in lock step, each at the pace of its slowest busy
// link, where the busy links out of one node share its NIC.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "algorithm_common.h"

namespace collbench {
namespace {

// This algorithm's tags: offsets in its slot (CollectiveBase::tag).
enum Tag : int { kSegmentTag };

class ChainBroadcast final : public detail::BroadcastBase {
 public:
  ChainBroadcast(Transport& transport, const CollectiveSpec& spec, std::span<const std::byte> in,
                 std::span<std::byte> out)
      : BroadcastBase(transport, spec, in, out),
        segment_elements_(detail::segment_elements(spec.segment_bytes, element_bytes_)),
        segments_(detail::segment_count(spec.count, segment_elements_)),
        receives_from_(is_root() ? -1 : rank_ - 1),
        sends_to_(rank_ + 1 < ranks_ ? rank_ + 1 : -1) {
    receives_.reserve(segments_);
    sends_.reserve(segments_);
  }

  void run() override {
    if (is_root()) {
      for (std::size_t k = 0; k < segments_; ++k) forward(in_, k);
      copy_input_to_output();
    } else {
      for (std::size_t k = 0; k < segments_; ++k) {
        const detail::Block part = segment(k);
        receives_.push_back(
            recv(out_at(part.offset), part.count, receives_from_, tag(kSegmentTag)));
      }
      for (std::size_t k = 0; k < segments_; ++k) {
        transport_.wait(receives_[k]);
        forward(out_, k);
      }
      receives_.clear();
    }
    wait_all(sends_);
  }

 private:
  detail::Block segment(std::size_t k) const {
    const std::size_t offset = k * segment_elements_;
    return {offset, std::min(segment_elements_, spec_.count - offset)};
  }
  // Sends segment k of `data` (a whole vector) to the next rank, if any.
  void forward(const std::byte* data, std::size_t k) {
    if (sends_to_ < 0) return;
    const detail::Block part = segment(k);
    sends_.push_back(send(data + bytes(part.offset), part.count, sends_to_, tag(kSegmentTag)));
  }

  const std::size_t segment_elements_;
  const std::size_t segments_;
  const int receives_from_;  // −1 at the root
  const int sends_to_;       // −1 at the end of the chain
  std::vector<RequestId> receives_;
  std::vector<RequestId> sends_;
};

// Placed: the pipeline in lock step. In transfer t link k (rank k → k+1)
// carries segment t − k when 0 ≤ t − k < S, so the first and last p − 2
// transfers have only some links busy: links i and j are busy at once only
// when |i − j| < S, and with few segments two links leaving one node never
// share its NIC (by node at 2×2 and S = 2, 0→1 is done before 2→3 starts).
// Each transfer is priced at its busy links (add_steps: a node's NIC at the
// bytes of its links crossing it); the transfers with every link busy are
// identical and priced once. Flat: p − 2 + S transfers of α + n/S·β.
CostTerms chain_cost(const Layout& layout, double n) {
  const int p = layout.ranks();
  if (p < 2) return {};
  const auto segments = static_cast<long long>(
      std::max(1.0, std::ceil(n / detail::segment_bytes_in_force(layout.segment_bytes))));
  const double segment = n / static_cast<double>(segments);
  const long long last_link = p - 2;
  CostTerms terms;
  for (long long transfer = 0; transfer < segments + last_link;) {
    const long long first_busy = std::max(0LL, transfer - segments + 1);
    const long long last_busy = std::min(last_link, transfer);
    const bool every_link_busy = first_busy == 0 && last_busy == last_link;
    const long long repeats = every_link_busy ? std::max(1LL, segments - last_link) : 1;
    detail::add_steps(terms, layout, static_cast<double>(repeats), segment,
                      [first_busy, last_busy](int rank) -> std::vector<int> {
                        if (rank >= first_busy && rank <= last_busy) return {rank + 1};
                        return {};
                      });
    transfer += repeats;
  }
  return terms;
}

}  // namespace

extern const AlgorithmInfo kChainBroadcast = {
    "chain",
    "pipelined chain root → 1 → … → p−1 in segments; ≈ nβ plus the pipeline's fill",
    detail::common_unsupported_reason,
    detail::flat_cost<chain_cost>,
    /*reduces_on_every_rank=*/false,  // nothing is reduced
    detail::no_workspace,
    detail::build_as<ChainBroadcast>,
    chain_cost,
};

}  // namespace collbench
