// mpi — the MPI library's own MPI_Reduce to rank 0: the vendor baseline of
// reduce. In place at the root with MPI_IN_PLACE; elsewhere the library
// ignores the receive buffer (collbench's output there is empty). avg is
// MPI_SUM, then the division at the root.
//
// No cost formula of its own: cost() is the lower bound for any reduce
// (collective.h), ⌈lg p⌉α + nβ + (p−1)/p·nγ.
#include "algorithm_common.h"
#include "collbench/transport/mpi_transport.h"
#include "mpi/library.h"

namespace collbench {
namespace {

class MpiReduce final : public detail::ReduceBase {
 public:
  MpiReduce(Transport& transport, const CollectiveSpec& spec, std::span<const std::byte> in,
            std::span<std::byte> out, const OmpiTunedAlgorithm* forced)
      : ReduceBase(transport, spec, in, out), library_(transport, spec, "reduce", forced) {}

  void run() override {
    const detail::MpiLibraryCall::ForcedScope forced(library_);
    const void* send_buffer = in_place() ? MPI_IN_PLACE : static_cast<const void*>(in_);
    check_mpi(MPI_Reduce(send_buffer, out_, static_cast<int>(spec_.count), library_.datatype(),
                         library_.op(), kRootRank, library_.comm()),
              "MPI_Reduce", "{} {} elements", spec_.count, to_string(spec_.dtype));
    if (is_root()) finish_average({0, spec_.count});
  }

 private:
  detail::MpiLibraryCall library_;
};

}  // namespace

std::unique_ptr<Collective> detail::build_mpi_reduce(Transport& transport,
                                                     const CollectiveSpec& spec,
                                                     std::span<const std::byte> in,
                                                     std::span<std::byte> out,
                                                     const OmpiTunedAlgorithm* forced) {
  return std::make_unique<MpiReduce>(transport, spec, in, out, forced);
}

}  // namespace collbench
