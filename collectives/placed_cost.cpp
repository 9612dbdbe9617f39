// Costs over a Layout: the steps algorithm_common.h's placed costs are
// written with, and the rank groups of the hierarchical algorithms.
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "algorithm_common.h"
#include "phases.h"

namespace collbench {

std::string_view to_string(MapBy map_by) { return map_by == MapBy::slot ? "slot" : "node"; }

std::string uneven_nodes_reason(std::span<const int> node_of_rank) {
  const detail::RankGroups nodes =
      detail::same_node(static_cast<int>(node_of_rank.size()),
                        [&](int rank) { return node_of_rank[static_cast<std::size_t>(rank)]; });
  std::vector<std::size_t> sizes;
  for (const std::vector<int>& members : nodes.groups) sizes.push_back(members.size());
  if (std::adjacent_find(sizes.begin(), sizes.end(), std::not_equal_to<>()) == sizes.end()) {
    return {};
  }
  return fmt::format(
      "needs the same number of ranks on every node; the {} nodes run {} ranks (by node, in "
      "order of their lowest rank): start as many on each (mpirun --npernode K, srun "
      "--ntasks-per-node K)",
      sizes.size(), fmt::join(sizes, ", "));
}

namespace detail {

RankGroups group_by(int ranks, const std::function<int(int)>& key) {
  RankGroups result;
  result.group_of.assign(static_cast<std::size_t>(ranks), 0);
  result.position.assign(static_cast<std::size_t>(ranks), 0);
  std::map<int, int> group_of_key;
  for (int rank = 0; rank < ranks; ++rank) {
    const auto [found, added] =
        group_of_key.try_emplace(key(rank), static_cast<int>(result.groups.size()));
    if (added) result.groups.emplace_back();
    std::vector<int>& members = result.groups[static_cast<std::size_t>(found->second)];
    result.group_of[static_cast<std::size_t>(rank)] = found->second;
    result.position[static_cast<std::size_t>(rank)] = static_cast<int>(members.size());
    members.push_back(rank);
  }
  return result;
}

RankGroups whole_job(int ranks) {
  return group_by(ranks, [](int) { return 0; });
}

RankGroups same_node(int ranks, const std::function<int(int)>& node_of) {
  return group_by(ranks, node_of);
}

RankGroups same_local_index(int ranks, const std::function<int(int)>& node_of) {
  // A rank's local index is its position among its node's ranks.
  const std::vector<int> local_index = same_node(ranks, node_of).position;
  return group_by(ranks, [&](int rank) { return local_index[static_cast<std::size_t>(rank)]; });
}

namespace {

void group_nodes(NodeGroups& groups, int ranks, const std::function<int(int)>& node_of) {
  groups.node = same_node(ranks, node_of);
  groups.across = same_local_index(ranks, node_of);
  const std::vector<int>& local_index = groups.node.position;
  groups.leaders = group_by(ranks, [&](int rank) {
    return local_index[static_cast<std::size_t>(rank)] == 0 ? -1 : rank;
  });
}

}  // namespace

NodeGroups::NodeGroups(const Transport& transport, std::string_view algorithm) {
  const auto node_of = [&transport](int rank) { return transport.node_of(rank); };
  std::vector<int> node_of_rank;
  for (int rank = 0; rank < transport.size(); ++rank) node_of_rank.push_back(node_of(rank));
  if (const std::string why = uneven_nodes_reason(node_of_rank); !why.empty()) {
    throw std::invalid_argument(fmt::format("{}: {}", algorithm, why));
  }
  group_nodes(*this, transport.size(), node_of);
}

NodeGroups::NodeGroups(const Layout& layout) {
  group_nodes(*this, layout.ranks(), [&layout](int rank) { return layout.node_of(rank); });
}

StagedBlocks::StagedBlocks(const NodeGroups& groups, std::size_t count)
    : nodes(static_cast<int>(groups.node.groups.size())) {
  // Groups of local index come in order of their lowest rank: by local index.
  for (const std::vector<int>& same_index : groups.across.groups) {
    order.insert(order.end(), same_index.begin(), same_index.end());
  }
  const auto ranks = order.size();
  padded_block = ranks > 0 ? (count + ranks - 1) / ranks : 0;
}

CollectiveSpec summing(CollectiveSpec spec) {
  if (spec.op == ReduceOp::avg) spec.op = ReduceOp::sum;
  return spec;
}

void add_sized_steps(CostTerms& terms, const Layout& layout, double steps,
                     const StepMessages& messages) {
  const int ranks = layout.ranks();
  const auto node_count = static_cast<std::size_t>(layout.nodes);
  const auto rank_count = static_cast<std::size_t>(ranks);
  // Bytes through each node's NIC; messages off and on node, and bytes on
  // node, of each rank; out and in apart (a port is full duplex).
  std::vector<double> nic_out(node_count), nic_in(node_count);
  std::vector<double> off_out(rank_count), off_in(rank_count);
  std::vector<double> on_out(rank_count), on_in(rank_count);
  std::vector<double> on_bytes_out(rank_count), on_bytes_in(rank_count);
  // Bytes up out of and down into each leaf switch (Layout::switch_nodes).
  const bool tapered = layout.switch_nodes > 0 && layout.switch_uplinks > 0;
  const auto switch_count = static_cast<std::size_t>(layout.switch_of(layout.nodes - 1) + 1);
  std::vector<double> up_out(switch_count), up_in(switch_count);
  bool crosses = false, any = false;
  for (int rank = 0; rank < ranks; ++rank) {
    for (const StepMessage& message : messages(rank)) {
      if (message.peer == rank) continue;
      any = true;
      const auto from = static_cast<std::size_t>(rank), to = static_cast<std::size_t>(message.peer);
      const int from_node = layout.node_of(rank), to_node = layout.node_of(message.peer);
      if (from_node != to_node) {
        crosses = true;
        nic_out[static_cast<std::size_t>(from_node)] += message.bytes;
        nic_in[static_cast<std::size_t>(to_node)] += message.bytes;
        const int from_switch = layout.switch_of(from_node), to_switch = layout.switch_of(to_node);
        if (from_switch != to_switch) {
          up_out[static_cast<std::size_t>(from_switch)] += message.bytes;
          up_in[static_cast<std::size_t>(to_switch)] += message.bytes;
        }
        ++off_out[from];
        ++off_in[to];
      } else {
        ++on_out[from];
        ++on_in[to];
        on_bytes_out[from] += message.bytes;
        on_bytes_in[to] += message.bytes;
      }
    }
  }
  if (!any) return;
  const auto most = [](const std::vector<double>& a, const std::vector<double>& b) {
    return std::max(*std::max_element(a.begin(), a.end()), *std::max_element(b.begin(), b.end()));
  };
  if (crosses) {
    // The intra messages of a mixed step travel while the network ones do,
    // far faster: the network sets the step's pace.
    terms.messages += steps * most(off_out, off_in);
    // One message never goes faster than its NIC; many leaving a leaf
    // switch at once share its up-links.
    double step_bytes = most(nic_out, nic_in);
    if (tapered) step_bytes = std::max(step_bytes, most(up_out, up_in) / layout.switch_uplinks);
    terms.bytes += steps * step_bytes;
  } else {
    terms.intra_messages += steps * most(on_out, on_in);
    terms.intra_bytes += steps * most(on_bytes_out, on_bytes_in);
  }
}

namespace {

// Adds steps counted in messages of one byte (`unit`) as messages of `bytes`.
void add_scaled(CostTerms& terms, const CostTerms& unit, double bytes) {
  terms.messages += unit.messages;
  terms.bytes += unit.bytes * bytes;
  terms.intra_messages += unit.intra_messages;
  terms.intra_bytes += unit.intra_bytes * bytes;
}

}  // namespace

void add_steps(CostTerms& terms, const Layout& layout, double steps, double bytes,
               const StepPeers& peers) {
  // Counted in messages (whole numbers, exact), then scaled by `bytes`
  // once: algorithms that move the same messages of the same size cost the
  // same to the last bit (alltoall's linear and pairwise tie on a flat
  // network, and selection breaks the tie by registry order).
  CostTerms unit;
  add_sized_steps(unit, layout, steps, [&peers](int rank) {
    std::vector<StepMessage> messages;
    for (const int peer : peers(rank)) messages.push_back({peer, 1.0});
    return messages;
  });
  add_scaled(terms, unit, bytes);
}

// One rank per node under one switch: every message of a step crosses the
// network and only NICs are shared, so the p−1 rotations of a step or of
// the shift steps are known without walking p² messages (which made
// collbench-predict's every-p curves cubic in p: 20 s of ps_sharded at
// p = 1024). The walk stays the definition; PlacedCost tests compare.
bool every_message_on_its_own_nic(const Layout& layout) {
  return layout.per_node == 1 && !(layout.switch_nodes > 0 && layout.switch_uplinks > 0);
}

void add_shift_steps(CostTerms& terms, const Layout& layout, double bytes) {
  const int p = layout.ranks();
  // Summed in messages (whole numbers, exact), then scaled: on a flat
  // network (p−1)·bytes to the last bit, as a ring's p−1 steps.
  CostTerms unit;
  if (every_message_on_its_own_nic(layout)) {
    // Each step: one message out of and into every NIC.
    unit.messages = unit.bytes = p - 1;
  } else {
    for (int shift = 1; shift < p; ++shift) {
      add_steps(unit, layout, 1, 1.0,
                [p, shift](int rank) -> std::vector<int> { return {(rank + shift) % p}; });
    }
  }
  add_scaled(terms, unit, bytes);
}

void add_all_to_all_step(CostTerms& terms, const Layout& layout, double bytes) {
  const int p = layout.ranks();
  CostTerms unit;
  if (every_message_on_its_own_nic(layout)) {
    // p−1 messages out of and into every NIC at once.
    unit.messages = unit.bytes = p - 1;
  } else {
    add_steps(unit, layout, 1, 1.0, [p](int rank) {
      std::vector<int> peers;
      for (int shift = 1; shift < p; ++shift) peers.push_back((rank + shift) % p);
      return peers;
    });
  }
  add_scaled(terms, unit, bytes);
}

void add_ring_steps(CostTerms& terms, const Layout& layout, const RankGroups& groups, double steps,
                    double bytes) {
  add_steps(terms, layout, steps, bytes, [&](int rank) -> std::vector<int> {
    const std::vector<int>& members = groups.members_with(rank);
    if (members.size() < 2) return {};
    const auto next = static_cast<std::size_t>(groups.position[static_cast<std::size_t>(rank)] + 1);
    return {members[next % members.size()]};
  });
}

namespace {

// The binomial rounds of phases.h's tree (root member 0) within each group:
// in up round k member i sends to i − 2^k when i mod 2^(k+1) = 2^k; the
// down rounds run backwards, i sending to i + 2^k when i mod 2^(k+1) = 0.
// `message_bytes(sender, distance, group size)` is what the sender sends.
using RoundBytes = std::function<double(int sender, int distance, int group)>;
void add_binomial_round(CostTerms& terms, const Layout& layout, const RankGroups& groups, int round,
                        bool up, const RoundBytes& message_bytes) {
  const int distance = 1 << round;
  add_sized_steps(terms, layout, 1, [&](int rank) -> std::vector<StepMessage> {
    const std::vector<int>& members = groups.members_with(rank);
    const int i = groups.position[static_cast<std::size_t>(rank)];
    const int group = static_cast<int>(members.size());
    const double bytes = message_bytes(i, distance, group);
    if (up && i % (2 * distance) == distance) {
      return {{members[static_cast<std::size_t>(i - distance)], bytes}};
    }
    if (!up && i % (2 * distance) == 0 && i + distance < group) {
      return {{members[static_cast<std::size_t>(i + distance)], bytes}};
    }
    return {};
  });
}

int largest_group(const RankGroups& groups) {
  std::size_t largest = 1;
  for (const std::vector<int>& members : groups.groups) largest = std::max(largest, members.size());
  return static_cast<int>(largest);
}

void add_binomial_up(CostTerms& terms, const Layout& layout, const RankGroups& groups,
                     const RoundBytes& message_bytes) {
  const int rounds = ceil_log2(largest_group(groups));
  for (int round = 0; round < rounds; ++round) {
    add_binomial_round(terms, layout, groups, round, /*up=*/true, message_bytes);
  }
}

void add_binomial_down(CostTerms& terms, const Layout& layout, const RankGroups& groups,
                       const RoundBytes& message_bytes) {
  for (int round = ceil_log2(largest_group(groups)) - 1; round >= 0; --round) {
    add_binomial_round(terms, layout, groups, round, /*up=*/false, message_bytes);
  }
}

}  // namespace

void add_binomial_reduce(CostTerms& terms, const Layout& layout, const RankGroups& groups,
                         double bytes) {
  add_binomial_up(terms, layout, groups, [bytes](int, int, int) { return bytes; });
}

void add_binomial_broadcast(CostTerms& terms, const Layout& layout, const RankGroups& groups,
                            double bytes) {
  add_binomial_down(terms, layout, groups, [bytes](int, int, int) { return bytes; });
}

// A subtree's blocks (phases.h): the receiver's in the scatter, [i + d,
// i + 2d) cut at the group's end; the sender's in the gather, [i, i + d).
void add_binomial_scatter(CostTerms& terms, const Layout& layout, double block_bytes) {
  add_binomial_down(terms, layout, whole_job(layout.ranks()),
                    [block_bytes](int sender, int distance, int group) {
                      return std::min(distance, group - sender - distance) * block_bytes;
                    });
}

void add_binomial_gather(CostTerms& terms, const Layout& layout, double block_bytes) {
  add_binomial_up(terms, layout, whole_job(layout.ranks()),
                  [block_bytes](int sender, int distance, int group) {
                    return std::min(distance, group - sender) * block_bytes;
                  });
}

void add_fold_step(CostTerms& terms, const Layout& layout, double bytes) {
  const Fold fold(layout.ranks(), 0);
  add_steps(terms, layout, 1, bytes, [&](int rank) -> std::vector<int> {
    if (rank < 2 * fold.rem && rank % 2 == 0) return {rank + 1};
    return {};
  });
}

void add_unfold_step(CostTerms& terms, const Layout& layout, double bytes) {
  const Fold fold(layout.ranks(), 0);
  add_steps(terms, layout, 1, bytes, [&](int rank) -> std::vector<int> {
    if (rank < 2 * fold.rem && rank % 2 == 1) return {rank - 1};
    return {};
  });
}

void add_participant_round(CostTerms& terms, const Layout& layout, int distance, double bytes) {
  add_peer_round(terms, layout, butterfly_peer, floor_log2(distance), bytes);
}

void add_peer_round(CostTerms& terms, const Layout& layout, StepPeer peer, int step, double bytes) {
  add_steps(terms, layout, 1, bytes, [&](int rank) -> std::vector<int> {
    const Fold fold(layout.ranks(), rank);
    if (fold.sits_out()) return {};
    return {fold.real_rank(peer(fold.new_rank, step, fold.pof2))};
  });
}

}  // namespace detail
}  // namespace collbench
