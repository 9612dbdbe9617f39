// Hands the MPI library's own collectives (collbench::collectives_mpi) to the
// table of collectives, so that every collective's `mpi` row can be built
// (collbench/collectives/library.h). Needs no <mpi.h>: a program that calls it
// links collbench::collectives_mpi, and MPI with it.
#pragma once

namespace collbench {

// Idempotent; the harness and the MPI tests call it once MPI is initialized.
void use_mpi_library_collectives();

// After MPI_Init: MPICH's algorithm variables set at launch to force an
// mpich_* row (collbench/collectives/mpich_tuned.h) are read and set back to
// the library's own choice, so that they apply only to that row's calls and
// not to the program's other collectives. Idempotent; nothing under another
// library.
void hold_mpich_forced_algorithms();

}  // namespace collbench
