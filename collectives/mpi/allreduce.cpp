// mpi — the MPI library's own MPI_Allreduce: the vendor baseline that every
// hand-written algorithm is compared with. Which algorithm the library picks
// (OpenMPI's tuned/han components decide by size and p) is its business;
// here it is one call on the transport's duplicated communicator, with the
// datatypes and operations of library.h.
//
// No cost formula of its own: the library's choice is unknown. cost() is the
// lower bound for any allreduce (collective.h), ⌈lg p⌉α + 2(p−1)/p·nβ +
// (p−1)/p·nγ, so fits and predictions can show how close the library gets.
#include <fmt/format.h>

#include "algorithm_common.h"
#include "collbench/transport/mpi_transport.h"
#include "mpi/library.h"

namespace collbench {
namespace {

class MpiAllreduce final : public detail::AllreduceBase {
 public:
  MpiAllreduce(Transport& transport, const CollectiveSpec& spec, std::span<const std::byte> in,
               std::span<std::byte> out, const OmpiTunedAlgorithm* forced)
      : AllreduceBase(transport, spec, in, out), library_(transport, spec, "allreduce", forced) {}

  void run() override {
    const detail::MpiLibraryCall::ForcedScope forced(library_);
    const void* send_buffer = in_place() ? MPI_IN_PLACE : static_cast<const void*>(in_);
    check_mpi(MPI_Allreduce(send_buffer, out_, static_cast<int>(spec_.count), library_.datatype(),
                            library_.op(), library_.comm()),
              "MPI_Allreduce", "{} {} elements", spec_.count, to_string(spec_.dtype));
    finish_average({0, spec_.count});
  }

 private:
  detail::MpiLibraryCall library_;
};

}  // namespace

std::unique_ptr<Collective> detail::build_mpi_allreduce(Transport& transport,
                                                        const CollectiveSpec& spec,
                                                        std::span<const std::byte> in,
                                                        std::span<std::byte> out,
                                                        const OmpiTunedAlgorithm* forced) {
  return std::make_unique<MpiAllreduce>(transport, spec, in, out, forced);
}

}  // namespace collbench
