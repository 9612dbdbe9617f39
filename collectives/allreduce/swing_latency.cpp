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
// The code is butterfly.h's, with these peers.
#include "butterfly.h"

namespace collbench {

extern const AlgorithmInfo kSwingLatencyAllreduce = {
    "swing_latency",
    "Swing's latency-optimal form: lg p whole-vector exchanges with peers at ±ρ_s "
    "(nearer on a torus than recursive doubling's); 1-D, folds p to 2^⌊lg p⌋",
    detail::common_unsupported_reason,
    detail::flat_cost<detail::whole_vector_exchange_cost<detail::swing_peer>>,
    /*reduces_on_every_rank=*/true,  // every rank reduces at once
    detail::butterfly_workspace,
    detail::build_as<detail::WholeVectorExchangeAllreduce<detail::swing_peer>>,
    detail::whole_vector_exchange_cost<detail::swing_peer>,
};

}  // namespace collbench
