// The MPI library's own collectives: the `mpi` row of every collective's
// table (kMpiLibraryAlgorithm). Their rows live in the MPI-free layer
// (collectives/library.cpp) with what the fitter and the selection need of
// them — their model is the collective's lower bound, since the library's
// schedule is unknown —; only building one needs MPI. Those builds come from
// collbench::collectives_mpi (collectives/mpi/), which hands them to the
// table through set_library_build when a program calls
// use_mpi_library_collectives() (collbench/collectives/mpi_library.h;
// the harness does at start-up). A program without them (the
// fitter, a simulation) lists the rows and refuses to build them. The same
// build makes the `ompi_*` rows (collbench/collectives/ompi_tuned.h), with
// the library's algorithm forced.
#pragma once

#include <cstddef>
#include <memory>
#include <span>
#include <string_view>

#include "collbench/collectives/algorithm.h"
#include "collbench/collectives/ompi_tuned.h"

namespace collbench {

// `forced`: the library's algorithm to force, or nullptr for its own choice.
using LibraryBuild = std::unique_ptr<Collective> (*)(Transport& transport,
                                                     const CollectiveSpec& spec,
                                                     std::span<const std::byte> in,
                                                     std::span<std::byte> out,
                                                     const OmpiTunedAlgorithm* forced);

// Sets the build of `collective`'s `mpi` row. Throws std::invalid_argument for
// an unknown collective.
void set_library_build(std::string_view collective, LibraryBuild build);

// Builds `collective`'s library collective through the build set for it;
// throws std::invalid_argument naming what to link when none was set.
std::unique_ptr<Collective> build_library_collective(
    std::string_view collective, Transport& transport, const CollectiveSpec& spec,
    std::span<const std::byte> in, std::span<std::byte> out, const OmpiTunedAlgorithm* forced);

// Why the MPI library's collective cannot run here (not the mpi transport,
// more elements than an int counts); empty when it can.
std::string library_unsupported_reason(std::string_view transport_kind, int ranks,
                                       std::size_t count);
// Workspace of a library collective: unknown, the library's; n as a guess
// for the memory guard.
std::size_t library_workspace(int ranks, std::size_t bytes);

}  // namespace collbench
