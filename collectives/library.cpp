// mpi — the MPI library's own collective, the vendor baseline every
// hand-written algorithm is compared with: MPI_Allreduce,
// MPI_Reduce_scatter_block, MPI_Allgather, MPI_Bcast and MPI_Reduce from rank
// 0, MPI_Alltoall and MPI_Alltoallv (every share's count and offset from
// collective.h's alltoallv layout; in place, the input is copied aside first,
// since MPI's in-place alltoallv takes one set of counts for both directions
// and a routed exchange has two). Which algorithm the library picks (Open MPI's
// tuned/han components decide by size and p) is its business; each is one call
// on the transport's duplicated communicator (collectives/mpi/).
//
// No cost formula of its own: cost() is the collective's lower bound
// (collective.h), so that fits and predictions show how close the library
// gets. These rows need no MPI; their builds do (library.h).
#include "collbench/collectives/library.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <climits>
#include <stdexcept>
#include <vector>

#include "algorithm_common.h"
#include "collbench/collectives/collective.h"

namespace collbench {
namespace {

// A slot per collective of the table (collectives(), whose every
// collective has an `mpi` row), by its place there: its build once
// collectives_mpi handed it over.
std::vector<LibraryBuild>& library_builds() {
  static std::vector<LibraryBuild> builds(collectives().size());
  return builds;
}

std::size_t library_slot(std::string_view collective) {
  const CollectiveInfo* info = find_collective(collective);
  if (info == nullptr) {
    throw std::invalid_argument(fmt::format("no MPI library collective '{}'; accepted: {}",
                                            collective, collective_names()));
  }
  return static_cast<std::size_t>(info - collectives().data());
}

template <std::size_t kSlot>
std::unique_ptr<Collective> build_library(Transport& transport, const CollectiveSpec& spec,
                                          std::span<const std::byte> in, std::span<std::byte> out) {
  return build_library_collective(collectives()[kSlot].name, transport, spec, in, out, nullptr);
}

template <std::size_t kSlot>
CostTerms library_cost(int p, double n) {
  return collectives()[kSlot].lower_bound(p, n);
}

template <std::size_t kSlot>
constexpr AlgorithmInfo library_row(std::string_view summary, bool reduces) {
  return {kMpiLibraryAlgorithm, summary, library_unsupported_reason,
          library_cost<kSlot>,  reduces, library_workspace,
          build_library<kSlot>};
}

}  // namespace

// What the fitter and the predictor ask too: whether a program links the
// library's builds is build_library_collective's concern.
std::string library_unsupported_reason(std::string_view transport_kind, int ranks,
                                       std::size_t count) {
  if (transport_kind != "mpi") {
    return fmt::format("needs the mpi transport (this run uses '{}')", transport_kind);
  }
  if (count > static_cast<std::size_t>(INT_MAX)) {
    return fmt::format("{} elements exceed MPI's int count", count);
  }
  return detail::common_unsupported_reason(transport_kind, ranks, count);
}

std::size_t library_workspace(int /*ranks*/, std::size_t bytes) { return bytes; }

void set_library_build(std::string_view collective, LibraryBuild build) {
  library_builds()[library_slot(collective)] = build;
}

std::unique_ptr<Collective> build_library_collective(
    std::string_view collective, Transport& transport, const CollectiveSpec& spec,
    std::span<const std::byte> in, std::span<std::byte> out, const OmpiTunedAlgorithm* forced) {
  const LibraryBuild build = library_builds()[library_slot(collective)];
  if (build == nullptr) {
    throw std::invalid_argument(fmt::format(
        "{} algorithm '{}': this program was built without the MPI library's collectives "
        "(link collbench::collectives_mpi and call use_mpi_library_collectives())",
        collective, forced != nullptr ? forced->row : kMpiLibraryAlgorithm));
  }
  return build(transport, spec, in, out, forced);
}

// reduces_on_every_rank is unknown where the library reduces (it decides) and
// false where nothing is reduced. library_row's slot is the collective's
// place in the table (registry.cpp).
extern const AlgorithmInfo kMpiAllreduce = library_row<0>(
    "the MPI library's own MPI_Allreduce (vendor baseline; mpi transport only)", false);
extern const AlgorithmInfo kMpiReduceScatter = library_row<1>(
    "the MPI library's own MPI_Reduce_scatter_block (vendor baseline; mpi transport only)", false);
extern const AlgorithmInfo kMpiAllgather = library_row<2>(
    "the MPI library's own MPI_Allgather (vendor baseline; mpi transport only)", false);
extern const AlgorithmInfo kMpiBroadcast = library_row<3>(
    "the MPI library's own MPI_Bcast from rank 0 (vendor baseline; mpi transport only)", false);
extern const AlgorithmInfo kMpiReduce = library_row<4>(
    "the MPI library's own MPI_Reduce to rank 0 (vendor baseline; mpi transport only)", false);
extern const AlgorithmInfo kMpiAlltoall = library_row<5>(
    "the MPI library's own MPI_Alltoall (vendor baseline; mpi transport only)", false);
extern const AlgorithmInfo kMpiAlltoallv = library_row<6>(
    "the MPI library's own MPI_Alltoallv (vendor baseline; mpi transport only)", false);

}  // namespace collbench
