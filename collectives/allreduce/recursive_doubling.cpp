// recursive_doubling — pairwise exchange-and-reduce over lg p rounds.
//
//   Fold (only when p is not a power of two): with p' = 2^⌊lg p⌋ and
//     rem = p − p', each even rank below 2·rem sends its vector to the odd
//     rank above it, which reduces it, and sits out until the unfold.
//   Exchange, lg p' rounds: in round k each participant swaps its whole
//     vector with the participant whose number differs in bit k and reduces
//     (operands in rank order, so every rank computes the same bits).
//   Unfold: each odd rank below 2·rem sends the result to the rank it
//     absorbed.
// Out of place, the first round receives straight into out and reduces it
// there with in (out = in op out): the working set of a 2-rank call is then
// in and out only, as in the sendrecv and reduce benchmarks of its model,
// and the reduction writes lines it has just read instead of a third stream.
//
// Cost (p = 2^k): lg p·α + lg p·nβ + lg p·nγ — the fewest rounds of any
// algorithm, each moving the whole vector: for small messages. Otherwise the
// fold and unfold add 2α + 2nβ + nγ.
#include "phases.h"

namespace collbench {
namespace {

// This algorithm's tags: offsets in its slot (CollectiveBase::tag).
enum Tag : int { kFoldTag, kExchangeTag, kUnfoldTag };

class RecursiveDoublingAllreduce final : public detail::AllreduceBase {
 public:
  RecursiveDoublingAllreduce(Transport& transport, const CollectiveSpec& spec,
                             std::span<const std::byte> in, std::span<std::byte> out)
      : AllreduceBase(transport, spec, in, out), fold_(ranks_, rank_) {
    if (ranks_ > 1) staging_ = allocate_workspace(spec.count);
    if (!fold_.sits_out()) {
      for (int distance = 1; distance < fold_.pof2; distance <<= 1) {
        partners_.push_back(fold_.real_rank(fold_.new_rank ^ distance));
      }
    }
    requests_.reserve(2);
  }

  void run() override {
    const std::size_t count = spec_.count;
    if (detail::fold_in(*this, fold_, staging_, tag(kFoldTag), tag(kUnfoldTag))) return;
    // No copy of in to out: the first round sends from wherever the vector
    // is (in, unless fold_in reduced into out) and writes out = that op the
    // partner's.
    const std::byte* mine = rank_ < 2 * fold_.rem ? out_ : in_;
    for (int partner : partners_) {
      // out is free to receive into until the first reduction writes it.
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

CostTerms recursive_doubling_cost(const Layout& layout, double n) {
  const detail::Fold fold(layout.ranks(), 0);
  CostTerms terms;
  detail::add_fold_step(terms, layout, n);
  for (int distance = 1; distance < fold.pof2; distance <<= 1) {
    detail::add_participant_round(terms, layout, distance, n);
  }
  detail::add_unfold_step(terms, layout, n);
  terms.reduce_bytes = (floor_log2(layout.ranks()) + (fold.rem > 0 ? 1 : 0)) * n;
  return terms;
}

std::size_t recursive_doubling_workspace(int p, std::size_t n) { return p > 1 ? n : 0; }

}  // namespace

extern const AlgorithmInfo kRecursiveDoublingAllreduce = {
    "recursive_doubling",
    "lg p rounds of pairwise whole-vector exchange; fewest rounds, for small messages",
    detail::common_unsupported_reason,
    detail::flat_cost<recursive_doubling_cost>,
    /*reduces_on_every_rank=*/true,  // every rank reduces at once
    recursive_doubling_workspace,
    detail::build_as<RecursiveDoublingAllreduce>,
    recursive_doubling_cost,
};

}  // namespace collbench
