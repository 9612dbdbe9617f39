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
#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

#include "butterfly.h"

namespace collbench {
namespace {

// The block order of the header comment among `participants` = 2^k.
class SwingBlocks {
 public:
  explicit SwingBlocks(int participants)
      : participants_(participants), steps_(floor_log2(participants)) {
    std::vector<int> order;
    members(0, 0, order);
    position_.assign(static_cast<std::size_t>(participants), -1);
    for (std::size_t i = 0; i < order.size(); ++i) {
      int& position = position_.at(static_cast<std::size_t>(order[i]));
      if (position >= 0) {
        throw std::logic_error(fmt::format(
            "swing_bandwidth: participant {} is reached twice among {}", order[i], participants));
      }
      position = static_cast<int>(i);
    }
  }
  int steps() const { return steps_; }
  int position(int participant) const { return position_[static_cast<std::size_t>(participant)]; }
  // The first position of T(v, step), 2^(k−step) positions long.
  int first(int v, int step) const {
    std::vector<int> set;
    members(v, step, set);
    int lowest = participants_, highest = -1;
    for (const int member : set) {
      lowest = std::min(lowest, position(member));
      highest = std::max(highest, position(member));
    }
    if (highest - lowest + 1 != static_cast<int>(set.size())) {
      throw std::logic_error(
          fmt::format("swing_bandwidth: the blocks of T({}, {}) among {} are not contiguous", v,
                      step, participants_));
    }
    return lowest;
  }

 private:
  // T(v, step) in depth-first order.
  void members(int v, int step, std::vector<int>& out) const {
    if (step == steps_) {
      out.push_back(v);
      return;
    }
    members(v, step + 1, out);
    members(detail::swing_peer(v, step, participants_), step + 1, out);
  }

  int participants_;
  int steps_;
  std::vector<int> position_;
};

// Step s keeps T(v, s+1)'s blocks and gives T(peer, s+1)'s (header comment).
detail::HalvingSchedule swing_bandwidth_schedule(const detail::Fold& fold, std::size_t count) {
  const SwingBlocks blocks(fold.pof2);
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
