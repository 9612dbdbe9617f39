// mpi — the MPI library's own allgather: MPI_Allgather when the blocks are
// equal (count a multiple of p), else MPI_Allgatherv with the blocks' counts
// and offsets, so that any count runs. The vendor baseline of allgather; in
// place with MPI_IN_PLACE (MPI's in-place layout is collbench's: the input
// at its block of the output). Elements travel as the datatypes of
// library.h (nothing is reduced).
//
// No cost formula of its own: cost() is the lower bound for any allgather
// (collective.h), ⌈lg p⌉α + (p−1)/p·nβ.
#include <vector>

#include "algorithm_common.h"
#include "collbench/transport/mpi_transport.h"
#include "mpi/library.h"

namespace collbench {
namespace {

class MpiAllgather final : public detail::AllgatherBase {
 public:
  MpiAllgather(Transport& transport, const CollectiveSpec& spec, std::span<const std::byte> in,
               std::span<std::byte> out, const OmpiTunedAlgorithm* forced)
      : AllgatherBase(transport, spec, in, out), library_(transport, spec, "allgather", forced) {
    equal_blocks_ = spec.count % static_cast<std::size_t>(ranks_) == 0;
    for (int rank = 0; rank < ranks_; ++rank) {
      counts_.push_back(static_cast<int>(block(rank).count));
      offsets_.push_back(static_cast<int>(block(rank).offset));
    }
  }

  void run() override {
    const detail::MpiLibraryCall::ForcedScope forced(library_);
    const void* send_buffer = in_place() ? MPI_IN_PLACE : static_cast<const void*>(in_);
    const int own = counts_[static_cast<std::size_t>(rank_)];
    const MPI_Datatype type = library_.datatype();
    if (equal_blocks_) {
      check_mpi(MPI_Allgather(send_buffer, own, type, out_, own, type, library_.comm()),
                "MPI_Allgather", "{} {} elements", spec_.count, to_string(spec_.dtype));
    } else {
      check_mpi(MPI_Allgatherv(send_buffer, own, type, out_, counts_.data(), offsets_.data(), type,
                               library_.comm()),
                "MPI_Allgatherv", "{} {} elements", spec_.count, to_string(spec_.dtype));
    }
  }

 private:
  detail::MpiLibraryCall library_;
  bool equal_blocks_ = true;
  std::vector<int> counts_;
  std::vector<int> offsets_;
};

}  // namespace

std::unique_ptr<Collective> detail::build_mpi_allgather(Transport& transport,
                                                        const CollectiveSpec& spec,
                                                        std::span<const std::byte> in,
                                                        std::span<std::byte> out,
                                                        const OmpiTunedAlgorithm* forced) {
  return std::make_unique<MpiAllgather>(transport, spec, in, out, forced);
}

}  // namespace collbench
