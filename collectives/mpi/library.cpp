// The MPI library's datatypes and operations for the `mpi` algorithms; see
// library.h.
#include "mpi/library.h"

#include <fmt/format.h>

#include <climits>
#include <stdexcept>

#include "algorithm_common.h"
#include "collbench/collectives/library.h"
#include "collbench/collectives/mpi_library.h"
#include "collbench/core/reduce.h"
#include "collbench/transport/mpi_transport.h"

namespace collbench::detail {
namespace {

template <DType kType, ReduceOp kOp>
void user_reduce(void* in, void* inout, int* len, MPI_Datatype* /*type*/) {
  reduce_inplace(kType, kOp, inout, in, static_cast<std::size_t>(*len));
}

template <DType kType>
MPI_User_function* user_function(ReduceOp op) {
  switch (op) {
    case ReduceOp::sum:
    case ReduceOp::avg:
      return user_reduce<kType, ReduceOp::sum>;
    case ReduceOp::min:
      return user_reduce<kType, ReduceOp::min>;
    case ReduceOp::max:
      return user_reduce<kType, ReduceOp::max>;
  }
  return nullptr;
}

}  // namespace

MpiLibraryCall::MpiLibraryCall(Transport& transport, const CollectiveSpec& spec,
                               std::string_view collective) {
  auto* mpi = dynamic_cast<MpiTransport*>(&transport.unwrapped());
  if (mpi == nullptr) {
    throw std::invalid_argument(fmt::format("{} algorithm 'mpi' needs the mpi transport, not '{}'",
                                            collective, transport.kind()));
  }
  comm_ = mpi->comm();
  if (spec.count > static_cast<std::size_t>(INT_MAX)) {
    throw std::invalid_argument(fmt::format(
        "{} algorithm 'mpi': {} elements exceed MPI's int count", collective, spec.count));
  }
  switch (spec.dtype) {
    case DType::f32:
      datatype_ = MPI_FLOAT;
      break;
    case DType::f64:
      datatype_ = MPI_DOUBLE;
      break;
    case DType::f16:
    case DType::bf16:
      check_mpi(MPI_Type_contiguous(2, MPI_BYTE, &owned_type_), "MPI_Type_contiguous");
      check_mpi(MPI_Type_commit(&owned_type_), "MPI_Type_commit");
      datatype_ = owned_type_;
      break;
  }
  if (spec.dtype == DType::f16 || spec.dtype == DType::bf16) {
    MPI_User_function* function = spec.dtype == DType::f16 ? user_function<DType::f16>(spec.op)
                                                           : user_function<DType::bf16>(spec.op);
    check_mpi(MPI_Op_create(function, /*commute=*/1, &owned_op_), "MPI_Op_create");
    op_ = owned_op_;
  } else {
    op_ = spec.op == ReduceOp::min ? MPI_MIN : spec.op == ReduceOp::max ? MPI_MAX : MPI_SUM;
  }
}

MpiLibraryCall::~MpiLibraryCall() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (finalized) return;
  if (owned_op_ != MPI_OP_NULL) MPI_Op_free(&owned_op_);
  if (owned_type_ != MPI_DATATYPE_NULL) MPI_Type_free(&owned_type_);
}

}  // namespace collbench::detail

namespace collbench {

void use_mpi_library_collectives() {
  set_library_build("allreduce", detail::build_mpi_allreduce);
  set_library_build("reduce_scatter", detail::build_mpi_reduce_scatter);
  set_library_build("allgather", detail::build_mpi_allgather);
  set_library_build("broadcast", detail::build_mpi_broadcast);
  set_library_build("reduce", detail::build_mpi_reduce);
  set_library_build("alltoall", detail::build_mpi_alltoall);
  set_library_build("alltoallv", detail::build_mpi_alltoallv);
}

}  // namespace collbench
