// mpi — the MPI library's own reduce_scatter: MPI_Reduce_scatter_block when
// the blocks are equal (count a multiple of p), else MPI_Reduce_scatter with
// the blocks' counts, so that any count runs. The vendor baseline of
// reduce_scatter, with the datatypes and operations of library.h.
//
// In place, MPI takes the input from the receive buffer and leaves the
// result at its start, while collbench's layout has the output at block r of
// the vector: the in-place call runs out of place into a workspace block and
// copies it to its place (n/p bytes), which the library would do anyway.
//
// No cost formula of its own: cost() is the lower bound for any
// reduce_scatter (collective.h), ⌈lg p⌉α + (p−1)/p·nβ + (p−1)/p·nγ.
#include <cstring>
#include <vector>

#include "algorithm_common.h"
#include "collbench/transport/mpi_transport.h"
#include "mpi/library.h"

namespace collbench {
namespace {

class MpiReduceScatter final : public detail::ReduceScatterBase {
 public:
  MpiReduceScatter(Transport& transport, const CollectiveSpec& spec, std::span<const std::byte> in,
                   std::span<std::byte> out, const OmpiTunedAlgorithm* forced)
      : ReduceScatterBase(transport, spec, in, out),
        library_(transport, spec, "reduce_scatter", forced) {
    equal_blocks_ = spec.count % static_cast<std::size_t>(ranks_) == 0;
    for (int rank = 0; rank < ranks_; ++rank) {
      counts_.push_back(static_cast<int>(block(rank).count));
    }
    result_ = in_place() ? allocate_workspace(block(rank_).count) : out_;
  }

  void run() override {
    const detail::MpiLibraryCall::ForcedScope forced(library_);
    const int own = counts_[static_cast<std::size_t>(rank_)];
    if (equal_blocks_) {
      check_mpi(MPI_Reduce_scatter_block(in_, result_, own, library_.datatype(), library_.op(),
                                         library_.comm()),
                "MPI_Reduce_scatter_block", "{} {} elements", spec_.count, to_string(spec_.dtype));
    } else {
      check_mpi(MPI_Reduce_scatter(in_, result_, counts_.data(), library_.datatype(), library_.op(),
                                   library_.comm()),
                "MPI_Reduce_scatter", "{} {} elements", spec_.count, to_string(spec_.dtype));
    }
    if (result_ != out_ && own > 0) std::memcpy(out_, result_, bytes(block(rank_).count));
    finish_average({0, block(rank_).count});
  }

 private:
  detail::MpiLibraryCall library_;
  bool equal_blocks_ = true;
  std::vector<int> counts_;
  std::byte* result_ = nullptr;
};

}  // namespace

std::unique_ptr<Collective> detail::build_mpi_reduce_scatter(Transport& transport,
                                                             const CollectiveSpec& spec,
                                                             std::span<const std::byte> in,
                                                             std::span<std::byte> out,
                                                             const OmpiTunedAlgorithm* forced) {
  return std::make_unique<MpiReduceScatter>(transport, spec, in, out, forced);
}

}  // namespace collbench
