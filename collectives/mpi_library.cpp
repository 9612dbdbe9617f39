// The MPI library's datatypes and operations for the `mpi` algorithms; see
// mpi_library.h.
#include "mpi_library.h"

#include <fmt/format.h>

#include <climits>
#include <stdexcept>

#include "algorithm_common.h"
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
  auto* mpi = dynamic_cast<MpiTransport*>(&transport);
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

std::string mpi_library_unsupported_reason(std::string_view transport_kind, int ranks,
                                           std::size_t count) {
  if (transport_kind != "mpi") {
    return fmt::format("needs the mpi transport (this run uses '{}')", transport_kind);
  }
  if (count > static_cast<std::size_t>(INT_MAX)) {
    return fmt::format("{} elements exceed MPI's int count", count);
  }
  return common_unsupported_reason(transport_kind, ranks, count);
}

}  // namespace collbench::detail
