// mpi — the MPI library's own MPI_Allreduce: the vendor baseline that every
// hand-written algorithm is compared with. Which algorithm the library picks
// (OpenMPI's tuned/han components decide by size and p) is its business;
// here it is one call on the transport's duplicated communicator.
//
// f32 and f64 map to MPI_FLOAT/MPI_DOUBLE with the built-in operations. MPI
// has no 16-bit float type before MPI 4.1, so f16 and bf16 travel as a
// 2-byte contiguous type with user-defined operations that call collbench's
// own kernels (commutative, so the library may reorder). avg is MPI_SUM
// followed by the division, like the hand-written algorithms.
//
// No cost formula of its own: the library's choice is unknown. cost() returns
// the lower bound for any allreduce, ⌈lg p⌉α + 2(p−1)/p·nβ + (p−1)/p·nγ, so
// fits and predictions can show how close the library gets to it.
#include <fmt/format.h>

#include <climits>

#include "allreduce_common.h"
#include "collbench/mpi_transport.h"

namespace collbench {
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

class MpiAllreduce final : public detail::AllreduceBase {
 public:
  MpiAllreduce(Transport& transport, const AllreduceSpec& spec, std::span<const std::byte> in,
               std::span<std::byte> out)
      : AllreduceBase(transport, spec, in, out) {
    auto* mpi = dynamic_cast<MpiTransport*>(&transport);
    if (mpi == nullptr) {
      throw std::invalid_argument(
          fmt::format("algorithm 'mpi' needs the mpi transport, not '{}'", transport.kind()));
    }
    comm_ = mpi->comm();
    if (spec.count > static_cast<std::size_t>(INT_MAX)) {
      throw std::invalid_argument(
          fmt::format("algorithm 'mpi': {} elements exceed MPI's int count", spec.count));
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

  ~MpiAllreduce() override {
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (finalized) return;
    if (owned_op_ != MPI_OP_NULL) MPI_Op_free(&owned_op_);
    if (owned_type_ != MPI_DATATYPE_NULL) MPI_Type_free(&owned_type_);
  }

  void run() override {
    const void* send_buffer = in_place() ? MPI_IN_PLACE : static_cast<const void*>(in_);
    check_mpi(
        MPI_Allreduce(send_buffer, out_, static_cast<int>(spec_.count), datatype_, op_, comm_),
        "MPI_Allreduce", "{} {} elements", spec_.count, to_string(spec_.dtype));
    finish_average({0, spec_.count});
  }

 private:
  MPI_Comm comm_ = MPI_COMM_NULL;
  MPI_Datatype datatype_ = MPI_DATATYPE_NULL;
  MPI_Datatype owned_type_ = MPI_DATATYPE_NULL;
  MPI_Op op_ = MPI_OP_NULL;
  MPI_Op owned_op_ = MPI_OP_NULL;
};

std::string mpi_unsupported_reason(std::string_view transport_kind, int ranks, std::size_t count) {
  if (transport_kind != "mpi") {
    return fmt::format("needs the mpi transport (this run uses '{}')", transport_kind);
  }
  if (count > static_cast<std::size_t>(INT_MAX)) {
    return fmt::format("{} elements exceed MPI's int count", count);
  }
  return detail::common_unsupported_reason(transport_kind, ranks, count);
}

CostTerms lower_bound_cost(int p, double n) {
  const double share = static_cast<double>(p - 1) / p;
  return {static_cast<double>(ceil_log2(p)), 2 * share * n, share * n};
}

std::size_t mpi_workspace(int /*p*/, std::size_t n) { return n; }

}  // namespace

const AlgorithmInfo kMpiAllreduce = {
    "mpi",
    "the MPI library's own MPI_Allreduce (vendor baseline; mpi transport only)",
    mpi_unsupported_reason,
    lower_bound_cost,
    /*reduces_on_every_rank=*/false,  // unknown: the library decides
    mpi_workspace,
    [](Transport& transport, const AllreduceSpec& spec, std::span<const std::byte> in,
       std::span<std::byte> out) -> std::unique_ptr<Allreduce> {
      return std::make_unique<MpiAllreduce>(transport, spec, in, out);
    },
};

}  // namespace collbench
