// linear — alltoall all at once (Open MPI's basic_linear, MPICH's
// "scattered" without its batches), for any p.
//
// Every rank posts its p−1 receives (from r−1, r−2, ... mod p, straight into
// their places in out), then its p−1 sends (to r+1, r+2, ..., so that the
// ranks do not all start on one peer), copies its own block, and waits for
// all of them. The library and the network order the messages: no step
// waits for a slow peer, at the price of p−1 flows in and out of every port
// at once.
//
// Cost (p ranks, n bytes): (p−1)α + (p−1)/p·nβ — the sender's port still
// puts p−1 messages and every byte once on the wire; what the model does not
// see is the overlap of the latencies (less than (p−1)α when the network
// pipelines) and the contention (more β when it does not). Bytes exact when
// p divides count, as pairwise.
#include "algorithm_common.h"

namespace collbench {
namespace {

// This algorithm's tags: offsets in its slot (CollectiveBase::tag).
enum Tag : int { kBlockTag };

class LinearAlltoall final : public detail::AlltoallBase {
 public:
  LinearAlltoall(Transport& transport, const CollectiveSpec& spec, std::span<const std::byte> in,
                 std::span<std::byte> out)
      : AlltoallBase(transport, spec, in, out) {
    requests_.reserve(2 * static_cast<std::size_t>(ranks_));
  }

  void run() override {
    stage_input();
    for (int distance = 1; distance < ranks_; ++distance) {
      const int from = rank_at(-distance);
      const detail::Block incoming = receive_block(from);
      requests_.push_back(recv(out_at(incoming.offset), incoming.count, from, tag(kBlockTag)));
    }
    for (int distance = 1; distance < ranks_; ++distance) {
      const int to = rank_at(distance);
      const detail::Block outgoing = send_block(to);
      requests_.push_back(send(input_at(outgoing.offset), outgoing.count, to, tag(kBlockTag)));
    }
    place_own_block();
    wait_all(requests_);
  }

 private:
  std::vector<RequestId> requests_;
};

// Placed: one step in which every rank sends to every other; its network
// bytes are the busiest NIC's, its messages the most one rank sends off its
// node (those inside travel meanwhile).
CostTerms linear_cost(const Layout& layout, double n) {
  const int p = layout.ranks();
  CostTerms terms;
  detail::add_all_to_all_step(terms, layout, n / p);
  return terms;
}

}  // namespace

extern const AlgorithmInfo kLinearAlltoall = {
    "linear",
    "all p−1 receives and sends posted at once, then one wait; the network orders them",
    detail::common_unsupported_reason,
    detail::flat_cost<linear_cost>,
    /*reduces_on_every_rank=*/false,  // nothing is reduced
    detail::no_workspace,             // out of place (in place: n, AlltoallBase)
    detail::build_as<LinearAlltoall>,
    linear_cost,
};

}  // namespace collbench
