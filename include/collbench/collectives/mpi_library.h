// Hands the MPI library's own collectives (collbench::collectives_mpi) to the
// table of collectives, so that every collective's `mpi` row can be built
// (collbench/collectives/library.h). Needs no <mpi.h>: a program that calls it
// links collbench::collectives_mpi, and MPI with it.
#pragma once

namespace collbench {

// Idempotent; the harness and the MPI tests call it once MPI is initialized.
void use_mpi_library_collectives();

}  // namespace collbench
