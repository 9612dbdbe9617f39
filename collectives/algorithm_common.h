// Shared plumbing of the hand-written algorithms: buffer binding and
// registration, and the layouts of each collective's buffers. The phases
// they are built from are in phases.h. Internal to the library.
#pragma once

#include <algorithm>
#include <cstddef>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "collbench/collectives/algorithm.h"
#include "collbench/collectives/collective.h"
#include "collbench/core/reduce.h"

namespace collbench::detail {

using collbench::Block;
using collbench::partition;

// `position` mod `ranks`, for positions either side of 0: the index of a
// rank, or of a block, around the ring of p.
inline int ring_index(int position, int ranks) { return (position % ranks + ranks) % ranks; }

// That segment in elements (at least one).
// That segment in bytes, for the costs (Layout::segment_bytes).
inline double segment_bytes_in_force(std::size_t segment_bytes) {
  return static_cast<double>(segment_bytes > 0 ? segment_bytes : kDefaultSegmentBytes);
}
inline std::size_t segment_elements(std::size_t segment_bytes, std::size_t element_bytes) {
  const std::size_t bytes = segment_bytes > 0 ? segment_bytes : kDefaultSegmentBytes;
  return std::max<std::size_t>(1, bytes / element_bytes);
}
// The segments `elements` travel in (0 for none), without overflow.
inline std::size_t segment_count(std::size_t elements, std::size_t segment_elements) {
  return elements == 0 ? 0 : (elements - 1) / segment_elements + 1;
}

// The phases (phases.h) drive an algorithm's buffers and transport.
struct Fold;
struct BinomialTree;
class RingRelay;

// Binds the spans, registers them with the transport, and offers the
// operations every algorithm needs in the units they think in (elements).
// `in` holds the elements `in_block` of the whole vector and `out` those of
// `out_block` (the collective's layout); in place when they overlap, which
// must then be the collective's nesting (the smaller one at its block's place
// in the larger). in_at and out_at index the buffers from their start.
class CollectiveBase : public Collective {
  friend bool fold_in(CollectiveBase&, const Fold&, std::byte*, int, int);
  friend void unfold_out(CollectiveBase&, const Fold&, int);
  friend const std::byte* binomial_reduce(CollectiveBase&, const BinomialTree&, const std::byte*,
                                          std::byte*, std::byte*, std::size_t, int);
  friend void binomial_broadcast(CollectiveBase&, const BinomialTree&, const std::byte*, std::byte*,
                                 std::size_t, int);
  friend void binomial_scatter(CollectiveBase&, const BinomialTree&, const std::byte*, std::byte*,
                               std::size_t, int);
  friend void binomial_gather(CollectiveBase&, const BinomialTree&, std::byte*, std::size_t, int);
  friend class RingRelay;

 public:
  CollectiveBase(Transport& transport, const CollectiveSpec& spec, std::span<const std::byte> in,
                 std::span<std::byte> out, std::string_view collective, Block in_block,
                 Block out_block);

 protected:
  std::byte* out_at(std::size_t element) { return out_ + element * element_bytes_; }
  const std::byte* in_at(std::size_t element) const { return in_ + element * element_bytes_; }
  std::span<std::byte> out_span(Block block) {
    return {out_at(block.offset), block.count * element_bytes_};
  }
  std::size_t bytes(std::size_t elements) const { return elements * element_bytes_; }
  // The call is in place: one buffer lies inside the other (allreduce: the
  // same buffer).
  bool in_place() const { return in_place_; }
  // Allocates and registers a workspace of `elements` elements.
  std::byte* allocate_workspace(std::size_t elements);

  // out = in, unless the call is in place (allreduce, and any collective at
  // one rank, where in and out are the same elements).
  void copy_input_to_output();
  // dst = op(dst, src)
  void reduce(std::byte* dst, const std::byte* src, std::size_t elements) {
    transport_.reduce(spec_.dtype, spec_.op, dst, src, elements);
  }
  // dst = op(first, second), for algorithms that fix operand order so every
  // rank computes bit-identical results.
  void reduce_ordered(std::byte* dst, const std::byte* first, const std::byte* second,
                      std::size_t elements) {
    transport_.reduce_into(spec_.dtype, spec_.op, dst, first, second, elements);
  }
  // dst = op(mine, received) with the operands in rank order (the lower
  // rank's first), so that both ranks of a pairwise exchange compute the
  // same bits. `mine` is dst itself or, for a call's first reduction, the
  // input: out then need not start as a copy of in, a whole-vector copy per
  // call that no cost model has (and on shared memory it rewrites every line
  // the peers read from out in the previous call).
  void reduce_pairwise_from(int peer, std::byte* dst, const std::byte* mine,
                            const std::byte* received, std::size_t elements) {
    if (peer < rank_) {
      reduce_ordered(dst, received, mine, elements);
    } else if (dst == mine) {
      reduce(dst, received, elements);
    } else {
      reduce_ordered(dst, mine, received, elements);
    }
  }
  // dst = src, `bytes` of them (Transport::copy: local work a simulation
  // charges).
  void copy_bytes(std::byte* dst, const std::byte* src, std::size_t bytes) {
    transport_.copy(dst, src, bytes);
  }
  // The avg division, on `block` of out.
  void finish_average(Block block);
  // The rank `offset` places after this one around the ring of ranks (mod
  // p, either direction): ring neighbours, and the block a ring step moves.
  int rank_at(int offset) const { return ring_index(rank_ + offset, ranks_); }
  // Tag `index` (< kTagsPerSlot) of this algorithm object's slot: each
  // algorithm numbers its tags 0, 1, ... in an enum of its own.
  int tag(int index) const { return first_tag_ + index; }

  RequestId send(const std::byte* data, std::size_t elements, int peer, int tag) {
    return transport_.isend({data, bytes(elements)}, peer, tag);
  }
  RequestId recv(std::byte* data, std::size_t elements, int peer, int tag) {
    return transport_.irecv({data, bytes(elements)}, peer, tag);
  }
  // Nothing to wait for costs nothing (a transport's wait polls).
  void wait_all(std::vector<RequestId>& requests) {
    if (requests.empty()) return;
    transport_.wait_all(requests);
    requests.clear();
  }

  Transport& transport_;
  const CollectiveSpec spec_;
  const std::byte* in_;
  std::byte* out_;
  const std::size_t element_bytes_;
  const int rank_;
  const int ranks_;

 private:
  bool in_place_ = false;
  const int first_tag_;
  std::vector<MemoryRegistration> registrations_;
  std::vector<std::unique_ptr<std::byte[]>> workspaces_;
};

// The layouts of the collectives (collbench/collectives/collective.h).
class AllreduceBase : public CollectiveBase {
 public:
  AllreduceBase(Transport& transport, const CollectiveSpec& spec, std::span<const std::byte> in,
                std::span<std::byte> out)
      : CollectiveBase(transport, spec, in, out, "allreduce", {0, spec.count}, {0, spec.count}) {}
};

// in: the whole vector; out: this rank's block.
class ReduceScatterBase : public CollectiveBase {
 public:
  ReduceScatterBase(Transport& transport, const CollectiveSpec& spec, std::span<const std::byte> in,
                    std::span<std::byte> out)
      : CollectiveBase(transport, spec, in, out, "reduce_scatter", {0, spec.count},
                       partition(spec.count, transport.size(), transport.rank())) {}

 protected:
  Block block(int index) const { return partition(spec_.count, ranks_, index); }
};

// in: this rank's block; out: the whole vector.
class AllgatherBase : public CollectiveBase {
 public:
  AllgatherBase(Transport& transport, const CollectiveSpec& spec, std::span<const std::byte> in,
                std::span<std::byte> out)
      : CollectiveBase(transport, spec, in, out, "allgather",
                       partition(spec.count, transport.size(), transport.rank()), {0, spec.count}) {
  }

 protected:
  Block block(int index) const { return partition(spec_.count, ranks_, index); }
  // out's block `index` := in, unless in place (in is already there).
  void place_own_block();
  // Where to send `elements` of out from: in, when they are this rank's
  // own block. Its copy in out was just written by this core, and a peer
  // on another die that reads those lines (vader's single copy reads
  // straight from this rank's memory) waits for them: recursive doubling at
  // 2 ranks, 4 MiB, took 3x the library's time sending from out, the same
  // from in (docs/performance.md).
  const std::byte* send_source(Block elements) const {
    return elements == block(rank_) ? in_ : out_ + bytes(elements.offset);
  }
};

// The rooted collectives, rooted at kRootRank. Broadcast: in is the whole
// vector at the root and nothing elsewhere; out the whole vector everywhere.
class BroadcastBase : public CollectiveBase {
 public:
  BroadcastBase(Transport& transport, const CollectiveSpec& spec, std::span<const std::byte> in,
                std::span<std::byte> out)
      : CollectiveBase(transport, spec, in, out, "broadcast",
                       transport.rank() == kRootRank ? Block{0, spec.count} : Block{},
                       {0, spec.count}) {}

 protected:
  bool is_root() const { return rank_ == kRootRank; }
};

// Reduce: in is the whole vector everywhere; out the whole vector at the
// root and nothing elsewhere.
class ReduceBase : public CollectiveBase {
 public:
  ReduceBase(Transport& transport, const CollectiveSpec& spec, std::span<const std::byte> in,
             std::span<std::byte> out)
      : CollectiveBase(transport, spec, in, out, "reduce", {0, spec.count},
                       transport.rank() == kRootRank ? Block{0, spec.count} : Block{}) {}

 protected:
  bool is_root() const { return rank_ == kRootRank; }
};

// Which elements an alltoall-shaped collective sends each peer and
// receives from it: alltoall's blocks or alltoallv's shares (collective.h).
struct ExchangeLayout {
  std::string_view collective;
  Block (*send_block)(const CollectiveSpec& spec, int ranks, int rank, int peer);
  Block (*receive_block)(const CollectiveSpec& spec, int ranks, int rank, int peer);
};
extern const ExchangeLayout kAlltoallLayout;
extern const ExchangeLayout kAlltoallvLayout;

// in and out: the blocks for and from every rank, in destination and
// source order (collective.h): alltoall's whole vector each, or
// alltoallv's shares. In place (one buffer), the blocks a rank receives
// overwrite blocks it has still to send, and a block's place in out is not
// its place in in (unless the blocks are equal): run() then first copies in
// to a workspace (a local copy no cost model counts) and sends from there.
class AlltoallBase : public CollectiveBase {
 public:
  // `stage_in_place`: false for an algorithm that handles in place itself.
  AlltoallBase(Transport& transport, const CollectiveSpec& spec, std::span<const std::byte> in,
               std::span<std::byte> out, bool stage_in_place = true,
               const ExchangeLayout& layout = kAlltoallLayout);

 protected:
  // The elements of in that go to rank `peer`, of out that come from it
  // (computed when the algorithm is built).
  Block send_block(int peer) const { return send_blocks_[static_cast<std::size_t>(peer)]; }
  Block receive_block(int peer) const { return receive_blocks_[static_cast<std::size_t>(peer)]; }
  // What a call sends from: in, or in place its copy. Call stage_input()
  // first in run().
  const std::byte* input_at(std::size_t element) const { return input_ + element * element_bytes_; }
  // In place: copies in to the workspace input_at reads.
  void stage_input();
  // out's block from this rank := in's block to it.
  void place_own_block();

 private:
  AlltoallBase(Transport& transport, const CollectiveSpec& spec, std::span<const std::byte> in,
               std::span<std::byte> out, bool stage_in_place, const ExchangeLayout& layout,
               std::vector<Block> send_blocks, std::vector<Block> receive_blocks);

  const std::vector<Block> send_blocks_;
  const std::vector<Block> receive_blocks_;
  const std::byte* input_;
  std::byte* staged_ = nullptr;
};

// The pairwise exchange and the MPI library's alltoall(v), on either
// layout: alltoallv's algorithms are alltoall's on its shares
// (collectives/alltoall/pairwise.cpp and mpi.cpp).
std::unique_ptr<Collective> build_pairwise_exchange(Transport& transport,
                                                    const CollectiveSpec& spec,
                                                    std::span<const std::byte> in,
                                                    std::span<std::byte> out,
                                                    const ExchangeLayout& layout);
// The pairwise exchange's cost (alltoall/pairwise.cpp's header comment),
// placed (AlgorithmInfo::placed_cost).
CostTerms pairwise_exchange_cost(const Layout& layout, double n);

// ------------------------------------------------ costs over a Layout
// What AlgorithmInfo::placed_cost is written with: a step is a set of
// messages every rank sends at once; add_steps prices it on the layout as
// CostTerms says (all inside nodes: the intra terms, at the busiest rank's
// messages and bytes; else the network terms, at the most off-node messages
// of one rank and the most off-node bytes of one node's NIC).

// The ranks of a job split into groups, each in group order: the whole job,
// or the ranks of each node, or the ranks of equal local index on every
// node (the hierarchical algorithms' inner and outer groups).
struct RankGroups {
  std::vector<std::vector<int>> groups;
  std::vector<int> group_of;  // by rank
  std::vector<int> position;  // by rank: its index in its group
  const std::vector<int>& members_with(int rank) const {
    return groups[static_cast<std::size_t>(group_of[static_cast<std::size_t>(rank)])];
  }
};
// Ranks with equal key(rank) form a group (groups in order of their lowest
// rank, members ascending).
RankGroups group_by(int ranks, const std::function<int(int)>& key);
RankGroups whole_job(int ranks);
// Groups of ranks by node_of(rank) (nodes in order of their lowest rank,
// ranks ascending), or, across nodes, by index within the node.
RankGroups same_node(int ranks, const std::function<int(int)>& node_of);
RankGroups same_local_index(int ranks, const std::function<int(int)>& node_of);

// A job's ranks grouped by node, across nodes by local index, and the
// nodes' first ranks (their leaders) as one group with every other rank
// alone: the hierarchical algorithms' groups, of a transport (throwing
// std::invalid_argument, the message starting with `algorithm`, unless
// every node runs as many ranks) or of a Layout.
struct NodeGroups {
  NodeGroups(const Transport& transport, std::string_view algorithm);
  explicit NodeGroups(const Layout& layout);
  RankGroups node, across, leaders;
};
// Where the hierarchical reduce_scatter and allgather keep every rank's
// block: in slots of ⌈count/p⌉ elements (the largest block; smaller ones
// padded), local index major, node minor (slot l·N + j: member j of the
// ranks of local index l), so that the N blocks of local index l are one
// contiguous part, part l of K equal parts, and within it member j's block
// is block j of N equal blocks: what the flat ring phases split them into.
struct StagedBlocks {
  StagedBlocks(const NodeGroups& groups, std::size_t count);
  int rank_at(int slot) const { return order[static_cast<std::size_t>(slot)]; }
  std::size_t block_offset(int slot) const { return static_cast<std::size_t>(slot) * padded_block; }
  std::size_t elements() const { return order.size() * padded_block; }
  // The blocks of the ranks of local index `local_index`.
  Block part(int local_index) const {
    const std::size_t size = static_cast<std::size_t>(nodes) * padded_block;
    return {static_cast<std::size_t>(local_index) * size, size};
  }
  // The bytes of a staged copy of `bytes` over `ranks` slots: padding adds
  // less than one element (at most 16 bytes) per slot.
  static std::size_t workspace_bytes(int ranks, std::size_t bytes) {
    return bytes + 16 * static_cast<std::size_t>(ranks);
  }
  std::size_t padded_block = 0;
  int nodes = 1;
  std::vector<int> order;  // the rank whose block each slot holds
};
// The spec the phases of a hierarchical algorithm run with: an average
// summed, to be divided once at the end.
CollectiveSpec summing(CollectiveSpec spec);

// The messages `rank` sends in a step (none: empty): to whom, how many
// bytes. A network step's bytes are its busiest NIC's sum, an intra step's
// its busiest rank's.
struct StepMessage {
  int peer = 0;
  double bytes = 0;
};
using StepMessages = std::function<std::vector<StepMessage>(int rank)>;
void add_sized_steps(CostTerms& terms, const Layout& layout, double steps,
                     const StepMessages& messages);
// The ranks `rank` sends one message of `bytes` to in a step (none: empty).
using StepPeers = std::function<std::vector<int>(int rank)>;
void add_steps(CostTerms& terms, const Layout& layout, double steps, double bytes,
               const StepPeers& peers);
// The p−1 steps of a pairwise exchange: in step d = 1, ..., p−1 every rank
// r sends `bytes` to rank r + d (mod p).
void add_shift_steps(CostTerms& terms, const Layout& layout, double bytes);
// One step in which every rank sends `bytes` to each of the p−1 others at
// once (p−1 messages leave every rank; its network bytes are the busiest
// NIC's).
void add_all_to_all_step(CostTerms& terms, const Layout& layout, double bytes);
// `steps` steps in which every member of a group of two or more sends
// `bytes` to the next member around its group's ring.
void add_ring_steps(CostTerms& terms, const Layout& layout, const RankGroups& groups, double steps,
                    double bytes);
// The rounds of a binomial reduce (up, toward each group's member 0) and
// broadcast (down) within each group (phases.h's BinomialTree, root 0), the
// whole vector of `bytes` in each message.
void add_binomial_reduce(CostTerms& terms, const Layout& layout, const RankGroups& groups,
                         double bytes);
void add_binomial_broadcast(CostTerms& terms, const Layout& layout, const RankGroups& groups,
                            double bytes);
// phases.h's binomial scatter (down from rank 0) and gather (up to it) of
// the whole job's p blocks of `block_bytes`: each message a subtree's blocks.
void add_binomial_scatter(CostTerms& terms, const Layout& layout, double block_bytes);
void add_binomial_gather(CostTerms& terms, const Layout& layout, double block_bytes);

// phases.h's Fold of a job that is not a power of two: its fold step (each
// even rank below 2·rem sends `bytes` to the odd one above it), its unfold
// step (back), and a round among the 2^⌊lg p⌋ participants in which each
// sends `bytes` to the participant whose number differs in `distance`.
// Nothing for a power of two, whose ranks all participate.
void add_fold_step(CostTerms& terms, const Layout& layout, double bytes);
void add_unfold_step(CostTerms& terms, const Layout& layout, double bytes);
void add_participant_round(CostTerms& terms, const Layout& layout, int distance, double bytes);
// Who pairs with participant `participant` in step `step` of the lg p'
// steps among `participants` = p' = 2^k (phases.h: butterfly_peer,
// swing_peer). A pairing: the peer's peer is the participant.
using StepPeer = int (*)(int participant, int step, int participants);
// The same round with `peer`'s pairing of the participants in `step`.
void add_peer_round(CostTerms& terms, const Layout& layout, StepPeer peer, int step, double bytes);

// AlgorithmInfo::cost of an algorithm whose formula is its placed_cost.
template <CostTerms (*placed)(const Layout&, double)>
CostTerms flat_cost(int ranks, double bytes) {
  return placed(Layout::flat(ranks), bytes);
}

// AlgorithmInfo::build for an algorithm class constructed from the build
// arguments.
template <typename Algorithm>
std::unique_ptr<Collective> build_as(Transport& transport, const CollectiveSpec& spec,
                                     std::span<const std::byte> in, std::span<std::byte> out) {
  return std::make_unique<Algorithm>(transport, spec, in, out);
}

// AlgorithmInfo::workspace_bytes of an algorithm that allocates nothing.
inline std::size_t no_workspace(int /*ranks*/, std::size_t /*bytes*/) { return 0; }

// The reasons shared by every hand-written algorithm.
std::string common_unsupported_reason(std::string_view transport_kind, int ranks,
                                      std::size_t count);

}  // namespace collbench::detail
