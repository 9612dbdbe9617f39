// The collectives: one CollectiveInfo per collective, the table that every
// layer reads (the harness plans, prepares, calls and checks a collective
// through it; the fitter, the selection and the predictor group by its name
// and its algorithms'; --list-algorithms prints it).
//
// Every collective is described for a whole vector of n bytes (`count`
// elements), nccl-tests' size convention: an allreduce reduces n bytes on
// every rank, a reduce_scatter reduces n and leaves each rank its block, an
// allgather gathers the blocks into n on every rank, a broadcast sends the
// root's n to every rank, a reduce reduces every rank's n to the root, an
// alltoall sends n in p blocks, one to every rank, and an alltoallv
// dispatches n in p uneven shares (below). Blocks are partition(count, p,
// r): sizes differ by at most one element, so any count works, counts
// smaller than p included.
//
//   collective       input of rank r     output of rank r    busbw factor
//   allreduce        whole vector        whole vector        2(p−1)/p
//   reduce_scatter   whole vector        block r             (p−1)/p
//   allgather        block r             whole vector        (p−1)/p
//   broadcast        whole at the root   whole vector        1
//   reduce           whole vector        whole at the root   1
//   alltoall         whole vector        whole vector        (p−1)/p
//   alltoallv        whole vector        p shares r          (p−1)/p
//    (returning)     p shares r          whole vector        (p−1)/p
// The rooted collectives' root is rank 0 (kRootRank); elsewhere their input
// (broadcast) or output (reduce) is empty, as MPI ignores those buffers.
//
// Lower bounds (any algorithm; p > 1, 0 at p = 1):
//   allreduce        ⌈lg p⌉α + 2(p−1)/p·nβ + (p−1)/p·nγ
//   reduce_scatter   ⌈lg p⌉α + (p−1)/p·nβ + (p−1)/p·nγ
//   allgather        ⌈lg p⌉α + (p−1)/p·nβ
//   broadcast        ⌈lg p⌉α + nβ
//   reduce           ⌈lg p⌉α + nβ + (p−1)/p·nγ
//   alltoall         ⌈lg p⌉α + (p−1)/p·nβ   (each term alone; see below)
//   alltoallv        ⌈lg p⌉α + (p−1)·s_max·β (s_max the largest share;
//                    (p−1)/p·n when uniform)
//
// In place: the smaller buffer is the larger one's block r (for allreduce,
// alltoall, and the root of broadcast and reduce, the one buffer), as NCCL
// lays in-place reduce_scatter and allgather out. (An in-place alltoall
// copies its input aside first: the blocks it receives overwrite blocks
// still to be sent.)
// Lower bounds: Thakur, Rabenseifner & Gropp (2005); Chan et al. (2007);
// alltoall: Bruck, Ho, Kipnis, Upfal & Weathersby (1997).
//
// Alltoall's blocks. With c_d = partition(count, p, d).count, rank i sends
// rank j = (i + d) mod p a block of c_d elements: the block a rank sends to
// the rank d places ahead is part d of the partition. Every rank sends and
// receives exactly `count` elements (its own block included), and when p
// divides count this is MPI_Alltoall's layout. Rank i's input holds its
// blocks in destination order (the one for rank j at offset
// Σ_{j'<j} c_{(j'−i) mod p}), rank j's output in source order (the one from
// rank i at Σ_{i'<i} c_{(j−i') mod p}): alltoall_send_block and
// alltoall_receive_block, the one place that says so.
// Alltoall's bound holds for each term alone and no algorithm meets both
// (Bruck et al. 1997, one-port model): ⌈lg p⌉ rounds are needed for every
// rank to hear from every other, and (p−1)/p·n bytes leave every rank; but
// an algorithm that sends every byte once (pairwise, linear) takes p−1
// rounds, and one in ⌈lg p⌉ rounds (Bruck) sends about ⌈lg p⌉/2·n bytes.
//
// Alltoallv: mixture-of-experts token routing (CollectiveSpec::routing).
// Every rank dispatches its n (count elements: its tokens' copies, top-k
// per token) to the experts' ranks, and every rank routes alike: rank j
// gets share s_j of every rank's vector, s_j ∝ (j + 1)^−skew (Zipf; rank 0
// holds the most popular experts), rounded so that the shares sum to count
// exactly (alltoallv_share). Dispatch: rank i's input holds its shares in
// destination order (the one for rank j at s_0 + ... + s_{j−1}); rank j's
// output, p·s_j elements, holds rank i's share at i·s_j. Returning (the
// combine, routing.returns) is the transpose: rank j sends each rank i its
// s_j elements back from i·s_j, and rank i's output is its whole vector
// again. A skewed routing loads rank 0's port with p·s_0 elements where a
// uniform one gives n: the hot expert that makes MoE steps slow. The
// algorithms' cost() prices the uniform routing, the only one a size alone
// determines; the skew's extra is the measured excess over it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "collbench/collectives/algorithm.h"
#include "collbench/core/check.h"

namespace collbench {

// A contiguous range of elements of the whole vector.
struct Block {
  std::size_t offset = 0;
  std::size_t count = 0;
  bool operator==(const Block&) const = default;
};

// Block `index` of `count` elements split into `parts` blocks whose sizes
// differ by at most one (the first count % parts blocks get one more).
Block partition(std::size_t count, int parts, int index);

// Alltoall's layout (above): the elements of rank `rank`'s input it sends to
// rank `peer`, and of its output it receives from rank `peer`, for a vector
// of `count` elements on `ranks` ranks.
Block alltoall_send_block(std::size_t count, int ranks, int rank, int peer);
Block alltoall_receive_block(std::size_t count, int ranks, int rank, int peer);

// Alltoallv's layout (above): share s_`destination` of a vector of
// spec.count elements routed by spec.routing over `ranks` ranks; and the
// elements of rank `rank`'s input it sends to rank `peer`, and of its
// output it receives from rank `peer`.
std::size_t alltoallv_share(const CollectiveSpec& spec, int ranks, int destination);
Block alltoallv_send_block(const CollectiveSpec& spec, int ranks, int rank, int peer);
Block alltoallv_receive_block(const CollectiveSpec& spec, int ranks, int rank, int peer);

struct CollectiveInfo {
  std::string_view name;     // lowercase, the same in CLI, benchmark names and CSV
  std::string_view summary;  // one line for --help
  bool reduces;              // takes a dtype's reduction op (else only moves bytes)
  // The elements of the whole vector that rank `rank` of `ranks` gives as
  // input and receives as output, for spec.count elements (and alltoallv's
  // spec.routing); alltoallv's output of p shares is no part of the vector,
  // and starts at 0.
  Block (*input_block)(const CollectiveSpec& spec, int ranks, int rank);
  Block (*output_block)(const CollectiveSpec& spec, int ranks, int rank);
  // nccl-tests' bus bandwidth (doc/PERFORMANCE.md): busbw = algbw · factor,
  // algbw = n / time, so that busbw is comparable with the link's speed
  // whatever the collective.
  double (*bus_bandwidth_factor)(int ranks);
  std::string_view bus_bandwidth_formula;  // that factor as --help prints it, "2(p-1)/p"
  // The cost no algorithm can beat (one copy: the fitter's and the `mpi`
  // algorithm's model, since the library's schedule is unknown).
  CostTerms (*lower_bound)(int ranks, double bytes);
  // Compares rank `rank`'s output (its output_block) with what the
  // collective must deliver for inputs filled by fill_input with the same
  // `first` (the global index of the vector's element 0).
  CheckResult (*check_output)(const CheckPattern& pattern, const CollectiveSpec& spec, int rank,
                              std::uint64_t first, std::span<const std::byte> output);
  // Its algorithms, in the order they are listed everywhere; the MPI
  // library's own is last and named "mpi", after the library's algorithms
  // forced one by one (ompi_*, collbench/collectives/ompi_tuned.h).
  std::span<const AlgorithmInfo> algorithms;

  const AlgorithmInfo* find_algorithm(std::string_view algorithm) const;  // nullptr when unknown
  std::string algorithm_names() const;  // "ring, tree, ..." for messages
};

// Every collective, in the order they are listed everywhere.
std::span<const CollectiveInfo> collectives();
// nullptr when unknown.
const CollectiveInfo* find_collective(std::string_view name);
// "allreduce, reduce_scatter, ..." — for messages that say what is accepted.
std::string collective_names();
// The name of the MPI library's own algorithm in every collective: the
// vendor baseline the hand-written ones are compared with.
inline constexpr std::string_view kMpiLibraryAlgorithm = "mpi";
// The library's own collective, by its choice (`mpi`) or with one of its
// algorithms forced (ompi_*): no cost model of its own, and a call collbench
// cannot interrupt.
inline bool is_library_algorithm(const AlgorithmInfo& info) {
  return info.name == kMpiLibraryAlgorithm || info.forced_library_algorithm;
}
// The root of the rooted collectives (broadcast, reduce): nccl-tests' and
// the OSU benchmarks' default.
inline constexpr int kRootRank = 0;

// Writes rank `rank`'s input (its input_block of the pattern) to `input`.
// `first` is the global index of the vector's element 0: 0 for one call;
// calls checked as one vector (an exchange's messages) continue each other's
// indices, so that one delivered in place of another is wrong.
void fill_input(const CollectiveInfo& collective, const CheckPattern& pattern,
                const CollectiveSpec& spec, int rank, std::uint64_t first,
                std::span<std::byte> input);
// The global indices a call's inputs take on any rank, [first, first + n):
// where the next call of an exchange continues (count, or for alltoallv's
// returning shares the largest input).
std::size_t input_index_span(const CollectiveInfo& collective, const CollectiveSpec& spec,
                             int ranks);
// The elements of the largest input or output any rank holds (count, or an
// alltoallv's expert side): what an algorithm's unsupported_reason must
// accept, since the MPI library counts them and their offsets in ints.
std::size_t largest_buffer_elements(const CollectiveInfo& collective, const CollectiveSpec& spec,
                                    int ranks);

}  // namespace collbench
