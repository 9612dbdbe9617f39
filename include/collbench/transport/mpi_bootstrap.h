// The bootstrap of a job launched by mpirun: the ranks of an MPI
// communicator, and MPI_Allgather(v) as the exchange. The only header that
// brings <mpi.h> in for a Bootstrap, so that bootstrap.h and the transports
// built on it stay free of MPI.
#pragma once

#include <mpi.h>

#include <memory>

#include "collbench/transport/bootstrap.h"

namespace collbench {

// Ranks and size are those of `comm`, which must stay valid while the
// bootstrap is used; MPI must be initialized.
std::unique_ptr<Bootstrap> make_mpi_bootstrap(MPI_Comm comm);

}  // namespace collbench
