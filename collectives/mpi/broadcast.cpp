// mpi — the MPI library's own MPI_Bcast from rank 0: the vendor baseline of
// broadcast. MPI_Bcast has one buffer: the root passes its input (which the
// library only reads there) and, out of place, copies it into its output
// afterwards, as the hand-written algorithms do; every other rank passes its
// output.
//
// No cost formula of its own: cost() is the lower bound for any broadcast
// (collective.h), ⌈lg p⌉α + nβ.
#include "algorithm_common.h"
#include "collbench/transport/mpi_transport.h"
#include "mpi/library.h"

namespace collbench {
namespace {

class MpiBroadcast final : public detail::BroadcastBase {
 public:
  MpiBroadcast(Transport& transport, const CollectiveSpec& spec, std::span<const std::byte> in,
               std::span<std::byte> out, const OmpiTunedAlgorithm* forced)
      : BroadcastBase(transport, spec, in, out), library_(transport, spec, "broadcast", forced) {}

  void run() override {
    const detail::MpiLibraryCall::ForcedScope forced(library_);
    // MPI_Bcast takes a non-const buffer; at the root it is only read.
    void* buffer = is_root() ? const_cast<std::byte*>(in_) : out_;
    check_mpi(MPI_Bcast(buffer, static_cast<int>(spec_.count), library_.datatype(), kRootRank,
                        library_.comm()),
              "MPI_Bcast", "{} {} elements", spec_.count, to_string(spec_.dtype));
    if (is_root()) copy_input_to_output();
  }

 private:
  detail::MpiLibraryCall library_;
};

}  // namespace

std::unique_ptr<Collective> detail::build_mpi_broadcast(Transport& transport,
                                                        const CollectiveSpec& spec,
                                                        std::span<const std::byte> in,
                                                        std::span<std::byte> out,
                                                        const OmpiTunedAlgorithm* forced) {
  return std::make_unique<MpiBroadcast>(transport, spec, in, out, forced);
}

}  // namespace collbench
