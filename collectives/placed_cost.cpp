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

CollectiveSpec summing(CollectiveSpec spec) {
  if (spec.op == ReduceOp::avg) spec.op = ReduceOp::sum;
  return spec;
}

void add_steps(CostTerms& terms, const Layout& layout, double steps, double bytes,
               const StepPeers& peers) {
  const int ranks = layout.ranks();
  std::vector<int> node_out(static_cast<std::size_t>(layout.nodes)), node_in(node_out.size());
  std::vector<int> off_out(static_cast<std::size_t>(ranks)), off_in(off_out.size());
  std::vector<int> on_out(off_out.size()), on_in(off_out.size());
  bool crosses = false, any = false;
  for (int rank = 0; rank < ranks; ++rank) {
    for (const int peer : peers(rank)) {
      if (peer == rank) continue;
      any = true;
      const auto from = static_cast<std::size_t>(rank), to = static_cast<std::size_t>(peer);
      const int from_node = layout.node_of(rank), to_node = layout.node_of(peer);
      if (from_node != to_node) {
        crosses = true;
        ++node_out[static_cast<std::size_t>(from_node)];
        ++node_in[static_cast<std::size_t>(to_node)];
        ++off_out[from];
        ++off_in[to];
      } else {
        ++on_out[from];
        ++on_in[to];
      }
    }
  }
  if (!any) return;
  const auto most = [](const std::vector<int>& a, const std::vector<int>& b) {
    return static_cast<double>(
        std::max(*std::max_element(a.begin(), a.end()), *std::max_element(b.begin(), b.end())));
  };
  if (crosses) {
    // The intra messages of a mixed step travel while the network ones do,
    // far faster: the network sets the step's pace.
    terms.messages += steps * most(off_out, off_in);
    terms.bytes += steps * bytes * most(node_out, node_in);
  } else {
    const double busiest = most(on_out, on_in);
    terms.intra_messages += steps * busiest;
    terms.intra_bytes += steps * bytes * busiest;
  }
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
// in reduce round k member i sends to i − 2^k when i mod 2^(k+1) = 2^k; the
// broadcast runs the rounds backwards, i sending to i + 2^k when i mod
// 2^(k+1) = 0.
void add_binomial_round(CostTerms& terms, const Layout& layout, const RankGroups& groups,
                        double bytes, int round, bool up) {
  const int distance = 1 << round;
  add_steps(terms, layout, 1, bytes, [&](int rank) -> std::vector<int> {
    const std::vector<int>& members = groups.members_with(rank);
    const int i = groups.position[static_cast<std::size_t>(rank)];
    const int group = static_cast<int>(members.size());
    if (up && i % (2 * distance) == distance) {
      return {members[static_cast<std::size_t>(i - distance)]};
    }
    if (!up && i % (2 * distance) == 0 && i + distance < group) {
      return {members[static_cast<std::size_t>(i + distance)]};
    }
    return {};
  });
}

int largest_group(const RankGroups& groups) {
  std::size_t largest = 1;
  for (const std::vector<int>& members : groups.groups) largest = std::max(largest, members.size());
  return static_cast<int>(largest);
}

}  // namespace

void add_binomial_reduce(CostTerms& terms, const Layout& layout, const RankGroups& groups,
                         double bytes) {
  const int rounds = ceil_log2(largest_group(groups));
  for (int round = 0; round < rounds; ++round) {
    add_binomial_round(terms, layout, groups, bytes, round, /*up=*/true);
  }
}

void add_binomial_broadcast(CostTerms& terms, const Layout& layout, const RankGroups& groups,
                            double bytes) {
  for (int round = ceil_log2(largest_group(groups)) - 1; round >= 0; --round) {
    add_binomial_round(terms, layout, groups, bytes, round, /*up=*/false);
  }
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
  add_steps(terms, layout, 1, bytes, [&](int rank) -> std::vector<int> {
    const Fold fold(layout.ranks(), rank);
    if (fold.sits_out()) return {};
    return {fold.real_rank(fold.new_rank ^ distance)};
  });
}

}  // namespace detail
}  // namespace collbench
