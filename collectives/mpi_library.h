// What the `mpi` algorithms of every collective share: the MPI library's
// datatype and operation for a collbench dtype and op, and the transport's
// communicator. Internal to the library.
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
#include "collbench/transport/transport.h"

namespace collbench::detail {

class MpiLibraryCall {
 public:
  // Throws std::invalid_argument when `transport` is not the mpi transport
  // or `count` exceeds MPI's int counts. `collective` names the caller in
  // messages.
  MpiLibraryCall(Transport& transport, const CollectiveSpec& spec, std::string_view collective);
  ~MpiLibraryCall();
  MpiLibraryCall(const MpiLibraryCall&) = delete;
  MpiLibraryCall& operator=(const MpiLibraryCall&) = delete;

  MPI_Comm comm() const { return comm_; }
  MPI_Datatype datatype() const { return datatype_; }
  MPI_Op op() const { return op_; }

 private:
  MPI_Comm comm_ = MPI_COMM_NULL;
  MPI_Datatype datatype_ = MPI_DATATYPE_NULL;
  MPI_Datatype owned_type_ = MPI_DATATYPE_NULL;
  MPI_Op op_ = MPI_OP_NULL;
  MPI_Op owned_op_ = MPI_OP_NULL;
};

// Why the MPI library's own algorithm cannot run: not the mpi transport, or
// more elements than an int counts; empty when it can.
std::string mpi_library_unsupported_reason(std::string_view transport_kind, int ranks,
                                           std::size_t count);

// Workspace of the `mpi` algorithms: unknown, the library's; n as a guess
// for the memory guard.
inline std::size_t mpi_library_workspace(int /*ranks*/, std::size_t bytes) { return bytes; }

}  // namespace collbench::detail
