// swing_latency_torus, swing_bandwidth_torus — Swing on a multi-dimensional
// torus (De Sensi, Bonato, Saam & Hoefler, NSDI'24): two Swings per torus
// dimension at once, one of them mirrored, so that every step keeps both
// ports of each dimension busy.
//
//   The torus: the ranks' coordinates the Communicator gives
//     (Communicator::coordinates_of: the simulated torus's), dimension i of
//     size d_i = the largest coordinate i + 1. Used when every rank has a
//     position of its own and the positions fill the box; otherwise (no
//     coordinates: inproc, mpi, ofi and the other simulated platforms) the
//     1-D form of the same name without _torus runs (swing_latency.cpp,
//     swing_bandwidth.cpp).
//   Sides that are no power of two: each dimension is folded to its
//     d'_i = 2^⌊lg d_i⌋ as recursive doubling folds p (phases.h's Fold),
//     one dimension after the other: along dimension i, of the ranks still
//     in, each one at an even x_i < 2(d_i − d'_i) sends its vector to its
//     neighbour at x_i + 1, which reduces it, and sits out; the rest, at
//     x'_i = x_i / 2 below 2(d_i − d'_i) and x_i − (d_i − d'_i) above, form
//     the torus d'_0 × d'_1 × ... on which the Swings below run. Then the
//     folds are undone in reverse: each absorbing rank sends the result
//     back. A fold partner is one hop away, and every other pair of the
//     Swings stays within one dimension. (The paper's library instead runs
//     ⌈lg d_i⌉ steps on even sides, sending a block reached twice only once;
//     that needs messages of scattered blocks and is not done here.)
//   2D sub-collectives for the D dimensions of size > 1, sub-collective c
//     on part c of 2D equal parts of the vector. Each takes Σ lg d_i steps,
//     visiting the dimensions in turn from the (c mod D)-th, skipping those
//     whose lg d_i steps are done; its j-th visit of dimension δ pairs the
//     rank with the one whose coordinates differ only in δ, x_δ ± ρ_j mod
//     d_δ (+ for even x_δ: phases.h's swing_peer along δ), and for c ≥ D,
//     the mirrors, x_δ ∓ ρ_j: the same Swing on the coordinates reflected,
//     −x_δ mod d_δ. A Swing step's pairs along a ring use every other link
//     of it (ρ_0 = 1: 0-1, 2-3, ...), its mirror's the others (0-(d−1),
//     2-1, ...): the paper's library runs 2D collectives, one per port.
//     While every dimension has steps left the 2D sub-collectives of a step
//     use D different dimensions, two each. With a (folded) side of 2 the
//     mirrors are left out (Torus::mirrors): D sub-collectives on D parts.
//   latency form: each step every sub-collective swaps its whole part with
//     its peer and reduces it (operands in rank order), as swing_latency.
//   bandwidth form: each sub-collective is swing_bandwidth's reduce-scatter
//     and allgather on its part, its blocks in the depth-first order of its
//     own peers (butterfly.h's SwingBlocks).
//   A step's messages of all sub-collectives are posted together, each
//   sub-collective and its mirror with tags of their own (their peers
//   differ: x + ρ ≢ x − ρ on a side above 2, ρ being odd).
//
// Cost: on a flat network these are the 1-D forms' steps and bytes (a step's
// 2D messages share the rank's link; and without coordinates the 1-D form
// is what runs): swing_latency's and swing_bandwidth's costs. That a step's
// messages leave by D ports of a torus, and cross one dimension's hops
// only, the α-β model cannot see; nor that a torus with F sides that are no
// power of two folds F times (F·(2α + 2nβ + nγ) where the 1-D form folds
// once).
#include <algorithm>
#include <memory>
#include <optional>
#include <span>
#include <utility>
#include <vector>

#include "butterfly.h"

namespace collbench {

extern const AlgorithmInfo kSwingLatencyAllreduce;
extern const AlgorithmInfo kSwingBandwidthAllreduce;

namespace {

// At most 3 dimensions (Communicator coordinates of a simulated torus):
// tags phase·3 + sub-collective, then the folds', within a slot's 8.
constexpr int kMostDimensions = 3;
enum Phase : int { kExchange, kGather };
constexpr int kFoldTag = 2 * kMostDimensions;
constexpr int kUnfoldTag = kFoldTag + 1;

// The torus of a transport's coordinates, when usable, and the power-of-two
// torus its folds leave (header comment). Positions count only the
// dimensions larger than 1; a core index numbers the folded torus's
// positions, dimension 0 fastest.
struct Torus {
  std::vector<int> sides;                     // d_i, of the dimensions larger than 1
  std::vector<int> sizes;                     // d'_i = 2^⌊lg d_i⌋: the folded torus
  std::vector<int> rank_at;                   // by position in the whole torus
  std::vector<int> core_rank_at;              // by core index
  std::vector<std::vector<int>> position_of;  // by rank

  static std::optional<Torus> of(const Transport& transport) {
    const int p = transport.size();
    const std::size_t dimensions = transport.coordinates_of(0).size();
    if (dimensions == 0 || dimensions > kMostDimensions) return std::nullopt;
    std::vector<int> extent(dimensions, 0);
    for (int rank = 0; rank < p; ++rank) {
      const std::span<const int> where = transport.coordinates_of(rank);
      for (std::size_t i = 0; i < dimensions; ++i) {
        if (where[i] < 0) return std::nullopt;
        extent[i] = std::max(extent[i], where[i] + 1);
      }
    }
    Torus torus;
    std::vector<std::size_t> used;  // the dimensions larger than 1
    long long box = 1;
    for (std::size_t i = 0; i < dimensions; ++i) {
      box *= extent[i];
      if (extent[i] > 1) {
        torus.sides.push_back(extent[i]);
        torus.sizes.push_back(1 << floor_log2(extent[i]));
        used.push_back(i);
      }
    }
    if (box != p || torus.sides.empty()) return std::nullopt;
    torus.rank_at.assign(static_cast<std::size_t>(p), -1);
    long long core = 1;
    for (const int size : torus.sizes) core *= size;
    torus.core_rank_at.assign(static_cast<std::size_t>(core), -1);
    for (int rank = 0; rank < p; ++rank) {
      const std::span<const int> where = transport.coordinates_of(rank);
      std::vector<int> position;
      for (const std::size_t i : used) position.push_back(where[i]);
      int& slot = torus.rank_at[static_cast<std::size_t>(index(position, torus.sides))];
      if (slot >= 0) return std::nullopt;  // two ranks at one position
      slot = rank;
      if (const std::optional<std::vector<int>> core_position = torus.folded(position)) {
        torus.core_rank_at[static_cast<std::size_t>(index(*core_position, torus.sizes))] = rank;
      }
      torus.position_of.push_back(std::move(position));
    }
    return torus;
  }

  static int index(const std::vector<int>& position, const std::vector<int>& sizes) {
    int at = 0;
    for (std::size_t i = sizes.size(); i-- > 0;) at = at * sizes[i] + position[i];
    return at;
  }
  // Positions below 2·(d − d') along a dimension of side d pair up; the even
  // one of a pair sits out.
  int folded_away(std::size_t d) const { return 2 * (sides[d] - sizes[d]); }
  // A position's place in the folded torus; none if it sits out.
  std::optional<std::vector<int>> folded(std::vector<int> position) const {
    for (std::size_t d = 0; d < sides.size(); ++d) {
      int& x = position[d];
      if (x < folded_away(d)) {
        if (x % 2 == 0) return std::nullopt;
        x /= 2;
      } else {
        x -= sides[d] - sizes[d];
      }
    }
    return position;
  }
  int participants() const { return static_cast<int>(core_rank_at.size()); }
  // Along a side of 2 a Swing and its mirror have the one neighbour as
  // peer: two messages to one rank at once, which the sim transport
  // serialises on a lane and then starves (results/sim/README.md (b)).
  bool mirrors() const {
    return std::none_of(sizes.begin(), sizes.end(), [](int size) { return size == 2; });
  }
  // The core index of a rank that takes part.
  int core_index(int rank) const {
    return index(*folded(position_of[static_cast<std::size_t>(rank)]), sizes);
  }
  // Sub-collective c's steps: (dimension, its Swing step).
  std::vector<std::pair<int, int>> steps_of(int c) const {
    const auto dimensions = static_cast<int>(sizes.size());
    std::vector<int> done(sizes.size(), 0);  // steps taken along each dimension
    std::size_t total = 0;
    for (const int size : sizes) total += static_cast<std::size_t>(floor_log2(size));
    std::vector<std::pair<int, int>> steps;
    for (int visit = c; steps.size() < total; ++visit) {
      const auto d = static_cast<std::size_t>(visit % dimensions);
      if (done[d] == floor_log2(sizes[d])) continue;
      steps.emplace_back(static_cast<int>(d), done[d]++);
    }
    return steps;
  }
  // The core index at core index `at` moved by Swing's step `step` along
  // `d`, or by its mirror's.
  int peer(int at, int d, int step, bool mirrored) const {
    std::vector<int> position;
    for (const int size : sizes) {
      position.push_back(at % size);
      at /= size;
    }
    int& x = position[static_cast<std::size_t>(d)];
    const int side = sizes[static_cast<std::size_t>(d)];
    const auto reflect = [side](int at_x) { return (side - at_x) % side; };
    x = mirrored ? reflect(detail::swing_peer(reflect(x), step, side))
                 : detail::swing_peer(x, step, side);
    return index(position, sizes);
  }
  // A rank's folds, dimension by dimension while it is still in: its
  // partner's rank and whether this rank is the one that sits out (then
  // its last fold).
  struct FoldStep {
    int partner;
    bool sits_out;
  };
  std::vector<FoldStep> folds_of(int rank) const {
    std::vector<int> position = position_of[static_cast<std::size_t>(rank)];
    std::vector<FoldStep> folds;
    for (std::size_t d = 0; d < sides.size(); ++d) {
      int& x = position[d];
      if (x >= folded_away(d)) continue;
      const bool sits_out = x % 2 == 0;
      x += sits_out ? 1 : -1;
      folds.push_back({rank_at[static_cast<std::size_t>(index(position, sides))], sits_out});
      if (sits_out) break;
      ++x;
    }
    return folds;
  }
};

class SwingTorusAllreduce final : public detail::AllreduceBase {
 public:
  SwingTorusAllreduce(Transport& transport, const CollectiveSpec& spec,
                      std::span<const std::byte> in, std::span<std::byte> out, const Torus& torus,
                      bool halving)
      : AllreduceBase(transport, spec, in, out), halving_(halving), folds_(torus.folds_of(rank_)) {
    staging_ = allocate_workspace(spec.count);
    requests_.reserve(4 * torus.sizes.size());
    if (!folds_.empty() && folds_.back().sits_out) return;
    const int me = torus.core_index(rank_);
    const int participants = torus.participants();
    const auto real = [&torus](int at) { return torus.core_rank_at[static_cast<std::size_t>(at)]; };
    const auto dimensions = static_cast<int>(torus.sizes.size());
    const int parts = (torus.mirrors() ? 2 : 1) * dimensions;
    for (int c = 0; c < parts; ++c) {
      const detail::Block part = detail::partition(spec.count, parts, c);
      const std::vector<std::pair<int, int>> steps = torus.steps_of(c % dimensions);
      const bool mirrored = c >= dimensions;
      // Sub-collective c's peer of each step, by core index.
      const auto peer = [&torus, &steps, mirrored](int at, int s) {
        const auto& [d, step] = steps[static_cast<std::size_t>(s)];
        return torus.peer(at, d, step, mirrored);
      };
      Sub sub;
      if (!halving) {
        for (int s = 0; s < static_cast<int>(steps.size()); ++s) {
          sub.steps.push_back({real(peer(me, s)), part, part});
        }
        sub.owned = part;
      } else {
        const detail::SwingBlocks blocks(participants, static_cast<int>(steps.size()), peer);
        const auto blocks_from = [&](int first, int size) {
          const detail::Block range =
              detail::partition_range(part.count, participants, first, first + size);
          return detail::Block{part.offset + range.offset, range.count};
        };
        for (int s = 0; s < blocks.steps(); ++s) {
          const int partner = peer(me, s);
          const int size = 1 << (blocks.steps() - s - 1);
          sub.steps.push_back({real(partner), blocks_from(blocks.first(me, s + 1), size),
                               blocks_from(blocks.first(partner, s + 1), size)});
        }
        sub.owned = blocks_from(blocks.position(me), 1);
      }
      subs_.push_back(std::move(sub));
      sub_tags_.push_back(c % dimensions);
    }
  }

  void run() override {
    const std::size_t count = spec_.count;
    // As the 1-D forms: the first step sends from in and receives straight
    // into out (into staging in place, or once a fold has written out);
    // later steps send from out.
    const std::byte* mine = in_;
    for (const Torus::FoldStep& fold : folds_) {
      if (fold.sits_out) {
        transport_.wait(send(mine, count, fold.partner, tag(kFoldTag)));
        // The result arrives finished, avg division included.
        transport_.wait(recv(out_, count, fold.partner, tag(kUnfoldTag)));
        unfold(folds_.size() - 1);
        return;
      }
      transport_.wait(recv(staging_, count, fold.partner, tag(kFoldTag)));
      reduce_pairwise_from(fold.partner, out_, mine, staging_, count);
      mine = out_;
    }
    const std::size_t steps = subs_.front().steps.size();
    for (std::size_t s = 0; s < steps; ++s) {
      for (std::size_t c = 0; c < subs_.size(); ++c) {
        const detail::HalvingStep& step = subs_[c].steps[s];
        requests_.push_back(recv(received(mine, step.kept), step.kept.count, step.partner,
                                 tag(kExchange * kMostDimensions + sub_tags_[c])));
        requests_.push_back(send(mine + bytes(step.given.offset), step.given.count, step.partner,
                                 tag(kExchange * kMostDimensions + sub_tags_[c])));
      }
      wait_all(requests_);
      for (const Sub& sub : subs_) {
        const detail::HalvingStep& step = sub.steps[s];
        reduce_pairwise_from(step.partner, out_at(step.kept.offset), mine + bytes(step.kept.offset),
                             received(mine, step.kept), step.kept.count);
      }
      mine = out_;
    }
    for (const Sub& sub : subs_) finish_average(sub.owned);
    if (halving_) {
      for (std::size_t s = steps; s-- > 0;) {
        for (std::size_t c = 0; c < subs_.size(); ++c) {
          const detail::HalvingStep& step = subs_[c].steps[s];
          requests_.push_back(recv(out_at(step.given.offset), step.given.count, step.partner,
                                   tag(kGather * kMostDimensions + sub_tags_[c])));
          requests_.push_back(send(out_at(step.kept.offset), step.kept.count, step.partner,
                                   tag(kGather * kMostDimensions + sub_tags_[c])));
        }
        wait_all(requests_);
      }
    }
    unfold(folds_.size());
  }

 private:
  struct Sub {
    std::vector<detail::HalvingStep> steps;
    detail::Block owned;  // reduced here: its part (latency), its block (bandwidth)
  };
  // Where a step's kept elements from the peer land: out, until the first
  // reduction has written it (out of place), else staging.
  std::byte* received(const std::byte* mine, detail::Block kept) {
    return (mine == out_ ? staging_ : out_) + bytes(kept.offset);
  }
  // The result back to the ranks folded into this one, the last fold first
  // (of the first `folds` of folds_: all those it absorbed).
  void unfold(std::size_t folds) {
    for (std::size_t f = folds; f-- > 0;) {
      transport_.wait(send(out_, spec_.count, folds_[f].partner, tag(kUnfoldTag)));
    }
  }

  const bool halving_;
  const std::vector<Torus::FoldStep> folds_;
  std::vector<Sub> subs_;
  std::vector<int> sub_tags_;  // by sub-collective: its mirror's too
  std::byte* staging_ = nullptr;
  std::vector<RequestId> requests_;
};

template <bool kHalving>
std::unique_ptr<Collective> build_swing_torus(Transport& transport, const CollectiveSpec& spec,
                                              std::span<const std::byte> in,
                                              std::span<std::byte> out) {
  const std::optional<Torus> torus = Torus::of(transport);
  if (!torus) {
    return (kHalving ? kSwingBandwidthAllreduce : kSwingLatencyAllreduce)
        .build(transport, spec, in, out);
  }
  return std::make_unique<SwingTorusAllreduce>(transport, spec, in, out, *torus, kHalving);
}

}  // namespace

extern const AlgorithmInfo kSwingLatencyTorusAllreduce = {
    "swing_latency_torus",
    "Swing's latency form on a torus: two Swings per dimension (one mirrored) at once on a "
    "part each (the "
    "sim torus's coordinates; a side that is no power of two folded to one); swing_latency "
    "elsewhere",
    detail::common_unsupported_reason,
    detail::flat_cost<detail::whole_vector_exchange_cost<detail::swing_peer>>,
    /*reduces_on_every_rank=*/true,
    detail::butterfly_workspace,
    build_swing_torus<false>,
    detail::whole_vector_exchange_cost<detail::swing_peer>,
};

extern const AlgorithmInfo kSwingBandwidthTorusAllreduce = {
    "swing_bandwidth_torus",
    "Swing's bandwidth form on a torus: two Swings per dimension (one mirrored) at once on a "
    "part each (the "
    "sim torus's coordinates; a side that is no power of two folded to one); swing_bandwidth "
    "elsewhere",
    detail::common_unsupported_reason,
    detail::flat_cost<detail::halving_doubling_cost<detail::swing_peer>>,
    /*reduces_on_every_rank=*/true,
    detail::butterfly_workspace,
    build_swing_torus<true>,
    detail::halving_doubling_cost<detail::swing_peer>,
};

}  // namespace collbench
