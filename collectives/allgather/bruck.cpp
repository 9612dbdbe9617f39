// bruck — allgather in ⌈lg p⌉ rounds for any p (Bruck, Ho, Kipnis, Upfal &
// Weathersby 1997), no fold.
//
// Rank r holds the blocks r, r+1, ..., r+k−1 (mod p) after it has gathered
// k of them. In round i (distance d = 2^i) it sends the first
// c = min(d, p − d) of its blocks to rank r − d and receives c blocks from
// rank r + d, the blocks r+d, ..., r+d+c−1: it then holds d + c. After
// ⌈lg p⌉ rounds it holds all p. Every range of blocks goes straight to its
// place in out: where it wraps past the last block it travels as two
// messages (tags apart), so no rotated copy of the vector and no final local
// rotation are needed.
//
// Cost (p ranks, n bytes): ⌈lg p⌉α + (p−1)/p·nβ — the lower bound for any p,
// where recursive doubling pays a fold when p is not a power of two.
#include "algorithm_common.h"

namespace collbench {
namespace {

// This algorithm's tags: offsets in its slot (CollectiveBase::tag).
enum Tag : int { kFirstPieceTag, kWrappedPieceTag };

class BruckAllgather final : public detail::AllgatherBase {
 public:
  BruckAllgather(Transport& transport, const CollectiveSpec& spec, std::span<const std::byte> in,
                 std::span<std::byte> out)
      : AllgatherBase(transport, spec, in, out) {
    requests_.reserve(4);
  }

  void run() override {
    place_own_block();
    for (int distance = 1; distance < ranks_; distance *= 2) {
      const int blocks = std::min(distance, ranks_ - distance);
      const int to = rank_at(-distance);
      const int from = rank_at(distance);
      exchange_range(rank_, blocks, to, /*send=*/true);
      exchange_range(from, blocks, from, /*send=*/false);
      wait_all(requests_);
    }
  }

 private:
  // Sends (or receives) the `blocks` blocks first, first+1, ... (mod p) of
  // out to (from) `peer`: one message, or two where the range wraps.
  void exchange_range(int first, int blocks, int peer, bool sending) {
    const int before_wrap = std::min(blocks, ranks_ - first);
    const detail::Block head = range(first, before_wrap);
    post(head, peer, tag(kFirstPieceTag), sending);
    if (before_wrap < blocks)
      post(range(0, blocks - before_wrap), peer, tag(kWrappedPieceTag), sending);
  }

  void post(detail::Block elements, int peer, int tag, bool sending) {
    requests_.push_back(sending ? send(send_source(elements), elements.count, peer, tag)
                                : recv(out_at(elements.offset), elements.count, peer, tag));
  }

  // The elements of blocks [first, first + blocks), none wrapping.
  detail::Block range(int first, int blocks) const {
    const detail::Block begin = block(first);
    const detail::Block last = block(first + blocks - 1);
    return {begin.offset, last.offset + last.count - begin.offset};
  }

  std::vector<RequestId> requests_;
};

// Round i: every rank r sends rank r − 2^i its first min(2^i, p − 2^i) blocks.
CostTerms bruck_cost(const Layout& layout, double n) {
  const int p = layout.ranks();
  CostTerms terms;
  for (int distance = 1; distance < p; distance <<= 1) {
    detail::add_steps(
        terms, layout, 1, std::min(distance, p - distance) * (n / p),
        [p, distance](int rank) -> std::vector<int> { return {(rank - distance + p) % p}; });
  }
  return terms;
}

}  // namespace

extern const AlgorithmInfo kBruckAllgather = {
    "bruck",
    "⌈lg p⌉ rounds for any p, each sending the blocks gathered so far; no fold",
    detail::common_unsupported_reason,
    detail::flat_cost<bruck_cost>,
    /*reduces_on_every_rank=*/false,  // nothing is reduced
    detail::no_workspace,
    detail::build_as<BruckAllgather>,
    bruck_cost,
};

}  // namespace collbench
