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
// The code is butterfly.h's, with these peers.
//
// Cost (p = 2^k): lg p·α + lg p·nβ + lg p·nγ — the fewest rounds of any
// algorithm, each moving the whole vector: for small messages. Otherwise the
// fold and unfold add 2α + 2nβ + nγ.
#include "butterfly.h"

namespace collbench {

extern const AlgorithmInfo kRecursiveDoublingAllreduce = {
    "recursive_doubling",
    "lg p rounds of pairwise whole-vector exchange; fewest rounds, for small messages",
    detail::common_unsupported_reason,
    detail::flat_cost<detail::whole_vector_exchange_cost<detail::butterfly_peer>>,
    /*reduces_on_every_rank=*/true,  // every rank reduces at once
    detail::butterfly_workspace,
    detail::build_as<detail::WholeVectorExchangeAllreduce<detail::butterfly_peer>>,
    detail::whole_vector_exchange_cost<detail::butterfly_peer>,
};

}  // namespace collbench
