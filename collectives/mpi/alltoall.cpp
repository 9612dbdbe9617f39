// mpi — the MPI library's own alltoall: MPI_Alltoall when the blocks are
// equal (count a multiple of p: collbench's layout is then MPI's), else
// MPI_Alltoallv with every block's count and offset from collective.h's
// layout, so that any count runs. The vendor baseline of alltoall. In place
// with MPI_IN_PLACE when the blocks are equal; otherwise MPI's in-place
// layout (the send blocks where the receive blocks are) is not collbench's,
// and the input is copied aside first (AlltoallBase). Elements travel as the
// datatypes of library.h (nothing is reduced); counts and offsets are
// MPI ints, which MpiLibraryCall guarantees (at most INT_MAX elements) and
// the build checks again for alltoallv's shares, which this file's class
// also runs (build_mpi_alltoallv: always MPI_Alltoallv, in place staged).
//
// No cost formula of its own: cost() is the lower bound for any alltoall
// (collective.h), ⌈lg p⌉α + (p−1)/p·nβ.
#include <fmt/format.h>

#include <limits>
#include <stdexcept>
#include <vector>

#include "algorithm_common.h"
#include "collbench/transport/mpi_transport.h"
#include "mpi/library.h"

namespace collbench {
namespace {

bool equal_blocks(const CollectiveSpec& spec, const Transport& transport,
                  const detail::ExchangeLayout& layout) {
  return &layout == &detail::kAlltoallLayout &&
         spec.count % static_cast<std::size_t>(transport.size()) == 0;
}

// An MPI int count or displacement, or why not.
int mpi_int(std::size_t elements, std::string_view collective) {
  if (elements > static_cast<std::size_t>(std::numeric_limits<int>::max())) {
    throw std::invalid_argument(fmt::format(
        "{} by the MPI library: a block or offset of {} elements exceeds MPI's int counts",
        collective, elements));
  }
  return static_cast<int>(elements);
}

class MpiAlltoall final : public detail::AlltoallBase {
 public:
  MpiAlltoall(Transport& transport, const CollectiveSpec& spec, std::span<const std::byte> in,
              std::span<std::byte> out, const OmpiTunedAlgorithm* forced,
              const detail::ExchangeLayout& layout = detail::kAlltoallLayout)
      : AlltoallBase(transport, spec, in, out,
                     /*stage_in_place=*/!equal_blocks(spec, transport, layout), layout),
        library_(transport, spec, layout.collective, forced),
        equal_blocks_(equal_blocks(spec, transport, layout)) {
    for (int peer = 0; peer < ranks_; ++peer) {
      const detail::Block sent = send_block(peer);
      const detail::Block received = receive_block(peer);
      send_counts_.push_back(mpi_int(sent.count, layout.collective));
      send_offsets_.push_back(mpi_int(sent.offset, layout.collective));
      receive_counts_.push_back(mpi_int(received.count, layout.collective));
      receive_offsets_.push_back(mpi_int(received.offset, layout.collective));
    }
  }

  void run() override {
    const detail::MpiLibraryCall::ForcedScope forced(library_);
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

std::unique_ptr<Collective> detail::build_mpi_alltoallv(Transport& transport,
                                                        const CollectiveSpec& spec,
                                                        std::span<const std::byte> in,
                                                        std::span<std::byte> out,
                                                        const OmpiTunedAlgorithm* forced) {
  return std::make_unique<MpiAlltoall>(transport, spec, in, out, forced, detail::kAlltoallvLayout);
}

std::unique_ptr<Collective> detail::build_mpi_alltoall(Transport& transport,
                                                       const CollectiveSpec& spec,
                                                       std::span<const std::byte> in,
                                                       std::span<std::byte> out,
                                                       const OmpiTunedAlgorithm* forced) {
  return std::make_unique<MpiAlltoall>(transport, spec, in, out, forced);
}

}  // namespace collbench
