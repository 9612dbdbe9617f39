// swing_latency — Swing's latency-optimal allreduce (De Sensi, Bonato, Saam
// & Hoefler, NSDI'24): recursive doubling with Swing's peers (phases.h).
//
//   Fold (p not a power of two): as in recursive_doubling, the first 2·rem
//     ranks pair up and the even ones sit out, leaving p' = 2^⌊lg p⌋
//     participants (the paper's implementation shrinks each torus dimension
//     to its power of two the same way).
//   Exchange, lg p' steps: in step s each participant swaps its whole vector
//     with its Swing peer (participant v ± ρ_s mod p', + for even v) and
//     reduces (operands in rank order, so both compute the same bits).
//   Unfold: each odd rank below 2·rem sends the result to the rank it
//     absorbed.
//
// Cost (p = 2^k): lg p·α + lg p·nβ + lg p·nγ — recursive doubling's on a
// flat network; on a torus its peers are |ρ_s| ≤ (2^(s+1)+1)/3 hops away
// instead of 2^s, which the α-β model cannot see (placed: where the peers sit
// on nodes). Otherwise the fold and unfold add 2α + 2nβ + nγ.
#include "phases.h"

namespace collbench {
namespace {

// This algorithm's tags: offsets in its slot (CollectiveBase::tag).
enum Tag : int { kFoldTag, kExchangeTag, kUnfoldTag };

class SwingLatencyAllreduce final : public detail::AllreduceBase {
 public:
  SwingLatencyAllreduce(Transport& transport, const CollectiveSpec& spec,
                        std::span<const std::byte> in, std::span<std::byte> out)
      : AllreduceBase(transport, spec, in, out), fold_(ranks_, rank_) {
    if (ranks_ > 1) staging_ = allocate_workspace(spec.count);
    if (!fold_.sits_out()) {
      for (int step = 0; (1 << step) < fold_.pof2; ++step) {
        partners_.push_back(fold_.real_rank(detail::swing_peer(fold_.new_rank, step, fold_.pof2)));
      }
    }
    requests_.reserve(2);
  }

  void run() override {
    const std::size_t count = spec_.count;
    if (detail::fold_in(*this, fold_, staging_, tag(kFoldTag), tag(kUnfoldTag))) return;
    // As recursive_doubling: the first step sends from wherever the vector
    // is and writes out = that op the peer's.
    const std::byte* mine = rank_ < 2 * fold_.rem ? out_ : in_;
    for (const int partner : partners_) {
      std::byte* received = mine == out_ ? staging_ : out_;
      requests_.push_back(recv(received, count, partner, tag(kExchangeTag)));
      requests_.push_back(send(mine, count, partner, tag(kExchangeTag)));
      wait_all(requests_);
      reduce_pairwise_from(partner, out_, mine, received, count);
      mine = out_;
    }
    if (mine != out_) copy_input_to_output();  // one rank: nothing to reduce
    finish_average({0, count});
    detail::unfold_out(*this, fold_, tag(kUnfoldTag));
  }

 private:
  detail::Fold fold_;
  std::vector<int> partners_;
  std::byte* staging_ = nullptr;
  std::vector<RequestId> requests_;
};

CostTerms swing_latency_cost(const Layout& layout, double n) {
  const detail::Fold fold(layout.ranks(), 0);
  CostTerms terms;
  detail::add_fold_step(terms, layout, n);
  for (int step = 0; (1 << step) < fold.pof2; ++step) {
    detail::add_swing_round(terms, layout, step, n);
  }
  detail::add_unfold_step(terms, layout, n);
  terms.reduce_bytes = (floor_log2(layout.ranks()) + (fold.rem > 0 ? 1 : 0)) * n;
  return terms;
}

std::size_t swing_latency_workspace(int p, std::size_t n) { return p > 1 ? n : 0; }

}  // namespace

extern const AlgorithmInfo kSwingLatencyAllreduce = {
    "swing_latency",
    "Swing's latency-optimal form: lg p whole-vector exchanges with peers at ±ρ_s "
    "(nearer on a torus than recursive doubling's); 1-D, folds p to 2^⌊lg p⌋",
    detail::common_unsupported_reason,
    detail::flat_cost<swing_latency_cost>,
    /*reduces_on_every_rank=*/true,  // every rank reduces at once
    swing_latency_workspace,
    detail::build_as<SwingLatencyAllreduce>,
    swing_latency_cost,
};

}  // namespace collbench
