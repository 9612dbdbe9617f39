// mpi — the MPI library's own alltoall: MPI_Alltoall when the blocks are
// equal (count a multiple of p: collbench's layout is then MPI's), else
// MPI_Alltoallv with every block's count and offset from collective.h's
// layout, so that any count runs. The vendor baseline of alltoall. In place
// with MPI_IN_PLACE when the blocks are equal; otherwise MPI's in-place
// layout (the send blocks where the receive blocks are) is not collbench's,
// and the input is copied aside first (AlltoallBase). Elements travel as the
// datatypes of mpi_library.h (nothing is reduced); counts and offsets are
// MPI ints, which MpiLibraryCall guarantees (at most INT_MAX elements).
//
// No cost formula of its own: cost() is the lower bound for any alltoall
// (collective.h), ⌈lg p⌉α + (p−1)/p·nβ.
#include <vector>

#include "algorithm_common.h"
#include "collbench/transport/mpi_transport.h"
#include "mpi_library.h"

namespace collbench {
namespace {

bool equal_blocks(const CollectiveSpec& spec, const Transport& transport) {
  return spec.count % static_cast<std::size_t>(transport.size()) == 0;
}

class MpiAlltoall final : public detail::AlltoallBase {
 public:
  MpiAlltoall(Transport& transport, const CollectiveSpec& spec, std::span<const std::byte> in,
              std::span<std::byte> out)
      : AlltoallBase(transport, spec, in, out, /*stage_in_place=*/!equal_blocks(spec, transport)),
        library_(transport, spec, "alltoall"),
        equal_blocks_(equal_blocks(spec, transport)) {
    for (int peer = 0; peer < ranks_; ++peer) {
      const detail::Block sent = send_block(peer);
      const detail::Block received = receive_block(peer);
      send_counts_.push_back(static_cast<int>(sent.count));
      send_offsets_.push_back(static_cast<int>(sent.offset));
      receive_counts_.push_back(static_cast<int>(received.count));
      receive_offsets_.push_back(static_cast<int>(received.offset));
    }
  }

  void run() override {
    stage_input();
    const MPI_Datatype type = library_.datatype();
    if (equal_blocks_) {
      const void* send_buffer = in_place() ? MPI_IN_PLACE : static_cast<const void*>(in_);
      const int block = static_cast<int>(spec_.count / static_cast<std::size_t>(ranks_));
      check_mpi(MPI_Alltoall(send_buffer, block, type, out_, block, type, library_.comm()),
                "MPI_Alltoall", "{} {} elements", spec_.count, to_string(spec_.dtype));
    } else {
      check_mpi(
          MPI_Alltoallv(input_at(0), send_counts_.data(), send_offsets_.data(), type, out_,
                        receive_counts_.data(), receive_offsets_.data(), type, library_.comm()),
          "MPI_Alltoallv", "{} {} elements", spec_.count, to_string(spec_.dtype));
    }
  }

 private:
  detail::MpiLibraryCall library_;
  bool equal_blocks_;
  std::vector<int> send_counts_;
  std::vector<int> send_offsets_;
  std::vector<int> receive_counts_;
  std::vector<int> receive_offsets_;
};

}  // namespace

extern const AlgorithmInfo kMpiAlltoall = {
    "mpi",
    "the MPI library's own MPI_Alltoall (vendor baseline; mpi transport only)",
    detail::mpi_library_unsupported_reason,
    [](int p, double n) { return find_collective("alltoall")->lower_bound(p, n); },
    /*reduces_on_every_rank=*/false,  // nothing is reduced
    detail::mpi_library_workspace,
    detail::build_as<MpiAlltoall>,
};

}  // namespace collbench
