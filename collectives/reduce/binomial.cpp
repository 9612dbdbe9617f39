// binomial — reduce up a binomial tree to the root (phases.h), whole
// vectors: MPICH's and Open MPI's choice for short messages.
//
//   ⌈lg p⌉ rounds: in round k every rank whose bit k is set (relative to
//   the root) sends its partial result to rank − 2^k and leaves; the
//   others receive from rank + 2^k (if it exists) and reduce it with
//   theirs, nearest child first.
// The root reduces into its output (its first child's vector is received
// straight into it); a rank with children into a workspace; a leaf sends
// its input.
//
// Cost (p ranks, n bytes): ⌈lg p⌉α + ⌈lg p⌉·nβ + ⌈lg p⌉·nγ — the fewest
// rounds, but the root receives and reduces the whole vector ⌈lg p⌉ times:
// for small messages.
#include "phases.h"

namespace collbench {
namespace {

// This algorithm's tags: offsets in its slot (CollectiveBase::tag).
enum Tag : int { kReduceTag };

class BinomialReduce final : public detail::ReduceBase {
 public:
  BinomialReduce(Transport& transport, const CollectiveSpec& spec, std::span<const std::byte> in,
                 std::span<std::byte> out)
      : ReduceBase(transport, spec, in, out), tree_(ranks_, rank_, kRootRank) {
    if (tree_.children.empty()) return;
    staging_ = allocate_workspace(spec.count);
    accumulator_ = is_root() ? out_ : allocate_workspace(spec.count);
  }

  void run() override {
    const std::byte* result = detail::binomial_reduce(*this, tree_, in_, accumulator_, staging_,
                                                      spec_.count, tag(kReduceTag));
    if (!is_root()) return;
    if (result != out_) copy_input_to_output();  // one rank: nothing to reduce
    finish_average({0, spec_.count});
  }

 private:
  // The schedule depends only on (rank, p): computed once.
  const detail::BinomialTree tree_;
  std::byte* accumulator_ = nullptr;
  std::byte* staging_ = nullptr;
};

CostTerms binomial_cost(const Layout& layout, double n) {
  CostTerms terms;
  detail::add_binomial_reduce(terms, layout, detail::whole_job(layout.ranks()), n);
  terms.reduce_bytes = ceil_log2(layout.ranks()) * n;
  return terms;
}

// The root's accumulator is its output; another rank with children needs
// one besides the staging vector.
std::size_t binomial_workspace(int p, std::size_t n) { return p > 1 ? 2 * n : 0; }

}  // namespace

extern const AlgorithmInfo kBinomialReduce = {
    "binomial",
    "binomial tree to the root, whole vectors; log-latency, for small messages",
    detail::common_unsupported_reason,
    detail::flat_cost<binomial_cost>,
    /*reduces_on_every_rank=*/false,  // at most half the ranks at once, the root alone last
    binomial_workspace,
    detail::build_as<BinomialReduce>,
    binomial_cost,
};

}  // namespace collbench
