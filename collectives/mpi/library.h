// What the `mpi` algorithms of every collective share: the MPI library's
// datatype and operation for a collbench dtype and op, and the transport's
// communicator. Internal to collbench::collectives_mpi, the only algorithms
// that need MPI; their rows in the table are collectives/library.cpp's.
//
// f32 and f64 map to MPI_FLOAT/MPI_DOUBLE with the built-in operations. MPI
// has no 16-bit float type before MPI 4.1, so f16 and bf16 travel as a
// 2-byte contiguous type with user-defined operations that call collbench's
// own kernels (commutative, so the library may reorder). avg is MPI_SUM
// followed by the division, like the hand-written algorithms.
#pragma once

#include <mpi.h>

#include <cstddef>
#include <string>
#include <string_view>

#include "collbench/collectives/algorithm.h"
#include "collbench/collectives/mpich_tuned.h"
#include "collbench/collectives/ompi_tuned.h"
#include "collbench/transport/transport.h"

namespace collbench::detail {

class MpiLibraryCall {
 public:
  // Throws std::invalid_argument when `transport` is not the mpi transport
  // or `count` exceeds MPI's int counts. `collective` names the caller in
  // messages. With `forced`, the calls run on a communicator of their own
  // on which the library's algorithm is forced (forced_communicator); it
  // must then be one of `collective`'s (ompi_tuned.h), or for an MPICH row
  // (mpich_tuned.h) the same communicator, the algorithm forced around each
  // call by ForcedScope.
  MpiLibraryCall(Transport& transport, const CollectiveSpec& spec, std::string_view collective,
                 const OmpiTunedAlgorithm* forced);
  ~MpiLibraryCall();
  MpiLibraryCall(const MpiLibraryCall&) = delete;
  MpiLibraryCall& operator=(const MpiLibraryCall&) = delete;

  // Held around the library call of run(): an MPICH row's algorithm is
  // forced while it lives, the library's own choice before and after (so the
  // harness's collectives between calls are not forced); nothing otherwise.
  class ForcedScope {
   public:
    explicit ForcedScope(const MpiLibraryCall& call);
    ~ForcedScope();
    ForcedScope(const ForcedScope&) = delete;
    ForcedScope& operator=(const ForcedScope&) = delete;

   private:
    const MpiLibraryCall& call_;
  };

  MPI_Comm comm() const { return comm_; }
  MPI_Datatype datatype() const { return datatype_; }
  MPI_Op op() const { return op_; }

 private:
  MPI_Comm comm_ = MPI_COMM_NULL;
  MPI_Comm owned_comm_ = MPI_COMM_NULL;
  MPI_Datatype datatype_ = MPI_DATATYPE_NULL;
  MPI_Datatype owned_type_ = MPI_DATATYPE_NULL;
  MPI_Op op_ = MPI_OP_NULL;
  MPI_Op owned_op_ = MPI_OP_NULL;
  // An MPICH row's: the variable's value that forces it, -1 for none.
  int mpich_forced_ = -1;
  const MpichCollective* mpich_collective_ = nullptr;
};

// Each collective's `mpi` build (collectives/mpi/<collective>.cpp; alltoallv's
// is alltoall's, on alltoallv's shares), handed to the MPI-free table by
// use_mpi_library_collectives().
std::unique_ptr<Collective> build_mpi_allreduce(Transport& transport, const CollectiveSpec& spec,
                                                std::span<const std::byte> in,
                                                std::span<std::byte> out,
                                                const OmpiTunedAlgorithm* forced);
std::unique_ptr<Collective> build_mpi_reduce_scatter(Transport& transport,
                                                     const CollectiveSpec& spec,
                                                     std::span<const std::byte> in,
                                                     std::span<std::byte> out,
                                                     const OmpiTunedAlgorithm* forced);
std::unique_ptr<Collective> build_mpi_allgather(Transport& transport, const CollectiveSpec& spec,
                                                std::span<const std::byte> in,
                                                std::span<std::byte> out,
                                                const OmpiTunedAlgorithm* forced);
std::unique_ptr<Collective> build_mpi_broadcast(Transport& transport, const CollectiveSpec& spec,
                                                std::span<const std::byte> in,
                                                std::span<std::byte> out,
                                                const OmpiTunedAlgorithm* forced);
std::unique_ptr<Collective> build_mpi_reduce(Transport& transport, const CollectiveSpec& spec,
                                             std::span<const std::byte> in,
                                             std::span<std::byte> out,
                                             const OmpiTunedAlgorithm* forced);
std::unique_ptr<Collective> build_mpi_alltoall(Transport& transport, const CollectiveSpec& spec,
                                               std::span<const std::byte> in,
                                               std::span<std::byte> out,
                                               const OmpiTunedAlgorithm* forced);
std::unique_ptr<Collective> build_mpi_alltoallv(Transport& transport, const CollectiveSpec& spec,
                                                std::span<const std::byte> in,
                                                std::span<std::byte> out,
                                                const OmpiTunedAlgorithm* forced);

// Why this process's library cannot force `algorithm` (ompi_tuned.h's
// OmpiTunedProbe): it has no coll_tuned_<library>_algorithm, or none of that
// id and name; unless `offered_only`, also coll_tuned_use_dynamic_rules not
// set at launch. Empty when it can.
std::string ompi_tuned_probe(const OmpiTunedCollective& collective,
                             const OmpiTunedAlgorithm& algorithm, bool offered_only);

// Why this process's library cannot force MPICH's `algorithm`: it has no
// MPIR_CVAR_<COLL>_INTRA_ALGORITHM; unless `offered_only`, also that the
// launch did not set it to this algorithm. Empty when it can.
std::string mpich_tuned_probe(const MpichCollective& collective,
                              const OmpiTunedAlgorithm& algorithm, bool offered_only);
// The variable's value that forces `algorithm`; throws std::invalid_argument
// with mpich_tuned_probe's reason when the library cannot.
int mpich_forced_value(const MpichCollective& collective, const OmpiTunedAlgorithm& algorithm);
void hold_mpich_forced_algorithms();

// A duplicate of `base` on which `collective` runs `algorithm`: the control
// variable written through MPI_T, the communicator duplicated, the old value
// written back. Collective over `base`. Throws std::invalid_argument with
// ompi_tuned_probe's reason when the library cannot.
MPI_Comm forced_communicator(MPI_Comm base, const OmpiTunedCollective& collective,
                             const OmpiTunedAlgorithm& algorithm);

}  // namespace collbench::detail
