// swing_latency_torus, swing_bandwidth_torus — Swing on a multi-dimensional
// torus (De Sensi, Bonato, Saam & Hoefler, NSDI'24): one Swing per torus
// dimension at once, so that every step keeps a port of each dimension busy.
//
//   The torus: the ranks' coordinates the Communicator gives
//     (Communicator::coordinates_of: the simulated torus's), dimension i of
//     size d_i = the largest coordinate i + 1. Used when every rank has a
//     position of its own, the positions fill the box and every d_i is a
//     power of two; otherwise (no coordinates: inproc, mpi, ofi and the
//     other simulated platforms; or another shape) the 1-D form of the same
//     name without _torus runs (swing_latency.cpp, swing_bandwidth.cpp).
//   D sub-collectives, one per dimension of size > 1, sub-collective c on
//     part c of D equal parts of the vector. Each takes Σ lg d_i steps,
//     visiting the dimensions in turn from the c-th, skipping those whose lg
//     d_i steps are done; its j-th visit of dimension δ pairs the rank with
//     the one whose coordinates differ only in δ, x_δ ± ρ_j mod d_δ (+ for
//     even x_δ: phases.h's swing_peer along δ). While every dimension has
//     steps left the D sub-collectives of a step use D different dimensions.
//   latency form: each step every sub-collective swaps its whole part with
//     its peer and reduces it (operands in rank order), as swing_latency.
//   bandwidth form: each sub-collective is swing_bandwidth's reduce-scatter
//     and allgather on its part, its blocks in the depth-first order of its
//     own peers (butterfly.h's SwingBlocks).
//   A step's messages of all sub-collectives are posted together, each
//   sub-collective with tags of its own.
//
// Cost: on a flat network these are the 1-D forms' steps and bytes (a step's
// D messages share the rank's link; and without coordinates the 1-D form
// is what runs): swing_latency's and swing_bandwidth's costs. That a step's
// messages leave by D ports of a torus, and cross one dimension's hops
// only, the α-β model cannot see.
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
// tags phase·3 + sub-collective, within a slot's 8.
constexpr int kMostDimensions = 3;
enum Phase : int { kExchange, kGather };

// The torus of a transport's coordinates, when usable (header comment).
struct Torus {
  std::vector<int> sizes;                     // of the dimensions larger than 1
  std::vector<int> dimension_of;              // their index among the coordinates
  std::vector<int> rank_at;                   // by position, dimension 0 fastest
  std::vector<std::vector<int>> position_of;  // by rank: coordinates in `sizes`' dimensions

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
    long long box = 1;
    for (std::size_t i = 0; i < dimensions; ++i) {
      box *= extent[i];
      if ((extent[i] & (extent[i] - 1)) != 0) return std::nullopt;
      if (extent[i] > 1) {
        torus.sizes.push_back(extent[i]);
        torus.dimension_of.push_back(static_cast<int>(i));
      }
    }
    if (box != p || torus.sizes.empty()) return std::nullopt;
    torus.rank_at.assign(static_cast<std::size_t>(p), -1);
    for (int rank = 0; rank < p; ++rank) {
      const std::span<const int> where = transport.coordinates_of(rank);
      std::vector<int> position;
      for (const int i : torus.dimension_of) position.push_back(where[static_cast<std::size_t>(i)]);
      int& slot = torus.rank_at[static_cast<std::size_t>(torus.index(position))];
      if (slot >= 0) return std::nullopt;  // two ranks at one position
      slot = rank;
      torus.position_of.push_back(std::move(position));
    }
    return torus;
  }

  int index(const std::vector<int>& position) const {
    int at = 0;
    for (std::size_t i = sizes.size(); i-- > 0;) at = at * sizes[i] + position[i];
    return at;
  }
  // Sub-collective c's steps: (dimension among `sizes`, its Swing step).
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
  // The rank at `rank`'s position moved by Swing's step `step` along `d`.
  int peer(int rank, int d, int step) const {
    std::vector<int> position = position_of[static_cast<std::size_t>(rank)];
    int& x = position[static_cast<std::size_t>(d)];
    x = detail::swing_peer(x, step, sizes[static_cast<std::size_t>(d)]);
    return rank_at[static_cast<std::size_t>(index(position))];
  }
};

class SwingTorusAllreduce final : public detail::AllreduceBase {
 public:
  SwingTorusAllreduce(Transport& transport, const CollectiveSpec& spec,
                      std::span<const std::byte> in, std::span<std::byte> out, const Torus& torus,
                      bool halving)
      : AllreduceBase(transport, spec, in, out), halving_(halving) {
    staging_ = allocate_workspace(spec.count);
    const auto parts = static_cast<int>(torus.sizes.size());
    for (int c = 0; c < parts; ++c) {
      const detail::Block part = detail::partition(spec.count, parts, c);
      const std::vector<std::pair<int, int>> steps = torus.steps_of(c);
      Sub sub;
      if (!halving) {
        for (const auto& [d, step] : steps) {
          sub.steps.push_back({torus.peer(rank_, d, step), part, part});
        }
        sub.owned = part;
      } else {
        // Sub-collective c's peers of each step, by rank: the participants.
        const auto peer = [&torus, &steps](int v, int s) {
          const auto& [d, step] = steps[static_cast<std::size_t>(s)];
          return torus.peer(v, d, step);
        };
        const detail::SwingBlocks blocks(ranks_, static_cast<int>(steps.size()), peer);
        const auto blocks_from = [&](int first, int size) {
          const detail::Block range =
              detail::partition_range(part.count, ranks_, first, first + size);
          return detail::Block{part.offset + range.offset, range.count};
        };
        for (int s = 0; s < blocks.steps(); ++s) {
          const int partner = peer(rank_, s);
          const int size = 1 << (blocks.steps() - s - 1);
          sub.steps.push_back({partner, blocks_from(blocks.first(rank_, s + 1), size),
                               blocks_from(blocks.first(partner, s + 1), size)});
        }
        sub.owned = blocks_from(blocks.position(rank_), 1);
      }
      subs_.push_back(std::move(sub));
    }
    requests_.reserve(2 * subs_.size());
  }

  void run() override {
    const std::size_t steps = subs_.front().steps.size();
    // As the 1-D forms: the first step sends from in and receives straight
    // into out (into staging in place); later steps send from out.
    const std::byte* mine = in_;
    for (std::size_t s = 0; s < steps; ++s) {
      for (std::size_t c = 0; c < subs_.size(); ++c) {
        const detail::HalvingStep& step = subs_[c].steps[s];
        requests_.push_back(recv(received(mine, step.kept), step.kept.count, step.partner,
                                 tag(kExchange * kMostDimensions + static_cast<int>(c))));
        requests_.push_back(send(mine + bytes(step.given.offset), step.given.count, step.partner,
                                 tag(kExchange * kMostDimensions + static_cast<int>(c))));
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
    if (!halving_) return;  // every part is whole everywhere
    for (std::size_t s = steps; s-- > 0;) {
      for (std::size_t c = 0; c < subs_.size(); ++c) {
        const detail::HalvingStep& step = subs_[c].steps[s];
        requests_.push_back(recv(out_at(step.given.offset), step.given.count, step.partner,
                                 tag(kGather * kMostDimensions + static_cast<int>(c))));
        requests_.push_back(send(out_at(step.kept.offset), step.kept.count, step.partner,
                                 tag(kGather * kMostDimensions + static_cast<int>(c))));
      }
      wait_all(requests_);
    }
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

  const bool halving_;
  std::vector<Sub> subs_;
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
    "Swing's latency form on a torus: one Swing per dimension at once on a part each (the "
    "sim torus's coordinates); swing_latency elsewhere",
    detail::common_unsupported_reason,
    detail::flat_cost<detail::whole_vector_exchange_cost<detail::swing_peer>>,
    /*reduces_on_every_rank=*/true,
    detail::butterfly_workspace,
    build_swing_torus<false>,
    detail::whole_vector_exchange_cost<detail::swing_peer>,
};

extern const AlgorithmInfo kSwingBandwidthTorusAllreduce = {
    "swing_bandwidth_torus",
    "Swing's bandwidth form on a torus: one Swing per dimension at once on a part each (the "
    "sim torus's coordinates); swing_bandwidth elsewhere",
    detail::common_unsupported_reason,
    detail::flat_cost<detail::halving_doubling_cost<detail::swing_peer>>,
    /*reduces_on_every_rank=*/true,
    detail::butterfly_workspace,
    build_swing_torus<true>,
    detail::halving_doubling_cost<detail::swing_peer>,
};

}  // namespace collbench
