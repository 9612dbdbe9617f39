// The MPI library's own collectives: the `mpi` row of every collective's
// table (kMpiLibraryAlgorithm). Their rows live in the MPI-free layer
// (collectives/library.cpp) with what the fitter and the selection need of
// them — their model is the collective's lower bound, since the library's
// schedule is unknown —; only building one needs MPI. Those builds come from
// collbench::collectives_mpi (collectives/mpi/), which hands them to the
// table through set_library_build when a program calls
// use_mpi_library_collectives() (collbench/collectives/mpi_library.h;
// the harness does at start-up). A program without them (the
// fitter, a simulation) lists the rows and refuses to build them.
#pragma once

#include <cstddef>
#include <memory>
#include <span>
#include <string_view>

#include "collbench/collectives/algorithm.h"

namespace collbench {

using LibraryBuild = std::unique_ptr<Collective> (*)(Transport& transport,
                                                     const CollectiveSpec& spec,
                                                     std::span<const std::byte> in,
                                                     std::span<std::byte> out);

// Sets the build of `collective`'s `mpi` row. Throws std::invalid_argument for
// an unknown collective.
void set_library_build(std::string_view collective, LibraryBuild build);

}  // namespace collbench
