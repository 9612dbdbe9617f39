// pairwise — alltoall by pairwise exchange (MPICH's
// MPIR_Alltoall_intra_pairwise; Thakur, Rabenseifner & Gropp 2005), for any
// p.
//
// p−1 steps: in step d = 1, ..., p−1 rank r sends its block for rank r+d
// and receives rank r−d's block for it (mod p), then waits for both, so
// that every rank talks to one peer at a time and every link carries one
// message per direction per step. The own block is copied from in to out.
// (MPICH pairs ranks r and r XOR d when p is a power of two: the same
// steps, other partners.) Blocks go straight from in to their place in out.
//
// Cost (p ranks, n bytes): (p−1)α + (p−1)/p·nβ — every byte crosses the
// network once (the lower bound's β), at p−1 messages. Exact when p divides
// count; otherwise a rank sends count − c_0 elements, c_0 = ⌈count/p⌉ its
// own block.
#include "algorithm_common.h"

namespace collbench {
namespace {

// This algorithm's tags: offsets in its slot (CollectiveBase::tag).
enum Tag : int { kStepTag };

class PairwiseAlltoall final : public detail::AlltoallBase {
 public:
  PairwiseAlltoall(Transport& transport, const CollectiveSpec& spec, std::span<const std::byte> in,
                   std::span<std::byte> out,
                   const detail::ExchangeLayout& layout = detail::kAlltoallLayout)
      : AlltoallBase(transport, spec, in, out, /*stage_in_place=*/true, layout) {
    requests_.reserve(2);
  }

  void run() override {
    stage_input();
    place_own_block();
    for (int distance = 1; distance < ranks_; ++distance) {
      const int from = rank_at(-distance);
      const int to = rank_at(distance);
      const detail::Block incoming = receive_block(from);
      const detail::Block outgoing = send_block(to);
      requests_.push_back(recv(out_at(incoming.offset), incoming.count, from, tag(kStepTag)));
      requests_.push_back(send(input_at(outgoing.offset), outgoing.count, to, tag(kStepTag)));
      wait_all(requests_);
    }
  }

 private:
  std::vector<RequestId> requests_;
};

}  // namespace

CostTerms detail::pairwise_exchange_cost(const Layout& layout, double n) {
  CostTerms terms;
  add_shift_steps(terms, layout, n / layout.ranks());
  return terms;
}

std::unique_ptr<Collective> detail::build_pairwise_exchange(Transport& transport,
                                                            const CollectiveSpec& spec,
                                                            std::span<const std::byte> in,
                                                            std::span<std::byte> out,
                                                            const ExchangeLayout& layout) {
  return std::make_unique<PairwiseAlltoall>(transport, spec, in, out, layout);
}

extern const AlgorithmInfo kPairwiseAlltoall = {
    "pairwise",
    "p−1 steps, each exchanging one block with the ranks d ahead and d behind; bandwidth-optimal",
    detail::common_unsupported_reason,
    detail::flat_cost<detail::pairwise_exchange_cost>,
    /*reduces_on_every_rank=*/false,  // nothing is reduced
    detail::no_workspace,             // out of place (in place: n, AlltoallBase)
    detail::build_as<PairwiseAlltoall>,
    detail::pairwise_exchange_cost,
};

}  // namespace collbench
