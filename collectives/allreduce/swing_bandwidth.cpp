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

#include "phases.h"

namespace collbench {
namespace {

// This algorithm's tags: offsets in its slot (CollectiveBase::tag).
enum Tag : int { kFoldTag, kReduceScatterTag, kAllgatherTag, kUnfoldTag };

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

class SwingBandwidthAllreduce final : public detail::AllreduceBase {
 public:
  SwingBandwidthAllreduce(Transport& transport, const CollectiveSpec& spec,
                          std::span<const std::byte> in, std::span<std::byte> out)
      : AllreduceBase(transport, spec, in, out), fold_(ranks_, rank_) {
    if (ranks_ > 1) staging_ = allocate_workspace(spec.count);
    if (fold_.sits_out()) return;
    // The schedule depends only on (rank, p, count): computed here.
    const SwingBlocks blocks(fold_.pof2);
    const int v = fold_.new_rank;
    for (int step = 0; step < blocks.steps(); ++step) {
      const int peer = detail::swing_peer(v, step, fold_.pof2);
      const int size = 1 << (blocks.steps() - step - 1);
      Round round;
      round.partner = fold_.real_rank(peer);
      round.kept = block_range(blocks.first(v, step + 1), size);
      round.given = block_range(blocks.first(peer, step + 1), size);
      rounds_.push_back(round);
    }
    owned_ = block_range(blocks.position(v), 1);
    requests_.reserve(2);
  }

  void run() override {
    if (detail::fold_in(*this, fold_, staging_, tag(kFoldTag), tag(kUnfoldTag))) return;
    // As rabenseifner: no copy of in to out; step 0 sends from wherever the
    // vector is and writes out = that op the peer's on what it keeps.
    const std::byte* mine = rank_ < 2 * fold_.rem ? out_ : in_;
    for (const Round& round : rounds_) {
      std::byte* received = mine == out_ ? staging_ : out_at(round.kept.offset);
      requests_.push_back(recv(received, round.kept.count, round.partner, tag(kReduceScatterTag)));
      requests_.push_back(send(mine + bytes(round.given.offset), round.given.count, round.partner,
                               tag(kReduceScatterTag)));
      wait_all(requests_);
      reduce_pairwise_from(round.partner, out_at(round.kept.offset),
                           mine + bytes(round.kept.offset), received, round.kept.count);
      mine = out_;
    }
    if (mine != out_) copy_input_to_output();  // one rank: nothing to reduce
    finish_average(owned_);
    for (auto round = rounds_.rbegin(); round != rounds_.rend(); ++round) {
      requests_.push_back(recv(out_at(round->given.offset), round->given.count, round->partner,
                               tag(kAllgatherTag)));
      requests_.push_back(
          send(out_at(round->kept.offset), round->kept.count, round->partner, tag(kAllgatherTag)));
      wait_all(requests_);
    }
    detail::unfold_out(*this, fold_, tag(kUnfoldTag));
  }

 private:
  struct Round {
    int partner = -1;
    detail::Block kept;   // reduced here in the reduce-scatter, sent in the allgather
    detail::Block given;  // sent in the reduce-scatter, received in the allgather
  };
  // Elements of the `blocks` blocks from position `first` of the p'-way
  // partition.
  detail::Block block_range(int first, int blocks) const {
    const std::size_t begin = detail::partition(spec_.count, fold_.pof2, first).offset;
    const int last = first + blocks;
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

CostTerms swing_bandwidth_cost(const Layout& layout, double n) {
  const detail::Fold fold(layout.ranks(), 0);
  const int steps = floor_log2(fold.pof2);
  CostTerms terms;
  detail::add_fold_step(terms, layout, n);
  // Step s moves half of a window of n/2^s.
  for (int step = 0; step < steps; ++step) {
    detail::add_swing_round(terms, layout, step, n / (2 << step));
  }
  for (int step = steps - 1; step >= 0; --step) {
    detail::add_swing_round(terms, layout, step, n / (2 << step));
  }
  detail::add_unfold_step(terms, layout, n);
  const double share = static_cast<double>(fold.pof2 - 1) / fold.pof2;
  terms.reduce_bytes = share * n + (fold.rem > 0 ? n : 0);
  return terms;
}

std::size_t swing_bandwidth_workspace(int p, std::size_t n) { return p > 1 ? n : 0; }

}  // namespace

extern const AlgorithmInfo kSwingBandwidthAllreduce = {
    "swing_bandwidth",
    "Swing's bandwidth-optimal form: reduce-scatter + allgather in lg p steps with peers at ±ρ_s "
    "(nearer on a torus than rabenseifner's); 1-D, folds p to 2^⌊lg p⌋",
    detail::common_unsupported_reason,
    detail::flat_cost<swing_bandwidth_cost>,
    /*reduces_on_every_rank=*/true,  // every rank reduces at once
    swing_bandwidth_workspace,
    detail::build_as<SwingBandwidthAllreduce>,
    swing_bandwidth_cost,
};

}  // namespace collbench
