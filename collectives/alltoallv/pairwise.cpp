// pairwise — alltoallv by pairwise exchange (Open MPI's
// ompi_coll_base_alltoallv_intra_pairwise: alltoall's pairwise exchange on
// alltoallv's shares), for any p and any routing (collective.h).
//
// p−1 steps: in step d = 1, ..., p−1 rank r sends rank r+d its block and
// receives rank r−d's (mod p), then waits for both. The own share is copied
// from in to out. A step lasts as long as its largest block: dispatching,
// rank j receives share s_j from every rank, so every step in which rank 0
// (the most popular experts) takes part moves s_0, and every step has it.
//
// Cost (p ranks, n bytes, uniform routing): (p−1)α + (p−1)/p·nβ, every
// byte across the network once, as alltoall's pairwise. Skewed, the hot
// rank's port carries (p−1)·s_0 bytes in p−1 steps: (p−1)α + (p−1)·s_0·β,
// the lower bound's β for that routing, which cost() cannot see (it knows
// only the size) and the measurement shows.
#include "algorithm_common.h"

namespace collbench {

extern const AlgorithmInfo kPairwiseAlltoallv = {
    "pairwise",
    "p−1 steps, each exchanging one share with the ranks d ahead and d behind; each step as "
    "long as its largest share",
    detail::common_unsupported_reason,
    // Alltoall's pairwise, priced at the uniform routing.
    detail::flat_cost<detail::pairwise_exchange_cost>,
    /*reduces_on_every_rank=*/false,  // nothing is reduced
    detail::no_workspace,             // out of place (in place: its input, AlltoallBase)
    [](Transport& transport, const CollectiveSpec& spec, std::span<const std::byte> in,
       std::span<std::byte> out) {
      return detail::build_pairwise_exchange(transport, spec, in, out, detail::kAlltoallvLayout);
    },
    detail::pairwise_exchange_cost,
};

}  // namespace collbench
