// rabenseifner — recursive-halving reduce-scatter, then recursive-doubling
// allgather (Rabenseifner; Thakur, Rabenseifner & Gropp 2005).
//
//   Fold (p not a power of two): as in recursive_doubling, the first 2·rem
//     ranks pair up and the even ones sit out, leaving p' = 2^⌊lg p⌋.
//   Phase 1, reduce-scatter by recursive halving, lg p' rounds: each
//     participant holds a window of the vector (initially all of it, cut in
//     p' blocks). In round k it pairs with the participant differing in bit
//     k, keeps one half of the window, sends the other half and reduces the
//     partner's copy of the kept half into its own. After lg p' rounds each
//     participant owns one block, fully reduced.
//   Phase 2, allgather by recursive doubling: the rounds in reverse; each
//     participant sends what it owns and receives the partner's part, doubling
//     the fully reduced window each round.
//   Unfold: odd ranks below 2·rem send the result to their folded partner.
// Out of place, round 0 receives the partner's copy of the kept half
// straight into out and reduces it there (out = in op out): out is unwritten
// until then, and the call's working set stays in and out, as in the
// sendrecv and reduce benchmarks of its model. Later rounds, and in-place
// calls, receive into staging.
//
// Cost (p = 2^k): 2 lg p·α + 2(p−1)/p·nβ + (p−1)/p·nγ — ring's bandwidth with
// logarithmic latency: for medium and large messages. Otherwise p' replaces
// p and the fold and unfold add 2α + 2nβ + nγ.
#include "phases.h"

namespace collbench {
namespace {

// This algorithm's tags: offsets in its slot (CollectiveBase::tag).
enum Tag : int { kFoldTag, kHalvingTag, kDoublingTag, kUnfoldTag };

class RabenseifnerAllreduce final : public detail::AllreduceBase {
 public:
  RabenseifnerAllreduce(Transport& transport, const CollectiveSpec& spec,
                        std::span<const std::byte> in, std::span<std::byte> out)
      : AllreduceBase(transport, spec, in, out), fold_(ranks_, rank_) {
    if (ranks_ > 1) staging_ = allocate_workspace(spec.count);
    if (fold_.sits_out()) return;
    // The schedule (partner and element ranges per round) depends only on
    // (rank, p, count): compute it here, not in the timed call.
    int low = 0;
    int high = fold_.pof2;
    for (int distance = 1; distance < fold_.pof2; distance <<= 1) {
      const int middle = (low + high) / 2;
      const bool keep_lower = (fold_.new_rank & distance) == 0;
      Round round;
      round.partner = fold_.real_rank(fold_.new_rank ^ distance);
      round.kept = keep_lower ? block_range(low, middle) : block_range(middle, high);
      round.given = keep_lower ? block_range(middle, high) : block_range(low, middle);
      rounds_.push_back(round);
      (keep_lower ? high : low) = middle;
    }
    owned_ = block_range(low, high);
    requests_.reserve(2);
  }

  void run() override {
    if (detail::fold_in(*this, fold_, staging_, tag(kFoldTag), tag(kUnfoldTag))) return;
    // No copy of in to out: round 0 sends its half from wherever the vector
    // is (in, unless fold_in reduced into out) and writes out = that op the
    // partner's on the half it keeps; later rounds work inside that half,
    // now in out, and the allgather fills the rest of out.
    const std::byte* mine = rank_ < 2 * fold_.rem ? out_ : in_;
    for (const Round& round : rounds_) {
      std::byte* received = mine == out_ ? staging_ : out_at(round.kept.offset);
      requests_.push_back(recv(received, round.kept.count, round.partner, tag(kHalvingTag)));
      requests_.push_back(send(mine + bytes(round.given.offset), round.given.count, round.partner,
                               tag(kHalvingTag)));
      wait_all(requests_);
      reduce_pairwise_from(round.partner, out_at(round.kept.offset),
                           mine + bytes(round.kept.offset), received, round.kept.count);
      mine = out_;
    }
    if (mine != out_) copy_input_to_output();  // one rank: nothing to reduce
    finish_average(owned_);
    for (auto round = rounds_.rbegin(); round != rounds_.rend(); ++round) {
      requests_.push_back(
          recv(out_at(round->given.offset), round->given.count, round->partner, tag(kDoublingTag)));
      requests_.push_back(
          send(out_at(round->kept.offset), round->kept.count, round->partner, tag(kDoublingTag)));
      wait_all(requests_);
    }
    detail::unfold_out(*this, fold_, tag(kUnfoldTag));
  }

 private:
  struct Round {
    int partner = -1;
    detail::Block kept;   // reduced here in phase 1, sent in phase 2
    detail::Block given;  // sent in phase 1, received in phase 2
  };
  // Elements of blocks [first, last) of the p'-way partition.
  detail::Block block_range(int first, int last) const {
    const std::size_t begin = detail::partition(spec_.count, fold_.pof2, first).offset;
    const std::size_t end =
        last == fold_.pof2 ? spec_.count : detail::partition(spec_.count, fold_.pof2, last).offset;
    return {begin, end - begin};
  }

  detail::Fold fold_;
  std::vector<Round> rounds_;
  detail::Block owned_;
  std::byte* staging_ = nullptr;
  std::vector<RequestId> requests_;
};

CostTerms rabenseifner_cost(const Layout& layout, double n) {
  const detail::Fold fold(layout.ranks(), 0);
  CostTerms terms;
  detail::add_fold_step(terms, layout, n);
  // Halving: the round at distance d gives away half of a window of n·/d.
  for (int distance = 1; distance < fold.pof2; distance <<= 1) {
    detail::add_participant_round(terms, layout, distance, n / (2 * distance));
  }
  for (int distance = fold.pof2 / 2; distance >= 1; distance >>= 1) {
    detail::add_participant_round(terms, layout, distance, n / (2 * distance));
  }
  detail::add_unfold_step(terms, layout, n);
  const double share = static_cast<double>(fold.pof2 - 1) / fold.pof2;
  terms.reduce_bytes = share * n + (fold.rem > 0 ? n : 0);
  return terms;
}

std::size_t rabenseifner_workspace(int p, std::size_t n) { return p > 1 ? n : 0; }

}  // namespace

extern const AlgorithmInfo kRabenseifnerAllreduce = {
    "rabenseifner",
    "recursive-halving reduce-scatter + recursive-doubling allgather; log latency, ring bandwidth",
    detail::common_unsupported_reason,
    detail::flat_cost<rabenseifner_cost>,
    /*reduces_on_every_rank=*/true,  // every rank reduces at once
    rabenseifner_workspace,
    detail::build_as<RabenseifnerAllreduce>,
    rabenseifner_cost,
};

}  // namespace collbench
