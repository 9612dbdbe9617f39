// MPICH's collective algorithms as collbench rows: `mpich_<name>` in each
// collective's table, the library's own collective with one of its
// algorithms forced, the counterpart of Open MPI's ompi_* rows
// (collbench/collectives/ompi_tuned.h), for collbench-fit --export mpich-json
// (collbench/models/tuning.h).
//
// One table (mpich_tuned.cpp) holds, per collective, MPICH's name for it
// (its control variable is MPIR_CVAR_<LIBRARY>_INTRA_ALGORITHM, its key in a
// selection file collective=<library>), how the selection file measures a
// call's size, and the names MPICH 4.0 accepts for the variable. The library
// itself is the check: a row runs only where the library has the variable.
//
// Forcing (collectives/mpi/): MPICH reads the variable from the environment
// at MPI_Init only, with no per-communicator choice, so a run forces one
// algorithm per collective and launch: MPIR_CVAR_<LIBRARY>_INTRA_ALGORITHM
// set to the row's name in every rank's environment. The variable is global
// and read at every call, which would force the harness's own collectives
// too (MPI_Allreduce of the timings, MPI_Bcast of the plan, barriers): so at
// the first forced row the launch value is read through MPI_T and the
// variable set back to auto (0), and each forced call writes the launch value
// just before the library call and auto right after. Only the measured call
// runs the forced algorithm.
#pragma once

#include <span>
#include <string>
#include <string_view>

#include "collbench/collectives/ompi_tuned.h"

namespace collbench {

struct MpichCollective {
  std::string_view collective;  // collbench's
  // MPICH's, lower case: MPIR_CVAR_<LIBRARY>_INTRA_ALGORITHM upper-cased,
  // collective=<library> in a selection file.
  std::string_view library;
  // Its functions' infix in a selection file: MPIR_<json_name>_intra_<name>.
  std::string_view json_name;
  // MPI_Reduce_scatter_block, MPI_Allgather, MPI_Alltoall: collbench makes
  // the equal-block call only when p divides the count.
  bool needs_equal_blocks;
  // How the selection file measures a call: avg_msg_size is one rank's block
  // (collbench's bytes / p) for allgather and alltoall, the whole vector for
  // the others; reduce_scatter_block's default file uses total_msg_size, the
  // whole vector.
  bool size_per_rank;
  bool total_msg_size;
  // Rows: name "mpich_<MPICH's name>", id its place in this list from 1.
  std::span<const OmpiTunedAlgorithm> algorithms;
};

inline constexpr std::string_view kMpichRowPrefix = "mpich_";

std::span<const MpichCollective> mpich_tuned_collectives();
// nullptr when collbench's `collective` has no rows of MPICH's.
const MpichCollective* find_mpich_tuned(std::string_view collective);
// nullptr when `row` is not one of `collective`'s.
const OmpiTunedAlgorithm* find_mpich_tuned_algorithm(const MpichCollective& collective,
                                                     std::string_view row);
// MPIR_CVAR_<LIBRARY>_INTRA_ALGORITHM.
std::string mpich_algorithm_variable(const MpichCollective& collective);
// MPICH's name of a row: the row's without "mpich_".
std::string_view mpich_algorithm_name(const OmpiTunedAlgorithm& algorithm);

// What collectives_mpi tells about the library of this process (as
// OmpiTunedProbe): with `offered_only`, why it does not have the algorithm;
// else also why it is not forced in this launch.
using MpichTunedProbe = std::string (*)(const MpichCollective& collective,
                                        const OmpiTunedAlgorithm& algorithm, bool offered_only);
void set_mpich_tuned_probe(MpichTunedProbe probe);

// Why the library of this process does not offer `collective`'s row `row`;
// empty when it does, when `row` is not an MPICH row, or when no probe was set.
std::string mpich_tuned_missing(std::string_view collective, std::string_view row);

}  // namespace collbench
