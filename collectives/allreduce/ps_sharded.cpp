// ps_sharded — a sharded parameter server: every rank serves 1/p of the
// vector (its shard, one block of a p-way split).
//
//   Push: every rank sends shard j of its gradient to rank j, for all j ≠ r,
//     and receives its own shard from the p−1 others. All receives are
//     posted first. Shards of 32 KiB and more are sent one at a time, the
//     k-th to rank r+k, so that while the ranks keep in step each link carries
//     one flow each way; smaller ones are all sent at once.
//   Reduce: each rank reduces the p−1 copies of its shard, in rank order.
//   Pull: every rank sends its reduced shard to all others, in the same order
//     and the same way, and receives theirs.
// Same bytes as ring, in one step each way and without ring's forwarding.
// Posting all p−1 large sends at once (the textbook push) puts p−1 flows on
// every link at the same time; on the emulated 200 Mbit/s cluster of
// tests/netsim_e2e.sh that measured 18–23% above this model at p = 4 and
// 4–16 MiB, one at a time 10–17%. Ranks that drift out of step still
// converge on one rank (incast), which is what hurts on real networks.
//
// Out of place, the copy reduced first (the lowest other rank's) lands
// straight in out's shard, unwritten until that reduction, and is reduced
// there: at p = 2 a call touches in and out only.
//
// Cost (p ranks, n bytes): 2(p−1)α + 2(p−1)/p·nβ + (p−1)/p·nγ with shards
// of 32 KiB and more; below, 2α + 2(p−1)/p·nβ + (p−1)/p·nγ (ps_sharded_cost).
#include "algorithm_common.h"

namespace collbench {
namespace {

// This algorithm's tags: offsets in its slot (CollectiveBase::tag).
enum Tag : int { kPushTag, kPullTag };
// Below this many bytes per message the sends are latency-bound and all go out
// at once; from it up they go one at a time (MPICH's alltoall switches from
// posting everything to pairwise exchange at 32 KiB per message, for the same
// reason: fewer flows competing for each link).
constexpr std::size_t kOneAtATimeBytes = 32 * 1024;

class PsShardedAllreduce final : public detail::AllreduceBase {
 public:
  PsShardedAllreduce(Transport& transport, const CollectiveSpec& spec,
                     std::span<const std::byte> in, std::span<std::byte> out)
      : AllreduceBase(transport, spec, in, out),
        shard_(detail::partition(spec.count, ranks_, rank_)),
        one_at_a_time_(bytes(shard_.count) >= kOneAtATimeBytes) {
    if (ranks_ > 1) {
      copies_ = allocate_workspace(shard_.count * static_cast<std::size_t>(ranks_ - 1));
    }
    requests_.reserve(2 * static_cast<std::size_t>(ranks_));
    receives_.reserve(static_cast<std::size_t>(ranks_));
  }

  void run() override {
    for (int shift = 1; shift < ranks_; ++shift) {
      const int peer = (rank_ + shift) % ranks_;
      receives_.push_back(recv(arrival(peer), shard_.count, peer, tag(kPushTag)));
    }
    send_to_each_peer([this](int peer) {
      const detail::Block theirs = shard(peer);
      return send(in_at(theirs.offset), theirs.count, peer, tag(kPushTag));
    });
    // In rank order, whatever the arrival order, so every run reduces alike.
    // No copy of in to out: the first reduction writes out's shard = in's
    // op the first peer's copy, and the pull fills the other shards.
    const std::byte* mine = in_at(shard_.offset);
    for (int peer = 0; peer < ranks_; ++peer) {
      if (peer == rank_) continue;
      const int shift = (peer - rank_ + ranks_) % ranks_;
      transport_.wait(receives_[static_cast<std::size_t>(shift - 1)]);
      reduce_ordered(out_at(shard_.offset), mine, arrival(peer), shard_.count);
      mine = out_at(shard_.offset);
    }
    if (ranks_ == 1) copy_input_to_output();  // nothing to reduce
    receives_.clear();
    finish_average(shard_);
    // The pull overwrites the other shards of `out`, which may be `in`.
    wait_all(requests_);
    for (int shift = 1; shift < ranks_; ++shift) {
      const int peer = (rank_ + shift) % ranks_;
      const detail::Block theirs = shard(peer);
      requests_.push_back(recv(out_at(theirs.offset), theirs.count, peer, tag(kPullTag)));
    }
    send_to_each_peer([this](int peer) {
      return send(out_at(shard_.offset), shard_.count, peer, tag(kPullTag));
    });
    wait_all(requests_);
  }

 private:
  // Sends to ranks r+1, r+2, ..., r−1 in that order: all at once for small
  // shards, one at a time (each waited for) from kOneAtATimeBytes up.
  template <typename SendTo>
  void send_to_each_peer(SendTo send_to) {
    for (int shift = 1; shift < ranks_; ++shift) {
      const RequestId request = send_to((rank_ + shift) % ranks_);
      if (one_at_a_time_) {
        transport_.wait(request);
      } else {
        requests_.push_back(request);
      }
    }
  }
  detail::Block shard(int owner) const { return detail::partition(spec_.count, ranks_, owner); }
  std::byte* copy_slot(int peer) {
    const int slot = (peer - rank_ + ranks_) % ranks_ - 1;
    return copies_ + bytes(shard_.count) * static_cast<std::size_t>(slot);
  }
  // Where peer's copy of this rank's shard lands: out's shard for the copy
  // reduced first when out is not the input, else its slot.
  std::byte* arrival(int peer) {
    const int first = rank_ == 0 ? 1 : 0;
    return peer == first && !in_place() ? out_at(shard_.offset) : copy_slot(peer);
  }

  const detail::Block shard_;
  const bool one_at_a_time_;
  std::byte* copies_ = nullptr;
  std::vector<RequestId> requests_;
  std::vector<RequestId> receives_;
};

// Large shards: p−1 steps each way, the k-th from every rank r to rank r+k;
// on a flat network ring's cost to the last bit, as its formula is:
// selection then breaks the tie by registry order. Small shards leave all
// at once: p−1 converging flows per rank, whose latencies overlap (one α
// per phase) while they share the NIC's bandwidth (the same bytes as one at
// a time), as the simulation on a star shows to 1% (tests/sim_truth_test).
// Real hosts add each message's CPU overhead o, outside this model's terms.
CostTerms ps_sharded_cost(const Layout& layout, double n) {
  const int p = layout.ranks();
  CostTerms terms;
  if (n / p >= static_cast<double>(kOneAtATimeBytes)) {
    detail::add_shift_steps(terms, layout, n / p);  // push
    detail::add_shift_steps(terms, layout, n / p);  // pull
  } else {
    CostTerms phase;
    detail::add_all_to_all_step(phase, layout, n / p);
    phase.messages = std::min(phase.messages, 1.0);
    phase.intra_messages = std::min(phase.intra_messages, 1.0);
    for (int push_and_pull = 0; push_and_pull < 2; ++push_and_pull) {
      terms.messages += phase.messages;
      terms.bytes += phase.bytes;
      terms.intra_messages += phase.intra_messages;
      terms.intra_bytes += phase.intra_bytes;
    }
  }
  terms.reduce_bytes = static_cast<double>(p - 1) / p * n;
  return terms;
}

std::size_t ps_sharded_workspace(int p, std::size_t n) {
  return (n / static_cast<std::size_t>(p) + 16) * static_cast<std::size_t>(std::max(p - 1, 0));
}

}  // namespace

extern const AlgorithmInfo kPsShardedAllreduce = {
    "ps_sharded",
    "sharded parameter server: rank j serves block j; push, reduce, pull; large shards one peer at "
    "a time",
    detail::common_unsupported_reason,
    detail::flat_cost<ps_sharded_cost>,
    /*reduces_on_every_rank=*/true,  // every rank reduces at once
    ps_sharded_workspace,
    detail::build_as<PsShardedAllreduce>,
    ps_sharded_cost,
};

}  // namespace collbench
