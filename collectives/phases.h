// The phases algorithms are built from (MPICH's building blocks): the ring
// reduce-scatter and ring allgather, the binomial-tree reduce and broadcast,
// and the fold of a non-power-of-two rank count. Each runs on an algorithm's
// buffers (CollectiveBase) and its tags; an algorithm is a sequence of them,
// e.g. ring allreduce = ring reduce-scatter, then ring allgather (MPICH's
// allreduce_intra_reduce_scatter_allgather). Internal to the library.
#pragma once

#include <cstddef>
#include <vector>

#include "algorithm_common.h"

namespace collbench::detail {

// ---------------------------------------------------------------------------
// Ring phases. The vector is split into p blocks (partition: sizes differ by
// at most one element); rank r receives from r−1 and sends to r+1. In every
// step a rank receives one block and, in the next step, forwards what it now
// holds of that block: in a reduce-scatter step it is first reduced with
// this rank's input of the block, in an allgather step it is kept as it is.
//   reduce-scatter, p−1 steps: (p−1)α + (p−1)/p·nβ + (p−1)/p·nγ
//   allgather, p−1 steps:      (p−1)α + (p−1)/p·nβ
// Blocks travel in segments: as soon as segment k of step s has arrived (and
// been reduced) it is sent on as segment k of step s+1, so sending, receiving
// and reducing overlap (gloo's and NCCL's pipelining). At the boundary from
// reduce-scatter to allgather the sending side goes on (each segment of the
// last reduce-scatter step leaves as the allgather's as soon as it is
// reduced), while the allgather's receives wait for the reduce-scatter's
// sends (RingRelay). Segmenting adds messages but, pipelined, not to the
// critical path's β term.

struct RingStep {
  int block;     // the block (of p) received in this step
  bool reduces;  // reduce-scatter step (true) or allgather step (false)
};

// The p−1 reduce-scatter steps after which this rank holds block
// `final_block` reduced over every rank. Rank r+1's final block must be
// final_block + 1: in step s rank r receives block final_block + p−2−s.
std::vector<RingStep> ring_reduce_scatter_steps(int ranks, int final_block);
// The p−1 allgather steps from holding block `own_block` (rank r+1 holding
// own_block + 1) to holding them all: in step s block own_block − 1 − s.
std::vector<RingStep> ring_allgather_steps(int ranks, int own_block);

// Where an algorithm keeps the data of its ring steps. Offsets in `Block`s
// are elements of the whole vector.
class RingBuffers {
 public:
  // Step 0's outgoing data: `part` of block steps[0].block + 1, this rank's
  // own (its input of it in a reduce-scatter, its block in an allgather).
  virtual const std::byte* ring_source(Block part) = 0;
  // Where `part` of block `incoming`, received in `step`, lands.
  virtual std::byte* ring_arrival(int step, Block incoming, Block part) = 0;
  // A reduce-scatter step's result: where input op arrival is written and
  // then forwarded from (it may be the arrival itself).
  virtual std::byte* ring_sum(int step, Block incoming, Block part) = 0;

 protected:
  ~RingBuffers() = default;
};

// Runs ring steps on an algorithm's buffers. Phases follow each other with
// one rule at their boundary: before an allgather phase posts its receives,
// every send of the reduce-scatter phase before it has completed (the
// allgather overwrites what was forwarded), except the last step's, which
// already carry the allgather's first step. A reduce-scatter phase posts one
// step's receives ahead (in-place arrivals may alternate between two staging
// blocks); an allgather phase posts all of its receives at once (each block
// lands at its own place). Requests are reserved up front: no allocation in
// a call.
//
// Where a reduce-scatter's sums are forwarded from a rotation of
// `sum_rotation` staging blocks (step s's sum in block s mod k, arriving and
// reduced there), step s+1's receives overwrite step s+1−k's sum, which
// left in the forwards of step s+1−k: before posting them the relay waits
// for those forwards. With k = 3 they were sent a whole step earlier, so the
// wait costs nothing in the steady state; k = 0: sums are never reused.
// The rotation a reduce-scatter phase's sums live in when they cannot stay
// in place (reduce_scatter's ring, reduce's reduce_scatter_gather): three
// staging blocks, so that the wait above costs nothing; and their bytes for
// AlgorithmInfo::workspace_bytes (the largest block, ⌈n/p⌉, with room).
inline constexpr int kRingSumRotation = 3;
inline std::size_t ring_sum_rotation_bytes(int ranks, std::size_t bytes) {
  return ranks > 1 ? kRingSumRotation * (bytes / static_cast<std::size_t>(ranks) + 16) : 0;
}

class RingRelay {
 public:
  // `segment_bytes` 0 is the default (512 KiB). Reduce-scatter steps use
  // `reduce_tag`, allgather steps `forward_tag`.
  RingRelay(CollectiveBase& algorithm, RingBuffers& buffers, std::vector<RingStep> steps,
            std::size_t segment_bytes, int reduce_tag, int forward_tag, int sum_rotation = 0);

  // start() posts the first receives and sends step 0's data; finish() runs
  // every step and waits for the last sends. Between the two the algorithm
  // may do local work that nothing sent depends on (allgather: place its own
  // block).
  void start();
  void finish();
  void run() {
    start();
    finish();
  }

 private:
  std::size_t segments_in(std::size_t elements) const;
  Block segment(Block within, std::size_t k) const;
  int tag_of(std::size_t step) const;
  void begin_phase(std::size_t begin);
  void post_receives(std::size_t step, std::vector<RequestId>& requests);
  // Forwards `data` (a part of step `step`) as step + 1's, unless it is last.
  void forward(std::size_t step, const std::byte* data, Block part, std::size_t phase_end);
  void reduce_phase(std::size_t begin, std::size_t end);
  // Waits for the forwards of step `step` and every one before it.
  void wait_forwards_of(std::size_t step);
  // Waits for every send not yet waited for.
  void wait_sends();
  void forward_phase(std::size_t begin, std::size_t end);

  CollectiveBase& algorithm_;
  RingBuffers& buffers_;
  const std::vector<RingStep> steps_;
  const int left_;
  const int right_;
  const int reduce_tag_;
  const int forward_tag_;
  std::size_t segment_elements_ = 1;
  // Fixed by (rank, p, count), so computed once: no division in a call.
  struct Planned {
    Block incoming;
    std::size_t segments;
    std::size_t phase_end;  // the first step of the next phase
  };
  std::vector<Planned> planned_;
  Block first_outgoing_;  // step 0's
  std::size_t first_segments_ = 0;
  std::vector<RequestId> step_receives_[2];  // a reduce-scatter step's, by parity
  std::vector<RequestId> phase_receives_;    // an allgather phase's
  const std::size_t sum_rotation_;
  std::vector<RequestId> sends_;  // the current phase's; those before sends_waited_ are done
  std::size_t sends_waited_ = 0;
  std::vector<std::size_t> forwards_end_;  // sends_.size() after each step's forwards
  std::vector<RequestId> handoff_sends_;   // the next phase's first step's
};

// ---------------------------------------------------------------------------
// Binomial-tree phases, rooted at `root`. With v = (rank − root) mod p, the
// parent of v ≠ 0 is v with its lowest set bit cleared, and v's children are
// v + 2^k for every 2^k below that bit (below p for the root), nearest first.
// v's subtree is the relative ranks [v, v + 2^j) (2^j its lowest set bit, p
// for the root), cut at p. ⌈lg p⌉ rounds each way. The reduce and broadcast
// move whole vectors, unsegmented: on the critical path the vector crosses
// ⌈lg p⌉ links and, in the reduce, is reduced ⌈lg p⌉ times. The scatter
// and gather move blocks (partition(count, p, v) for relative rank v): a
// subtree's blocks are one contiguous range, and the root's link carries
// every block but its own. With root 0 (kRootRank, every caller's) block v
// is real rank v's, the block the ring phases index it by.
//   reduce:    ⌈lg p⌉α + ⌈lg p⌉·nβ + ⌈lg p⌉·nγ
//   broadcast: ⌈lg p⌉α + ⌈lg p⌉·nβ
//   scatter:   ⌈lg p⌉α + (p−1)/p·nβ
//   gather:    ⌈lg p⌉α + (p−1)/p·nβ
struct BinomialTree {
  BinomialTree(int ranks, int rank, int root);
  bool is_root() const { return parent < 0; }
  // The elements of the blocks of relative rank `v`'s subtree, for a whole
  // vector of `count` elements.
  Block subtree_elements(std::size_t count, int v) const;
  // Relative rank of real rank `real_rank`.
  int relative_of(int real_rank) const { return ring_index(real_rank - root, ranks); }
  int ranks = 1;
  int root = 0;
  int relative = 0;  // this rank's v
  int parent = -1;
  std::vector<int> children;  // real ranks, nearest first
};

// Reduce up the tree: this rank reduces its children's vectors, nearest
// first as their subtrees finish in that order, with its own (`input`,
// `count` elements) and sends the partial result to its parent. Returns
// where this rank's partial result is: `accumulator` once a child was
// reduced (the first child's vector is received straight into it,
// unwritten until then, unless it is the input: in place; later children's
// into `staging`, count elements), else `input`. The root's is the
// reduction over every rank. Operands combine in the tree's order (a rank's
// own first, then its subtrees'), which for root ≠ 0 is not rank order: the
// same result for these commutative ops, not always the same bits.
const std::byte* binomial_reduce(CollectiveBase& algorithm, const BinomialTree& tree,
                                 const std::byte* input, std::byte* accumulator, std::byte* staging,
                                 std::size_t count, int tag);
// Broadcast down the tree: the root sends `root_data`, a non-root receives
// `data` (`count` elements) from its parent; then every rank sends to its
// children farthest first, so the deepest subtree starts earliest, one
// child at a time: concurrent sends would share this rank's link and delay
// the farthest subtree, costing more than nβ per round. The root's data may
// be `data` itself.
void binomial_broadcast(CollectiveBase& algorithm, const BinomialTree& tree,
                        const std::byte* root_data, std::byte* data, std::size_t count, int tag);
// Scatter down the tree: each child gets its subtree's blocks (of a whole
// vector of `count` elements), farthest child (the largest subtree) first,
// one at a time as in the broadcast. The root sends from `root_data`; a
// non-root receives its subtree's blocks at their places in `data` (a whole
// vector) and forwards from there.
void binomial_scatter(CollectiveBase& algorithm, const BinomialTree& tree,
                      const std::byte* root_data, std::byte* data, std::size_t count, int tag);
// Gather up the tree: with this rank's block at its place in `data` (a
// whole vector of `count` elements), receives every child's subtree blocks
// at their places (all children at once: the places are disjoint), then
// sends its own subtree's blocks to its parent. The root ends with every
// block.
void binomial_gather(CollectiveBase& algorithm, const BinomialTree& tree, std::byte* data,
                     std::size_t count, int tag);

// ---------------------------------------------------------------------------
// Folding a non-power-of-two rank count p into p' = 2^⌊lg p⌋ (MPICH's
// scheme): among the first 2·rem ranks (rem = p − p'), each even rank sends
// its vector to the odd rank above it and sits out; the odd ranks and every
// rank ≥ 2·rem form the p' participants, numbered 0..p'−1. Cost: α + nβ + nγ
// in, α + nβ out (allreduce), on top of the power-of-two core.
struct Fold {
  Fold(int ranks, int rank);
  int pof2;
  int rem;
  int new_rank;  // −1 for a rank that sits out
  bool sits_out() const { return new_rank < 0; }
  // The largest share of the vector that `participants` consecutive
  // participants stand for: the first ones, each of whom absorbed a rank
  // (the blocks of d + min(d, rem) ranks of p). A round that swaps, or gives
  // away, d participants' blocks takes this long on its critical path,
  // more than d/p' of the vector when p is not a power of two.
  double largest_share(int participants) const {
    return static_cast<double>(participants + std::min(participants, rem)) / (pof2 + rem);
  }
  // The real rank of participant `participant`.
  int real_rank(int participant) const {
    return participant < rem ? participant * 2 + 1 : participant + rem;
  }
  // The ranks whose blocks participant `participant` stands for, as a range
  // of block indices: its own and, below 2·rem, that of the rank it
  // absorbed. Consecutive participants own consecutive ranges, so a range of
  // participants owns one contiguous range of the vector (the halving and
  // doubling of reduce_scatter and allgather work on those).
  Block blocks_of(int participant) const {
    return participant < rem ? Block{static_cast<std::size_t>(2 * participant), 2}
                             : Block{static_cast<std::size_t>(participant + rem), 1};
  }
  // The elements of participants [first, first + participants) for a whole
  // vector of `count` elements over `ranks` blocks.
  Block elements_of(std::size_t count, int ranks, int first, int participants) const;
};

// The fold and unfold around the power-of-two core of recursive_doubling
// and rabenseifner. fold_in: a rank that sits out sends its input to its
// partner and receives the finished result into `out`, and returns true —
// its call is done; the partner writes out = its input op that vector, so
// from then on its vector is in `out` (every rank at or above 2·rem still has
// it in `in`). unfold_out: the partner returns the result.
bool fold_in(CollectiveBase& algorithm, const Fold& fold, std::byte* staging, int fold_tag,
             int unfold_tag);
void unfold_out(CollectiveBase& algorithm, const Fold& fold, int unfold_tag);

// Recursive doubling's peers (a StepPeer): in step s participant v pairs
// with the one whose number differs in bit s, 2^s away.
inline int butterfly_peer(int participant, int step, int /*participants*/) {
  return participant ^ (1 << step);
}

// ---------------------------------------------------------------------------
// Swing's peers (De Sensi, Bonato, Saam & Hoefler, NSDI'24) on a 1-D torus
// of `participants` = 2^k (a StepPeer): in step s rank r pairs with r + ρ_s when r is even and
// r − ρ_s when r is odd (mod p), where ρ_s = Σ_{i≤s} (−2)^i =
// (1 − (−2)^(s+1))/3 = 1, −1, 3, −5, 11, ... Since |ρ_s| ≤ (2^(s+1)+1)/3,
// the peers of the later steps are nearer than recursive doubling's 2^s
// (fewer hops on a torus), and ρ_s is odd, so the pairing is symmetric.
// After steps 0..s a rank has heard, directly or through its peers, from
// 2^(s+1) ranks, each once (the paper's Lemma; swing_bandwidth checks it
// when it is built). On a torus of several dimensions the same peers are
// taken along each dimension (allreduce/swing_torus.cpp).
inline int swing_distance(int step) {
  int rho = 1;
  for (int power = -2, i = 1; i <= step; ++i, power *= -2) rho += power;
  return rho;
}
inline int swing_peer(int participant, int step, int participants) {
  const int rho = swing_distance(step);
  return ring_index(participant % 2 == 0 ? participant + rho : participant - rho, participants);
}

}  // namespace collbench::detail
