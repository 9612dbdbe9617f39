// bruck — alltoall in ⌈lg p⌉ rounds for any p (Bruck, Ho, Kipnis, Upfal &
// Weathersby 1997, the index algorithm with radix 2).
//
// A rank's blocks are numbered by distance x = (destination − rank) mod p;
// block x has c_x elements (collective.h's layout), on every rank. In round
// k (bit b = 2^k) every rank sends rank r+b, packed into one message, the
// blocks x that have bit k set, and receives from rank r−b the same x's,
// which take those blocks' places. A block thus travels the bits of its
// distance in increasing order and, after its highest bit, has arrived:
// block x at rank r then came from rank r−x. Where the paper rotates the
// vector before and after, here a block is packed from its place in in while
// no lower bit of x has moved it, unpacked into its place in out after its
// highest bit, and kept in between at offset partition(count, p, x).offset
// of a workspace.
//
// Cost (p ranks, n bytes): ⌈lg p⌉α + (Σ_{x=1}^{p−1} popcount(x))·n/p·β —
// for p = 2^k, lg p·α + lg p/2·nβ: the fewest rounds, paid for by each byte
// travelling lg p/2 times on average. Bytes exact when p divides count
// (otherwise Σ popcount(x)·c_x elements, within one element per block sent).
// Packing and unpacking copy as much locally, which no term prices.
#include <bit>
#include <cstring>

#include "algorithm_common.h"

namespace collbench {
namespace {

// This algorithm's tags: offsets in its slot (CollectiveBase::tag).
enum Tag : int { kRoundTag };

// Blocks sent in round `round`: the distances with that bit set.
bool sent_in_round(int distance, int round) { return ((distance >> round) & 1) != 0; }

class BruckAlltoall final : public detail::AlltoallBase {
 public:
  BruckAlltoall(Transport& transport, const CollectiveSpec& spec, std::span<const std::byte> in,
                std::span<std::byte> out)
      : AlltoallBase(transport, spec, in, out) {
    if (ranks_ > 1) plan_rounds();
    requests_.reserve(2);
  }

  void run() override {
    stage_input();
    place_own_block();
    for (const Round& round : rounds_) {
      std::byte* packed = send_pack_;
      for (const Piece& piece : round.pieces) {
        copy_bytes(packed, piece.from, piece.bytes);
        packed += piece.bytes;
      }
      requests_.push_back(recv(receive_pack_, round.elements, round.from, tag(kRoundTag)));
      requests_.push_back(send(send_pack_, round.elements, round.to, tag(kRoundTag)));
      wait_all(requests_);
      const std::byte* unpacked = receive_pack_;
      for (const Piece& piece : round.pieces) {
        copy_bytes(piece.to, unpacked, piece.bytes);
        unpacked += piece.bytes;
      }
    }
  }

 private:
  // One block of a round: where it is packed from and unpacked to.
  struct Piece {
    const std::byte* from;
    std::byte* to;
    std::size_t bytes;
  };
  struct Round {
    int to;
    int from;
    std::size_t elements;  // of the packed message
    std::vector<Piece> pieces;
  };

  void plan_rounds() {
    std::byte* kept = allocate_workspace(spec_.count);  // blocks between rounds
    const int round_count = ceil_log2(ranks_);
    std::size_t largest = 0;
    for (int k = 0; k < round_count; ++k) {
      Round round{rank_at(1 << k), rank_at(-(1 << k)), 0, {}};
      for (int distance = 1; distance < ranks_; ++distance) {
        if (!sent_in_round(distance, k)) continue;
        const detail::Block place = block(distance);
        // An empty block (count < p) travels as nothing: no piece, so no
        // copy from a buffer that may be null.
        if (place.count == 0) continue;
        const bool unmoved = (distance & ((1 << k) - 1)) == 0;
        const bool arrived = (distance >> (k + 1)) == 0;
        const std::byte* from =
            unmoved ? input_at(send_block(rank_at(distance)).offset) : kept + bytes(place.offset);
        std::byte* to =
            arrived ? out_at(receive_block(rank_at(-distance)).offset) : kept + bytes(place.offset);
        round.pieces.push_back({from, to, bytes(place.count)});
        round.elements += place.count;
      }
      largest = std::max(largest, round.elements);
      rounds_.push_back(std::move(round));
    }
    send_pack_ = allocate_workspace(largest);
    receive_pack_ = allocate_workspace(largest);
  }

  detail::Block block(int distance) const { return partition(spec_.count, ranks_, distance); }

  std::vector<Round> rounds_;
  std::byte* send_pack_ = nullptr;
  std::byte* receive_pack_ = nullptr;
  std::vector<RequestId> requests_;
};

// Round k: every rank r sends rank r + 2^k the blocks whose distance has bit k.
CostTerms bruck_cost(const Layout& layout, double n) {
  const int p = layout.ranks();
  CostTerms terms;
  for (int bit = 1; bit < p; bit <<= 1) {
    int blocks = 0;
    for (int distance = 1; distance < p; ++distance) blocks += (distance & bit) != 0 ? 1 : 0;
    detail::add_steps(terms, layout, 1, blocks * (n / p),
                      [p, bit](int rank) -> std::vector<int> { return {(rank + bit) % p}; });
  }
  return terms;
}

// The kept blocks (n) and two packs of the largest round: at most
// ⌈p/2⌉ blocks of at most n/p + one element (8 bytes) each.
std::size_t bruck_workspace(int p, std::size_t n) {
  if (p <= 1) return 0;
  const auto blocks = static_cast<std::size_t>((p + 1) / 2);
  return n + 2 * blocks * (n / static_cast<std::size_t>(p) + 8);
}

}  // namespace

extern const AlgorithmInfo kBruckAlltoall = {
    "bruck",
    "⌈lg p⌉ rounds for any p, each sending the blocks whose distance has that bit, packed",
    detail::common_unsupported_reason,
    detail::flat_cost<bruck_cost>,
    /*reduces_on_every_rank=*/false,  // nothing is reduced
    bruck_workspace,
    detail::build_as<BruckAlltoall>,
    bruck_cost,
};

}  // namespace collbench
