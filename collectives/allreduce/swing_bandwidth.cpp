// swing_bandwidth — Swing's bandwidth-optimal allreduce (De Sensi, Bonato,
// Saam & Hoefler, NSDI'24): a reduce-scatter and an allgather, each in lg p
// steps with Swing's peers (phases.h), shaped as rabenseifner.
//
//   Fold (p not a power of two): as in recursive_doubling, the first 2·rem
//     ranks pair up and the even ones sit out, leaving p' = 2^k = 2^⌊lg p⌋
//     participants. (The paper runs ⌈lg p⌉ steps on any even p instead,
//     sending some blocks along a second path; not done here.)
//   Blocks. Let T(v, s) be the participants v hears from in steps s..k−1:
//     T(v, k) = {v}, T(v, s) = T(v, s+1) ∪ T(peer(v, s), s+1), disjoint, of
//     2^(k−s) each. The vector's p' blocks are laid out in the order that
//     makes every T(v, s) one contiguous range (the depth-first order of
//     these sets from participant 0; checked when built), so that each step
//     sends one message, not a message per block as the paper's code does.
//   Reduce-scatter, step s = 0..k−1: participant v keeps T(v, s+1)'s blocks,
//     sends its peer T(peer, s+1)'s and reduces the peer's copy of the kept
//     ones into its own; after k steps it holds its own block, reduced.
//   Allgather, the steps in reverse: v sends what it holds (T(v, s+1)'s
//     blocks) and receives its peer's.
//   Unfold: odd ranks below 2·rem send the result to their folded partner.
//
// Cost (p = 2^k): 2 lg p·α + 2(p−1)/p·nβ + (p−1)/p·nγ — rabenseifner's on a
// flat network; on a torus step s crosses |ρ_s| hops instead of 2^s, which
// the α-β model cannot see (placed: where the peers sit on nodes). Otherwise
// p' replaces p and the fold and unfold add 2α + 2nβ + nγ.
#include "butterfly.h"

namespace collbench {
namespace {

// Step s keeps T(v, s+1)'s blocks and gives T(peer, s+1)'s (header comment).
detail::HalvingSchedule swing_bandwidth_schedule(const detail::Fold& fold, std::size_t count) {
  const detail::SwingBlocks blocks(fold.pof2, floor_log2(fold.pof2), [&fold](int v, int step) {
    return detail::swing_peer(v, step, fold.pof2);
  });
  const int v = fold.new_rank;
  // The `size` blocks from position `first` of the p'-way partition.
  const auto blocks_from = [&](int first, int size) {
    return detail::partition_range(count, fold.pof2, first, first + size);
  };
  detail::HalvingSchedule schedule;
  for (int step = 0; step < blocks.steps(); ++step) {
    const int peer = detail::swing_peer(v, step, fold.pof2);
    const int size = 1 << (blocks.steps() - step - 1);
    schedule.steps.push_back({fold.real_rank(peer), blocks_from(blocks.first(v, step + 1), size),
                              blocks_from(blocks.first(peer, step + 1), size)});
  }
  schedule.owned = blocks_from(blocks.position(v), 1);
  return schedule;
}

}  // namespace

extern const AlgorithmInfo kSwingBandwidthAllreduce = {
    "swing_bandwidth",
    "Swing's bandwidth-optimal form: reduce-scatter + allgather in lg p steps with peers at ±ρ_s "
    "(nearer on a torus than rabenseifner's); 1-D, folds p to 2^⌊lg p⌋",
    detail::common_unsupported_reason,
    detail::flat_cost<detail::halving_doubling_cost<detail::swing_peer>>,
    /*reduces_on_every_rank=*/true,  // every rank reduces at once
    detail::butterfly_workspace,
    detail::build_as<detail::HalvingDoublingAllreduce<swing_bandwidth_schedule>>,
    detail::halving_doubling_cost<detail::swing_peer>,
};

}  // namespace collbench
