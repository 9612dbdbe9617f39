// binomial — broadcast down a binomial tree from the root (phases.h), the
// whole vector per message: MPICH's and Open MPI's choice for short
// messages.
//
//   ⌈lg p⌉ rounds: in round k every rank that has the vector sends it to the
//   rank 2^k above it (relative to the root); each rank forwards to its
//   children farthest first, so the deepest subtree starts earliest.
// The root sends from its input; out of place it copies the input into its
// output after its sends, which read the input only.
//
// Cost (p ranks, n bytes): ⌈lg p⌉α + ⌈lg p⌉·nβ — the fewest rounds, but the
// vector crosses ⌈lg p⌉ links in turn: for small messages.
#include "phases.h"

namespace collbench {
namespace {

// This algorithm's tags: offsets in its slot (CollectiveBase::tag).
enum Tag : int { kBroadcastTag };

class BinomialBroadcast final : public detail::BroadcastBase {
 public:
  BinomialBroadcast(Transport& transport, const CollectiveSpec& spec, std::span<const std::byte> in,
                    std::span<std::byte> out)
      : BroadcastBase(transport, spec, in, out), tree_(ranks_, rank_, kRootRank) {}

  void run() override {
    detail::binomial_broadcast(*this, tree_, in_, out_, spec_.count, tag(kBroadcastTag));
    if (is_root()) copy_input_to_output();
  }

 private:
  // The schedule depends only on (rank, p): computed once.
  const detail::BinomialTree tree_;
};

CostTerms binomial_cost(const Layout& layout, double n) {
  CostTerms terms;
  detail::add_binomial_broadcast(terms, layout, detail::whole_job(layout.ranks()), n);
  return terms;
}

}  // namespace

extern const AlgorithmInfo kBinomialBroadcast = {
    "binomial",
    "binomial tree from the root, the whole vector per round; log-latency, for small messages",
    detail::common_unsupported_reason,
    detail::flat_cost<binomial_cost>,
    /*reduces_on_every_rank=*/false,  // nothing is reduced
    detail::no_workspace,
    detail::build_as<BinomialBroadcast>,
    binomial_cost,
};

}  // namespace collbench
