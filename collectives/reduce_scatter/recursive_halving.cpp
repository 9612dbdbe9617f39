// recursive_halving — reduce_scatter by lg p rounds of halving (Thakur,
// Rabenseifner & Gropp 2005), for any p.
//
//   Fold (only when p is not a power of two): with p' = 2^⌊lg p⌋ and
//     rem = p − p', each even rank below 2·rem sends its whole vector to the
//     odd rank above it, which reduces it and from then on stands for both
//     ranks' blocks; the even rank waits for its block.
//   Halving, lg p' rounds: each participant owns a range of participants'
//     blocks (at first all of them); in each round it splits the range in
//     two, sends the half its partner keeps (the participant whose number
//     differs in that round's bit) and receives and reduces the half it
//     keeps. After the last round it holds its own blocks, fully reduced.
//   Unfold: each odd rank below 2·rem sends the absorbed rank its block.
// Partial sums go to a workspace vector; the last round's result is copied
// to out (n/p bytes).
//
// Cost (p = 2^k): lg p·α + (p−1)/p·nβ + (p−1)/p·nγ — the lower bound: the
// fewest rounds and the fewest bytes. Otherwise the fold and unfold add
// 2α + (n + n/p)β + nγ, and the round that gives away the blocks of d
// participants receives and reduces the largest range of d participants'
// blocks (Fold::largest_share), more than d/p' of the vector: at p = 3,
// 2n/3 instead of n/2 (the simulated star showed it).
#include <cstring>

#include "phases.h"

namespace collbench {
namespace {

// This algorithm's tags: offsets in its slot (CollectiveBase::tag).
enum Tag : int { kFoldTag, kHalvingTag, kUnfoldTag };

class RecursiveHalvingReduceScatter final : public detail::ReduceScatterBase {
 public:
  RecursiveHalvingReduceScatter(Transport& transport, const CollectiveSpec& spec,
                                std::span<const std::byte> in, std::span<std::byte> out)
      : ReduceScatterBase(transport, spec, in, out), fold_(ranks_, rank_) {
    if (ranks_ > 1 && !fold_.sits_out()) {
      partial_ = allocate_workspace(spec.count);
      // The half a rank keeps is more than n/2 where it stands for two ranks.
      received_ = allocate_workspace(spec.count);
    }
    requests_.reserve(2);
  }

  void run() override {
    if (ranks_ == 1) {
      copy_input_to_output();
      finish_average({0, spec_.count});
      return;
    }
    if (fold_.sits_out()) {
      // Its block arrives finished, avg division included. In place, out
      // lies inside the vector being sent: receive only once it has left.
      transport_.wait(send(in_, spec_.count, rank_ + 1, tag(kFoldTag)));
      transport_.wait(recv(out_, block(rank_).count, rank_ + 1, tag(kUnfoldTag)));
      return;
    }
    const std::byte* vector = in_;  // where this rank's (partial) vector is
    if (rank_ < 2 * fold_.rem) {
      transport_.wait(recv(partial_, spec_.count, rank_ - 1, tag(kFoldTag)));
      reduce_ordered(partial_, partial_, in_, spec_.count);
      vector = partial_;
    }
    halve(vector);
    deliver();
  }

 private:
  // Rounds of halving the participants' range [first, first + size).
  void halve(const std::byte* vector) {
    int first = 0;
    for (int size = fold_.pof2; size > 1; size /= 2) {
      const int half = size / 2;
      const bool lower = fold_.new_rank < first + half;
      const int kept_first = lower ? first : first + half;
      const int sent_first = lower ? first + half : first;
      const int partner = fold_.real_rank(fold_.new_rank ^ half);
      const detail::Block kept = elements(kept_first, half);
      const detail::Block sent = elements(sent_first, half);
      requests_.push_back(recv(received_, kept.count, partner, tag(kHalvingTag)));
      requests_.push_back(send(vector + bytes(sent.offset), sent.count, partner, tag(kHalvingTag)));
      wait_all(requests_);
      std::byte* sum = partial_ + bytes(kept.offset);
      reduce_ordered(sum, vector + bytes(kept.offset), received_, kept.count);
      vector = partial_;
      first = kept_first;
    }
  }

  // This rank's block to out; the absorbed rank's to it.
  void deliver() {
    const detail::Block own = block(rank_);
    if (rank_ < 2 * fold_.rem) {
      const detail::Block absorbed = block(rank_ - 1);
      std::byte* result = partial_ + bytes(absorbed.offset);
      if (spec_.op == ReduceOp::avg && absorbed.count > 0) {
        transport_.scale_for_average(spec_.dtype, result, absorbed.count, ranks_);
      }
      requests_.push_back(send(result, absorbed.count, rank_ - 1, tag(kUnfoldTag)));
    }
    copy_bytes(out_, partial_ + bytes(own.offset), bytes(own.count));
    finish_average({0, own.count});
    wait_all(requests_);
  }

  detail::Block elements(int first, int participants) const {
    return fold_.elements_of(spec_.count, ranks_, first, participants);
  }

  detail::Fold fold_;
  std::byte* partial_ = nullptr;
  std::byte* received_ = nullptr;
  std::vector<RequestId> requests_;
};

CostTerms recursive_halving_cost(const Layout& layout, double n) {
  const int p = layout.ranks();
  const detail::Fold fold(p, 0);
  CostTerms terms;
  detail::add_fold_step(terms, layout, n);
  // The round with partners `half` apart gives away `half` participants'
  // blocks and reduces as many.
  terms.reduce_bytes = fold.rem > 0 ? n : 0;
  for (int half = fold.pof2 / 2; half >= 1; half /= 2) {
    const double bytes = fold.largest_share(half) * n;
    detail::add_participant_round(terms, layout, half, bytes);
    terms.reduce_bytes += bytes;
  }
  detail::add_unfold_step(terms, layout, n / p);
  return terms;
}

std::size_t recursive_halving_workspace(int p, std::size_t n) { return p > 1 ? 2 * n : 0; }

}  // namespace

extern const AlgorithmInfo kRecursiveHalvingReduceScatter = {
    "recursive_halving",
    "lg p rounds, each halving the range a rank reduces; fewest rounds and bytes",
    detail::common_unsupported_reason,
    detail::flat_cost<recursive_halving_cost>,
    /*reduces_on_every_rank=*/true,  // every participant reduces at once
    recursive_halving_workspace,
    detail::build_as<RecursiveHalvingReduceScatter>,
    recursive_halving_cost,
};

}  // namespace collbench
