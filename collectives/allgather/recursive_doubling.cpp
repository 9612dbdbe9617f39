// recursive_doubling — allgather by lg p rounds of doubling (Thakur,
// Rabenseifner & Gropp 2005), for any p.
//
//   Fold (only when p is not a power of two): with p' = 2^⌊lg p⌋ and
//     rem = p − p', each even rank below 2·rem sends its block to the odd
//     rank above it, which from then on stands for both ranks' blocks, and
//     waits for the whole vector.
//   Doubling, lg p' rounds: in round k each participant swaps everything it
//     has gathered so far (the blocks of 2^k participants, one contiguous
//     range) with the participant whose number differs in bit k, so what it
//     holds doubles.
//   Unfold: each odd rank below 2·rem sends the absorbed rank the vector.
// Every block is received straight into its place in out.
//
// Cost (p = 2^k): lg p·α + (p−1)/p·nβ — the lower bound: the fewest rounds
// and the fewest bytes. Otherwise the fold and unfold add 2α + (n/p + n)β,
// and round k swaps the blocks of 2^k participants, the largest range of
// which (Fold::largest_share) is more than 2^k/p' of the vector: at p = 3,
// 2n/3 instead of n/2 (the simulated star showed it; 3α + 2nβ in all).
#include "phases.h"

namespace collbench {
namespace {

// This algorithm's tags: offsets in its slot (CollectiveBase::tag).
enum Tag : int { kFoldTag, kDoublingTag, kUnfoldTag };

class RecursiveDoublingAllgather final : public detail::AllgatherBase {
 public:
  RecursiveDoublingAllgather(Transport& transport, const CollectiveSpec& spec,
                             std::span<const std::byte> in, std::span<std::byte> out)
      : AllgatherBase(transport, spec, in, out), fold_(ranks_, rank_) {
    requests_.reserve(2);
  }

  void run() override {
    if (fold_.sits_out()) {
      // In place, in lies inside out: receive only once it has left.
      transport_.wait(send(in_, block(rank_).count, rank_ + 1, tag(kFoldTag)));
      transport_.wait(recv(out_, spec_.count, rank_ + 1, tag(kUnfoldTag)));
      return;
    }
    if (rank_ < 2 * fold_.rem) {
      const detail::Block absorbed = block(rank_ - 1);
      requests_.push_back(recv(out_at(absorbed.offset), absorbed.count, rank_ - 1, tag(kFoldTag)));
    }
    place_own_block();
    wait_all(requests_);
    double_up();
    if (rank_ < 2 * fold_.rem) transport_.wait(send(out_, spec_.count, rank_ - 1, tag(kUnfoldTag)));
  }

 private:
  void double_up() {
    for (int distance = 1; distance < fold_.pof2; distance *= 2) {
      const int mine_first = fold_.new_rank & ~(distance - 1);
      const int theirs_first = mine_first ^ distance;
      const detail::Block mine = fold_.elements_of(spec_.count, ranks_, mine_first, distance);
      const detail::Block theirs = fold_.elements_of(spec_.count, ranks_, theirs_first, distance);
      const int partner = fold_.real_rank(fold_.new_rank ^ distance);
      requests_.push_back(recv(out_at(theirs.offset), theirs.count, partner, tag(kDoublingTag)));
      requests_.push_back(send(send_source(mine), mine.count, partner, tag(kDoublingTag)));
      wait_all(requests_);
    }
  }

  detail::Fold fold_;
  std::vector<RequestId> requests_;
};

CostTerms recursive_doubling_cost(const Layout& layout, double n) {
  const int p = layout.ranks();
  const detail::Fold fold(p, 0);
  CostTerms terms;
  detail::add_fold_step(terms, layout, n / p);
  // The round with partners `distance` apart swaps `distance` participants' blocks.
  for (int distance = 1; distance < fold.pof2; distance <<= 1) {
    detail::add_participant_round(terms, layout, distance, fold.largest_share(distance) * n);
  }
  detail::add_unfold_step(terms, layout, n);
  return terms;
}

}  // namespace

extern const AlgorithmInfo kRecursiveDoublingAllgather = {
    "recursive_doubling",
    "lg p rounds, each doubling the blocks a rank holds; fewest rounds and bytes",
    detail::common_unsupported_reason,
    detail::flat_cost<recursive_doubling_cost>,
    /*reduces_on_every_rank=*/false,  // nothing is reduced
    detail::no_workspace,
    detail::build_as<RecursiveDoublingAllgather>,
    recursive_doubling_cost,
};

}  // namespace collbench
