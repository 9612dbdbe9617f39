// double_binary_tree — two complementary binary trees, each reducing and
// then broadcasting half of the vector, pipelined in segments (NCCL's tree
// allreduce; Sanders, Speck & Träff 2009).
//
// The trees. Positions 0..p−1 form one in-order binary tree (x = position
// + 1, lowest set bit b): x's children are x − b/2 and the first of x + b/2,
// x + b/4, ..., x + 1 that is ≤ p; the root is x = 2^⌊lg p⌋. Every even x
// (odd position) has a child and every odd x is a leaf; the height is
// ⌊lg p⌋. Tree 0 puts rank r at position r, tree 1 at position r − 1 (mod
// p): the inner nodes of tree 0 are the odd ranks, those of tree 1 the even
// ranks (all but rank 0 when p is odd), so every rank is a leaf in at least
// one tree and an inner node in at most one, and no rank carries more than
// one tree's inner traffic. Tree t carries half t of the vector.
//   Reduce, per segment: a leaf sends its input's segment to its parent; an
//     inner node receives its children's (all receives posted up front, into
//     staging), reduces them with its input and sends the sum on; the root's
//     sum is the result (avg divided there).
//   Broadcast, per segment: the root sends the result to its children; an
//     inner node receives it into out and forwards it; a leaf receives it.
// Both trees and both directions run at once: a rank handles its events in
// the order of the lock-step schedule below (segment k leaves a node of
// height g upward in transfer k + g and a node of depth d downward in
// transfer k + h + d), which is deadlock free since every wait is for a
// message of an earlier transfer. In place, a leaf's result segment lands
// where its input segment was sent from, so its receive is posted once that
// send is complete (and an inner node's once its input segment is reduced).
//
// Cost (p ranks, n bytes, h = ⌊lg p⌋, S = ⌈n/2 ÷ segment⌉ (--segment, 512 KiB by default) segments
// of s = n/(2S) per half): S + 2h − 1 transfers in lock step, each one α (a rank posts all of a
// transfer's messages before it waits for any, so their latencies overlap), its busiest link's
// bytes·β (at most 4 segments each way at a rank: its inner tree's parent and two children, its
// leaf tree's parent) and its busiest reducer's bytes·γ (two children's segments, which the sends
// of the transfer wait for). One segment (small n): 2h·α and the h levels' reductions one after
// the other (at most n·γ each); in the steady state 2nβ + nγ over the S transfers (ring:
// 2(p−1)/p·nβ) with latency logarithmic in p (ring: linear). With several segments a rank's
// reductions can overlap the next segments' flows, which lock step does not credit: an upper
// bound there, as ring's cost is.
#include <algorithm>
#include <array>
#include <cmath>
#include <vector>

#include "algorithm_common.h"

namespace collbench {
namespace {

// This algorithm's tags: offsets in its slot (CollectiveBase::tag), by tree.
enum Tag : int { kUpTag, kDownTag };
int tree_tag(int tree, Tag tag) { return 2 * tree + tag; }

// The in-order tree of positions 0..p−1 (the header comment).
struct PositionTree {
  // At most two, without a heap allocation per node: every rank builds
  // the whole tree of p nodes.
  struct Children {
    std::array<int, 2> positions{};
    int size = 0;
    void push_back(int position) { positions[static_cast<std::size_t>(size++)] = position; }
    const int* begin() const { return positions.data(); }
    const int* end() const { return positions.data() + size; }
  };
  struct Node {
    int parent = -1;  // position, −1 at the root
    Children children;
    int depth = 0;
    int height = 0;  // edges to its deepest leaf
  };
  explicit PositionTree(int ranks) : nodes(static_cast<std::size_t>(ranks)) {
    const int p = ranks;
    for (int x = 1; x <= p; ++x) {
      const int b = x & -x;
      if (b == 1) continue;
      Children& children = node(x - 1).children;
      children.push_back(x - b / 2 - 1);
      for (int c = b / 2; c >= 1; c /= 2) {
        if (x + c <= p) {
          children.push_back(x + c - 1);
          break;
        }
      }
      for (const int child : children) node(child).parent = x - 1;
    }
    root = (1 << floor_log2(p)) - 1;
    // Children have a lower lowest bit than their parent: heights from the
    // lowest bit up, depths from the highest down.
    for (int b = 2; b <= p; b *= 2) {
      for (int x = b; x <= p; x += 2 * b) {
        for (const int child : node(x - 1).children) {
          node(x - 1).height = std::max(node(x - 1).height, node(child).height + 1);
        }
      }
    }
    for (int b = 1 << floor_log2(p); b >= 2; b /= 2) {
      for (int x = b; x <= p; x += 2 * b) {
        for (const int child : node(x - 1).children) node(child).depth = node(x - 1).depth + 1;
      }
    }
    height = node(root).height;
  }
  Node& node(int position) { return nodes[static_cast<std::size_t>(position)]; }
  const Node& node(int position) const { return nodes[static_cast<std::size_t>(position)]; }
  std::vector<Node> nodes;
  int root = 0;
  int height = 0;
};

// Rank r sits at position r − t (mod p) of tree t.
int tree_rank(int position, int tree, int ranks) { return (position + tree) % ranks; }
int position_of(int rank, int tree, int ranks) { return (rank - tree + ranks) % ranks; }

class DoubleBinaryTreeAllreduce final : public detail::AllreduceBase {
 public:
  DoubleBinaryTreeAllreduce(Transport& transport, const CollectiveSpec& spec,
                            std::span<const std::byte> in, std::span<std::byte> out)
      : AllreduceBase(transport, spec, in, out),
        segment_elements_(detail::segment_elements(spec.segment_bytes, element_bytes_)) {
    if (ranks_ < 2) return;
    const PositionTree shape(ranks_);
    struct Timed {
      std::size_t time;
      Event event;
    };
    std::vector<Timed> timed;
    std::size_t all_segments = 0;
    for (int t = 0; t < 2; ++t) {
      Role& role = roles_[t];
      const PositionTree::Node& node = shape.node(position_of(rank_, t, ranks_));
      role.half = detail::partition(spec.count, 2, t);
      role.segments = detail::segment_count(role.half.count, segment_elements_);
      role.parent = node.parent < 0 ? -1 : tree_rank(node.parent, t, ranks_);
      for (const int child : node.children) role.children.push_back(tree_rank(child, t, ranks_));
      for (std::size_t c = 0; c < role.children.size(); ++c) {
        role.staging[c] = allocate_workspace(role.half.count);
      }
      role.child_receives.resize(role.children.size() * role.segments);
      role.result_receives.resize(role.segments);
      role.leaf_sends.resize(role.segments);
      all_segments += role.segments;
      const auto g = static_cast<std::size_t>(node.height);
      const auto down = static_cast<std::size_t>(shape.height + node.depth);
      for (std::size_t k = 0; k < role.segments; ++k) {
        if (!role.children.empty()) timed.push_back({k + g, {t, /*up=*/true, k}});
        if (role.parent >= 0) timed.push_back({k + down, {t, /*up=*/false, k}});
      }
    }
    // Ties: upward before downward, tree 0 before tree 1 (any order of one
    // transfer's events is deadlock free).
    std::stable_sort(timed.begin(), timed.end(), [](const Timed& a, const Timed& b) {
      if (a.time != b.time) return a.time < b.time;
      return a.event.up && !b.event.up;
    });
    for (const Timed& entry : timed) events_.push_back(entry.event);
    // At most: a segment to the parent and to two children per segment of
    // each tree.
    sends_.reserve(3 * all_segments);
  }

  void run() override {
    if (ranks_ < 2) {
      copy_input_to_output();
      finish_average({0, spec_.count});
      return;
    }
    for (int t = 0; t < 2; ++t) post_up_front(t);
    for (const Event& event : events_) {
      if (event.up) {
        reduce_segment(event.tree, event.k);
      } else {
        forward_result(event.tree, event.k);
      }
    }
    wait_all(sends_);
  }

 private:
  struct Event {
    int tree;
    bool up;  // the reduce's step at this rank, or the broadcast's
    std::size_t k;
  };
  // This rank in one tree.
  struct Role {
    detail::Block half;
    std::size_t segments = 0;
    int parent = -1;
    std::vector<int> children;
    std::array<std::byte*, 2> staging{};     // a half each, by child
    std::vector<RequestId> child_receives;   // [child · segments + k]
    std::vector<RequestId> result_receives;  // [k]
    std::vector<RequestId> leaf_sends;       // [k], in place only
  };

  detail::Block segment(const Role& role, std::size_t k) const {
    const std::size_t begin = k * segment_elements_;
    return {role.half.offset + begin, std::min(segment_elements_, role.half.count - begin)};
  }
  std::byte* staged(const Role& role, std::size_t child, detail::Block part) const {
    return role.staging[child] + bytes(part.offset - role.half.offset);
  }
  bool leaf_in_place(const Role& role) const { return in_place() && role.children.empty(); }

  // The receives nothing overwrites before they land, and a leaf's sends.
  void post_up_front(int t) {
    Role& role = roles_[t];
    for (std::size_t c = 0; c < role.children.size(); ++c) {
      for (std::size_t k = 0; k < role.segments; ++k) {
        const detail::Block part = segment(role, k);
        role.child_receives[c * role.segments + k] =
            recv(staged(role, c, part), part.count, role.children[c], tag(tree_tag(t, kUpTag)));
      }
    }
    if (role.children.empty()) {
      for (std::size_t k = 0; k < role.segments; ++k) {
        const detail::Block part = segment(role, k);
        const RequestId id =
            send(in_at(part.offset), part.count, role.parent, tag(tree_tag(t, kUpTag)));
        (leaf_in_place(role) ? role.leaf_sends[k] : sends_.emplace_back()) = id;
      }
    }
    if (!in_place() && role.parent >= 0) {
      for (std::size_t k = 0; k < role.segments; ++k) post_result_receive(t, k);
    }
  }

  void post_result_receive(int t, std::size_t k) {
    Role& role = roles_[t];
    const detail::Block part = segment(role, k);
    role.result_receives[k] =
        recv(out_at(part.offset), part.count, role.parent, tag(tree_tag(t, kDownTag)));
  }

  // Segment k's children's sums, reduced with this rank's input: sent up,
  // or at the root the result, sent down.
  void reduce_segment(int t, std::size_t k) {
    Role& role = roles_[t];
    const detail::Block part = segment(role, k);
    const bool root = role.parent < 0;
    std::byte* sum = root ? out_at(part.offset) : staged(role, 0, part);
    for (std::size_t c = 0; c < role.children.size(); ++c) {
      transport_.wait(role.child_receives[c * role.segments + k]);
      if (c == 0) {
        reduce_ordered(sum, in_at(part.offset), staged(role, 0, part), part.count);
      } else {
        reduce(sum, staged(role, c, part), part.count);
      }
    }
    if (root) {
      finish_average(part);
      send_to_children(t, part);
      return;
    }
    sends_.push_back(send(sum, part.count, role.parent, tag(tree_tag(t, kUpTag))));
    if (in_place()) post_result_receive(t, k);  // the input segment is read
  }

  void forward_result(int t, std::size_t k) {
    Role& role = roles_[t];
    if (leaf_in_place(role)) {
      transport_.wait(role.leaf_sends[k]);
      post_result_receive(t, k);
    }
    transport_.wait(role.result_receives[k]);
    send_to_children(t, segment(role, k));
  }

  void send_to_children(int t, detail::Block part) {
    for (const int child : roles_[t].children) {
      sends_.push_back(send(out_at(part.offset), part.count, child, tag(tree_tag(t, kDownTag))));
    }
  }

  const std::size_t segment_elements_;
  std::array<Role, 2> roles_;
  std::vector<Event> events_;  // this rank's, in schedule order
  std::vector<RequestId> sends_;
};

// The lock-step schedule of the header comment, each transfer priced on the
// layout at its busiest link and its busiest reducer; the transfers of the
// steady state, where every edge of both trees is busy, are identical and
// priced once. One α per transfer, not one per message: a transfer's
// messages are all posted before any is waited for, so their latencies
// overlap (with a per-message overhead o each would add o, which the α-β-γ
// terms leave out, as for the sharded parameter server's small shards).
CostTerms double_binary_tree_cost(const Layout& layout, double n) {
  const int p = layout.ranks();
  if (p < 2) return {};
  const PositionTree shape(p);
  const double half = n / 2;
  const auto segments = static_cast<long long>(
      std::max(1.0, std::ceil(half / detail::segment_bytes_in_force(layout.segment_bytes))));
  const double segment = half / static_cast<double>(segments);
  const long long h = shape.height;
  const auto busy = [segments](long long transfer, long long start) {
    return transfer >= start && transfer < start + segments;
  };
  CostTerms terms;
  for (long long transfer = 0; transfer < segments + 2 * h - 1;) {
    const bool steady = transfer >= 2 * h - 1 && transfer <= segments - 1;
    const auto repeats = static_cast<double>(steady ? segments - transfer : 1);
    CostTerms step;
    detail::add_sized_steps(step, layout, 1, [&](int rank) -> std::vector<detail::StepMessage> {
      std::vector<detail::StepMessage> messages;
      for (int t = 0; t < 2; ++t) {
        const PositionTree::Node& node = shape.node(position_of(rank, t, p));
        if (node.parent >= 0 && busy(transfer, node.height)) {
          messages.push_back({tree_rank(node.parent, t, p), segment});
        }
        if (busy(transfer, h + node.depth)) {
          for (const int child : node.children) {
            messages.push_back({tree_rank(child, t, p), segment});
          }
        }
      }
      return messages;
    });
    (step.messages > 0 ? terms.messages : terms.intra_messages) += repeats;
    terms.bytes += repeats * step.bytes;
    terms.intra_bytes += repeats * step.intra_bytes;
    // The segments reduced before this transfer's sends: at a node of
    // height g ≥ 1 segment k in transfer k + g, its children's copies. On the
    // critical path: the sends wait for them (a rank is inner in one tree).
    int most_children = 0;
    for (int position = 0; position < p; ++position) {
      const PositionTree::Node& node = shape.node(position);
      if (node.height > 0 && busy(transfer, node.height)) {
        most_children = std::max(most_children, node.children.size);
      }
    }
    terms.reduce_bytes += repeats * static_cast<double>(most_children) * segment;
    transfer += static_cast<long long>(repeats);
  }
  return terms;
}

// A staging half per child, in the one tree where this rank has children.
std::size_t double_binary_tree_workspace(int p, std::size_t n) {
  return p > 1 ? n + 2 * sizeof(double) : 0;
}

}  // namespace

extern const AlgorithmInfo kDoubleBinaryTreeAllreduce = {
    "double_binary_tree",
    "two complementary binary trees, each reducing and broadcasting half, pipelined in segments "
    "(NCCL's tree); log latency, ≈ 2nβ",
    detail::common_unsupported_reason,
    detail::flat_cost<double_binary_tree_cost>,
    /*reduces_on_every_rank=*/true,  // every inner node of both trees reduces at once
    double_binary_tree_workspace,
    detail::build_as<DoubleBinaryTreeAllreduce>,
    double_binary_tree_cost,
};

}  // namespace collbench
