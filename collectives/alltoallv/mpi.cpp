// mpi — the MPI library's own MPI_Alltoallv, with every share's count and
// offset from collective.h's alltoallv layout: the vendor baseline of
// alltoallv (collectives/alltoall/mpi.cpp on alltoallv's shares). In place,
// the input is copied aside first (AlltoallBase): MPI's in-place alltoallv
// takes one set of counts for both directions, and a routed exchange has
// two. Counts and offsets must be MPI ints (a share of the returning
// direction sits at up to (p−1)·s_j, checked when built).
//
// No cost formula of its own: cost() is alltoall's lower bound,
// ⌈lg p⌉α + (p−1)/p·nβ, the uniform routing's (collective.h).
#include "algorithm_common.h"
#include "mpi_library.h"

namespace collbench {

extern const AlgorithmInfo kMpiAlltoallv = {
    "mpi",
    "the MPI library's own MPI_Alltoallv (vendor baseline; mpi transport only)",
    detail::mpi_library_unsupported_reason,
    [](int p, double n) { return find_collective("alltoallv")->lower_bound(p, n); },
    /*reduces_on_every_rank=*/false,  // nothing is reduced
    detail::mpi_library_workspace,
    detail::build_mpi_alltoallv,
};

}  // namespace collbench
