// The butterfly allreduces: pairwise exchanges among the 2^⌊lg p⌋
// participants of a Fold (phases.h), in lg p' steps, each with the peer a
// StepPeer names — recursive doubling's (v XOR 2^s) or Swing's (v ± ρ_s).
// Two shapes, each written once here and named by its algorithms' files:
//
//   WholeVectorExchangeAllreduce (recursive_doubling, swing_latency): every
//     step swaps the whole vector with the peer and reduces it.
//   HalvingDoublingAllreduce (rabenseifner, swing_bandwidth): a reduce-scatter
//     in which every step gives the peer the blocks it will go on to reduce
//     and reduces the peer's copy of the blocks kept, then an allgather of
//     the steps in reverse. Which blocks a step keeps is the algorithm's
//     schedule.
//
// The peer function changes where the peers sit (hops on a torus), never the
// α-β-γ terms on a flat network; the algorithms' files give phases and cost.
#pragma once

#include <fmt/format.h>

#include <algorithm>
#include <cstddef>
#include <functional>
#include <span>
#include <stdexcept>
#include <vector>

#include "phases.h"

namespace collbench::detail {

// The butterflies' tags: offsets in the algorithm's slot (CollectiveBase::tag).
enum ButterflyTag : int {
  kButterflyFoldTag,
  kButterflyReduceTag,  // the exchange, or the reduce-scatter
  kButterflyGatherTag,  // the halving-doubling's allgather
  kButterflyUnfoldTag,
};

inline std::size_t butterfly_workspace(int ranks, std::size_t count) {
  return ranks > 1 ? count : 0;
}

template <StepPeer kPeer>
class WholeVectorExchangeAllreduce final : public AllreduceBase {
 public:
  WholeVectorExchangeAllreduce(Transport& transport, const CollectiveSpec& spec,
                               std::span<const std::byte> in, std::span<std::byte> out)
      : AllreduceBase(transport, spec, in, out), fold_(ranks_, rank_) {
    if (ranks_ > 1) staging_ = allocate_workspace(spec.count);
    if (!fold_.sits_out()) {
      for (int step = 0; (1 << step) < fold_.pof2; ++step) {
        partners_.push_back(fold_.real_rank(kPeer(fold_.new_rank, step, fold_.pof2)));
      }
    }
    requests_.reserve(2);
  }

  void run() override {
    const std::size_t count = spec_.count;
    if (fold_in(*this, fold_, staging_, tag(kButterflyFoldTag), tag(kButterflyUnfoldTag))) return;
    // No copy of in to out: the first step sends from wherever the vector
    // is (in, unless fold_in reduced into out) and receives straight into
    // out, reducing it there (out = in op out), so that a 2-rank call's
    // working set is in and out only, as in the sendrecv and reduce
    // benchmarks of its model, and the reduction writes lines it has just
    // read instead of a third stream.
    const std::byte* mine = rank_ < 2 * fold_.rem ? out_ : in_;
    for (const int partner : partners_) {
      // out is free to receive into until the first reduction writes it.
      std::byte* received = mine == out_ ? staging_ : out_;
      requests_.push_back(recv(received, count, partner, tag(kButterflyReduceTag)));
      requests_.push_back(send(mine, count, partner, tag(kButterflyReduceTag)));
      wait_all(requests_);
      reduce_pairwise_from(partner, out_, mine, received, count);
      mine = out_;
    }
    if (mine != out_) copy_input_to_output();  // one rank: nothing to reduce
    finish_average({0, count});
    unfold_out(*this, fold_, tag(kButterflyUnfoldTag));
  }

 private:
  Fold fold_;
  std::vector<int> partners_;
  std::byte* staging_ = nullptr;
  std::vector<RequestId> requests_;
};

// Whole-vector exchange: lg p' steps of n each, and the fold's.
template <StepPeer kPeer>
CostTerms whole_vector_exchange_cost(const Layout& layout, double n) {
  const Fold fold(layout.ranks(), 0);
  CostTerms terms;
  add_fold_step(terms, layout, n);
  for (int step = 0; (1 << step) < fold.pof2; ++step) {
    add_peer_round(terms, layout, kPeer, step, n);
  }
  add_unfold_step(terms, layout, n);
  terms.reduce_bytes = (floor_log2(layout.ranks()) + (fold.rem > 0 ? 1 : 0)) * n;
  return terms;
}

// One step of a halving-doubling schedule, as one participant runs it.
struct HalvingStep {
  int partner = -1;  // a real rank
  Block kept;        // reduced here in the reduce-scatter, sent in the allgather
  Block given;       // sent in the reduce-scatter, received in the allgather
};
struct HalvingSchedule {
  std::vector<HalvingStep> steps;
  Block owned;  // fully reduced here after the reduce-scatter
};
// A participant's schedule for a vector of `count` elements. It depends only
// on (rank, p, count), so it is built with the algorithm, not in the call.
using HalvingScheduleBuilder = HalvingSchedule (*)(const Fold& fold, std::size_t count);

// Elements of blocks [first, last) of the `parts`-way partition of `count`.
inline Block partition_range(std::size_t count, int parts, int first, int last) {
  const std::size_t begin = partition(count, parts, first).offset;
  const std::size_t end = last == parts ? count : partition(count, parts, last).offset;
  return {begin, end - begin};
}

template <HalvingScheduleBuilder kSchedule>
class HalvingDoublingAllreduce final : public AllreduceBase {
 public:
  HalvingDoublingAllreduce(Transport& transport, const CollectiveSpec& spec,
                           std::span<const std::byte> in, std::span<std::byte> out)
      : AllreduceBase(transport, spec, in, out), fold_(ranks_, rank_) {
    if (ranks_ > 1) staging_ = allocate_workspace(spec.count);
    if (fold_.sits_out()) return;
    schedule_ = kSchedule(fold_, spec.count);
    requests_.reserve(2);
  }

  void run() override {
    if (fold_in(*this, fold_, staging_, tag(kButterflyFoldTag), tag(kButterflyUnfoldTag))) return;
    // No copy of in to out: step 0 sends its share from wherever the vector
    // is (in, unless fold_in reduced into out) and receives the peer's copy
    // of the kept blocks straight into out, reducing them there (out is
    // unwritten until then; the working set stays in and out, as in the
    // sendrecv and reduce benchmarks of the model). Later steps, and
    // in-place calls, receive into staging; the allgather fills the rest of
    // out.
    const std::byte* mine = rank_ < 2 * fold_.rem ? out_ : in_;
    for (const HalvingStep& step : schedule_.steps) {
      std::byte* received = mine == out_ ? staging_ : out_at(step.kept.offset);
      requests_.push_back(recv(received, step.kept.count, step.partner, tag(kButterflyReduceTag)));
      requests_.push_back(send(mine + bytes(step.given.offset), step.given.count, step.partner,
                               tag(kButterflyReduceTag)));
      wait_all(requests_);
      reduce_pairwise_from(step.partner, out_at(step.kept.offset), mine + bytes(step.kept.offset),
                           received, step.kept.count);
      mine = out_;
    }
    if (mine != out_) copy_input_to_output();  // one rank: nothing to reduce
    finish_average(schedule_.owned);
    for (auto step = schedule_.steps.rbegin(); step != schedule_.steps.rend(); ++step) {
      requests_.push_back(recv(out_at(step->given.offset), step->given.count, step->partner,
                               tag(kButterflyGatherTag)));
      requests_.push_back(send(out_at(step->kept.offset), step->kept.count, step->partner,
                               tag(kButterflyGatherTag)));
      wait_all(requests_);
    }
    unfold_out(*this, fold_, tag(kButterflyUnfoldTag));
  }

 private:
  Fold fold_;
  HalvingSchedule schedule_;
  std::byte* staging_ = nullptr;
  std::vector<RequestId> requests_;
};

// Swing's bandwidth form's block order (swing_bandwidth.cpp's header
// comment): T(v, s), the participants v hears from in steps s..k−1 through
// `peer`, laid out in the depth-first order of these sets from participant
// 0, which makes each one contiguous (checked: std::logic_error otherwise).
class SwingBlocks {
 public:
  using Peer = std::function<int(int participant, int step)>;
  SwingBlocks(int participants, int steps, Peer peer)
      : participants_(participants), steps_(steps), peer_(std::move(peer)) {
    std::vector<int> order;
    members(0, 0, order);
    position_.assign(static_cast<std::size_t>(participants), -1);
    for (std::size_t i = 0; i < order.size(); ++i) {
      int& position = position_.at(static_cast<std::size_t>(order[i]));
      if (position >= 0) {
        throw std::logic_error(
            fmt::format("Swing: participant {} is reached twice among {}", order[i], participants));
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
      throw std::logic_error(fmt::format(
          "Swing: the blocks of T({}, {}) among {} are not contiguous", v, step, participants_));
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
    members(peer_(v, step), step + 1, out);
  }

  int participants_;
  int steps_;
  Peer peer_;
  std::vector<int> position_;
};

// Halving-doubling: step s gives away half of a window of n/2^s, in the
// reduce-scatter and again (received) in the allgather; the fold's around.
template <StepPeer kPeer>
CostTerms halving_doubling_cost(const Layout& layout, double n) {
  const Fold fold(layout.ranks(), 0);
  const int steps = floor_log2(fold.pof2);
  CostTerms terms;
  add_fold_step(terms, layout, n);
  for (int step = 0; step < steps; ++step) {
    add_peer_round(terms, layout, kPeer, step, n / (2 << step));
  }
  for (int step = steps - 1; step >= 0; --step) {
    add_peer_round(terms, layout, kPeer, step, n / (2 << step));
  }
  add_unfold_step(terms, layout, n);
  const double share = static_cast<double>(fold.pof2 - 1) / fold.pof2;
  terms.reduce_bytes = share * n + (fold.rem > 0 ? n : 0);
  return terms;
}

}  // namespace collbench::detail
