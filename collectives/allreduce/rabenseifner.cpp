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
// The code is butterfly.h's, with these peers.
//
// Cost (p = 2^k): 2 lg p·α + 2(p−1)/p·nβ + (p−1)/p·nγ — ring's bandwidth with
// logarithmic latency: for medium and large messages. Otherwise p' replaces
// p and the fold and unfold add 2α + 2nβ + nγ.
#include "butterfly.h"

namespace collbench {
namespace {

// Round k keeps the half of the participant's window on its side of bit k:
// the lower half when the bit is 0.
detail::HalvingSchedule rabenseifner_schedule(const detail::Fold& fold, std::size_t count) {
  detail::HalvingSchedule schedule;
  int low = 0;
  int high = fold.pof2;
  for (int step = 0; (1 << step) < fold.pof2; ++step) {
    const int middle = (low + high) / 2;
    const bool keep_lower = (fold.new_rank & (1 << step)) == 0;
    const detail::Block lower = detail::partition_range(count, fold.pof2, low, middle);
    const detail::Block upper = detail::partition_range(count, fold.pof2, middle, high);
    schedule.steps.push_back(
        {fold.real_rank(detail::butterfly_peer(fold.new_rank, step, fold.pof2)),
         keep_lower ? lower : upper, keep_lower ? upper : lower});
    (keep_lower ? high : low) = middle;
  }
  schedule.owned = detail::partition_range(count, fold.pof2, low, high);
  return schedule;
}

}  // namespace

extern const AlgorithmInfo kRabenseifnerAllreduce = {
    "rabenseifner",
    "recursive-halving reduce-scatter + recursive-doubling allgather; log latency, ring bandwidth",
    detail::common_unsupported_reason,
    detail::flat_cost<detail::halving_doubling_cost<detail::butterfly_peer>>,
    /*reduces_on_every_rank=*/true,  // every rank reduces at once
    detail::butterfly_workspace,
    detail::build_as<detail::HalvingDoublingAllreduce<rabenseifner_schedule>>,
    detail::halving_doubling_cost<detail::butterfly_peer>,
};

}  // namespace collbench
