// scatter_allgather — van de Geijn's broadcast for long messages (Barnett,
// Gupta, Payne, Shuler, van de Geijn & Watts 1994; MPICH's
// bcast_intra_scatter_ring_allgather): the root scatters the vector's p
// blocks down a binomial tree, then a ring allgather gives every rank every
// block (both phases of phases.h).
//
//   Phase 1, scatter, ⌈lg p⌉ rounds: each child gets its subtree's blocks,
//     so rank r ends with block r (at its place in out).
//   Phase 2, allgather, p−1 ring steps, segmented and pipelined: in step s
//     rank r forwards block r−s and receives block r−1−s into its place.
// The root sends from its input in both phases and, out of place, copies
// its own block into out after the ring's first sends; it receives the
// other blocks back in the ring like every rank (as in MPICH), so the ring
// stays uniform.
//
// Cost (p ranks, n bytes): (⌈lg p⌉ + p−1)α + 2(p−1)/p·nβ — twice the lower
// bound's β instead of binomial's ⌈lg p⌉ times: for long messages.
#include <cstring>

#include "phases.h"

namespace collbench {
namespace {

// This algorithm's tags: offsets in its slot (CollectiveBase::tag).
enum Tag : int { kScatterTag, kUnusedReduceTag, kAllgatherTag };

class ScatterAllgatherBroadcast final : public detail::BroadcastBase, detail::RingBuffers {
 public:
  ScatterAllgatherBroadcast(Transport& transport, const CollectiveSpec& spec,
                            std::span<const std::byte> in, std::span<std::byte> out)
      : BroadcastBase(transport, spec, in, out),
        tree_(ranks_, rank_, kRootRank),
        own_(partition(spec.count, ranks_, rank_)),
        relay_(*this, *this, detail::ring_allgather_steps(ranks_, rank_), spec.segment_bytes,
               tag(kUnusedReduceTag), tag(kAllgatherTag)) {}

  void run() override {
    detail::binomial_scatter(*this, tree_, in_, out_, spec_.count, tag(kScatterTag));
    relay_.start();
    // After the ring's first sends (from in at the root); nothing is
    // received into or sent from this block of out.
    if (is_root() && !in_place() && own_.count > 0) {
      copy_bytes(out_at(own_.offset), in_at(own_.offset), bytes(own_.count));
    }
    relay_.finish();
  }

 private:
  const std::byte* ring_source(detail::Block part) override {
    return is_root() ? in_at(part.offset) : out_at(part.offset);
  }
  std::byte* ring_arrival(int /*step*/, detail::Block /*incoming*/, detail::Block part) override {
    return out_at(part.offset);
  }
  // The allgather reduces nothing.
  std::byte* ring_sum(int /*step*/, detail::Block /*incoming*/, detail::Block /*part*/) override {
    return nullptr;
  }

  const detail::BinomialTree tree_;
  const detail::Block own_;
  detail::RingRelay relay_;
};

CostTerms scatter_allgather_cost(const Layout& layout, double n) {
  const int p = layout.ranks();
  CostTerms terms;
  detail::add_binomial_scatter(terms, layout, n / p);
  detail::add_ring_steps(terms, layout, detail::whole_job(p), p - 1, n / p);
  return terms;
}

}  // namespace

extern const AlgorithmInfo kScatterAllgatherBroadcast = {
    "scatter_allgather",
    "binomial scatter of p blocks + ring allgather (van de Geijn); 2(p−1)/p·n per link",
    detail::common_unsupported_reason,
    detail::flat_cost<scatter_allgather_cost>,
    /*reduces_on_every_rank=*/false,  // nothing is reduced
    detail::no_workspace,
    detail::build_as<ScatterAllgatherBroadcast>,
    scatter_allgather_cost,
};

}  // namespace collbench
