// A collective algorithm: its cost model, its constraints and how to build it.
//
// As in gloo, set-up (buffers, registration, schedules) happens when an
// algorithm is built; run() only communicates and reduces and allocates
// nothing. Each algorithm lives in collectives/<collective>/<name>.cpp with a
// header comment giving its phases and cost; its cost() returns the same
// formula as code, and the model fitter uses exactly these terms. The file
// defines its AlgorithmInfo `extern const` (a const at namespace scope is
// otherwise private to its file), and collectives/registry.cpp lists it in
// its collective's table: adding an algorithm is its file and a table line. Which
// collective an algorithm computes, and the buffers it is built on, are its
// collective's (collbench/collectives/collective.h).
#pragma once

#include <cstddef>
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "collbench/core/dtype.h"
#include "collbench/transport/transport.h"

namespace collbench {

// Where the ranks of a job run: `nodes` nodes of `per_node` ranks each,
// numbered by slot (OpenMPI's --map-by slot: ranks 0..K−1 on the first node)
// or by node (--map-by node: rank r on node r mod N). One rank per node is
// the flat network every one-level cost assumes.
enum class MapBy { slot, node };
struct Layout {
  int nodes = 1;
  int per_node = 1;
  MapBy map_by = MapBy::slot;
  // The pipeline segment of the algorithms that travel in segments
  // (CollectiveSpec::segment_bytes), which their costs count; 0 = the default.
  std::size_t segment_bytes = 0;
  // A two-level fat-tree above the nodes (0: none, every node on one
  // switch): leaf switches of `switch_nodes` consecutive nodes, each with
  // `switch_uplinks` links up, over which the bytes between leaf switches
  // spread evenly (the simulated fat-tree's routing spreads consecutive
  // destinations). switch_nodes / switch_uplinks is the taper: above 1, a
  // step whose nodes all send out of their leaf at once waits for the
  // up-links, not for the NICs.
  int switch_nodes = 0;
  int switch_uplinks = 0;
  static Layout flat(int ranks) { return {ranks, 1, MapBy::slot}; }
  int ranks() const { return nodes * per_node; }
  int node_of(int rank) const { return map_by == MapBy::slot ? rank / per_node : rank % nodes; }
  int switch_of(int node) const { return switch_nodes > 0 ? node / switch_nodes : 0; }
};
std::string_view to_string(MapBy map_by);
// Empty when every node runs as many ranks (`node_of_rank`: each rank's
// node id, Transport::set_nodes); otherwise how many each runs and what to
// do (AlgorithmInfo::needs_equal_ranks_per_node).
std::string uneven_nodes_reason(std::span<const int> node_of_rank);

// α and β of the two levels of a cluster: shared memory inside a node, the
// network between nodes.
struct TwoLevelLinks {
  double intra_alpha = 0, intra_beta = 0;
  double inter_alpha = 0, inter_beta = 0;
};

// Coefficients of the Hockney/α-β-γ model along the critical path:
//   t = messages·α + bytes·β + reduce_bytes·γ
// with α in s per message, β in s per byte, γ in s per byte reduced. On a
// Layout of several ranks per node (AlgorithmInfo::placed_cost) the steps
// whose messages all stay inside a node count in intra_messages and
// intra_bytes, priced with the node's own α and β; a step with any message
// between nodes counts in messages and bytes, its bytes being the most any
// one node's NIC sends or receives in it (its ranks' messages share it). On
// Layout::flat every step is a network step and the intra terms are zero.
struct CostTerms {
  double messages = 0;
  double bytes = 0;
  double reduce_bytes = 0;
  double intra_messages = 0;
  double intra_bytes = 0;
  // One level: α and β price every message and byte alike.
  double seconds(double alpha, double beta, double gamma) const {
    return (messages + intra_messages) * alpha + (bytes + intra_bytes) * beta +
           reduce_bytes * gamma;
  }
  double seconds(const TwoLevelLinks& links, double gamma) const {
    return messages * links.inter_alpha + bytes * links.inter_beta +
           intra_messages * links.intra_alpha + intra_bytes * links.intra_beta +
           reduce_bytes * gamma;
  }
};

// Alltoallv's token routing (collective.h): how unevenly the tokens every
// rank dispatches are shared among the destination ranks, and in which
// direction they travel. The other collectives ignore it.
struct TokenRouting {
  // Zipf exponent of the destination ranks' shares: rank j receives a share
  // proportional to (j + 1)^−skew of every rank's tokens; 0 = uniform.
  double skew = 0;
  // false: dispatch (every rank sends `count`, rank j receives p shares j);
  // true: the transpose, the expert outputs coming back (combine).
  bool returns = false;
  bool operator==(const TokenRouting&) const = default;
};

// The pipeline segment unless CollectiveSpec::segment_bytes says otherwise:
// 512 KiB, 2 MiB and one segment per block were within noise of each other
// here, none winning consistently (docs/performance.md).
inline constexpr std::size_t kDefaultSegmentBytes = 512 * 1024;

struct CollectiveSpec {
  DType dtype = DType::f32;
  ReduceOp op = ReduceOp::sum;  // for the collectives that reduce
  // Elements of the whole vector: what an allreduce reduces, a
  // reduce_scatter scatters and an allgather gathers (the collective's n).
  std::size_t count = 0;
  // The pipeline segment of the algorithms that travel in segments (ring and
  // the ring phases, chain broadcast, double binary tree): the harness's
  // --segment. 0 = the default, kDefaultSegmentBytes.
  std::size_t segment_bytes = 0;
  TokenRouting routing;  // alltoallv only
};

class Collective {
 public:
  virtual ~Collective() = default;
  // One call of the collective on the spans given to build().
  virtual void run() = 0;
};

struct AlgorithmInfo {
  std::string_view name;     // lowercase, the same in file, CLI and CSV
  std::string_view summary;  // one line for --help
  // Empty when the algorithm can run with this transport kind, rank count and
  // element count; otherwise why not (e.g. "needs the mpi transport").
  std::string (*unsupported_reason)(std::string_view transport_kind, int ranks, std::size_t count);
  // Critical-path cost coefficients for `ranks` ranks and a whole vector of
  // `bytes` (the collective's n).
  CostTerms (*cost)(int ranks, double bytes);
  // The reductions on the critical path run on every rank at the same time
  // (ring, recursive doubling, Rabenseifner, sharded parameter server), so
  // ranks on one node share its caches and memory bandwidth while they
  // reduce; false where one rank reduces while the others wait (the tree's
  // root, the central server) or nothing is reduced. collbench-fit prices the
  // former with local/reduce_all and the latter with rank 0's local/reduce.
  bool reduces_on_every_rank;
  // Bytes of memory the algorithm allocates per rank beyond in/out, out of
  // place (in place, an alltoall also copies its input aside: n more).
  std::size_t (*workspace_bytes)(int ranks, std::size_t bytes);
  // Builds the algorithm on `transport` for `in` -> `out`, laid out as its
  // collective says (CollectiveInfo::input_block/output_block); in place
  // when one span lies inside the other at its block's place.
  std::unique_ptr<Collective> (*build)(Transport& transport, const CollectiveSpec& spec,
                                       std::span<const std::byte> in, std::span<std::byte> out);
  // The cost over both levels of a Layout (CostTerms), or null when the
  // algorithm has none; where it is set, `cost` is placed_cost on
  // Layout::flat (detail::flat_cost), so that one formula is written once.
  CostTerms (*placed_cost)(const Layout& layout, double bytes) = nullptr;
  // Needs the same number of ranks on every node (the hierarchical
  // algorithms); the harness refuses it on any other placement.
  bool needs_equal_ranks_per_node = false;
  // The MPI library's own collective with one of its algorithms forced
  // (ompi_*, collbench/collectives/ompi_tuned.h): like `mpi`, no cost model of
  // its own; run only when asked for (--library-algorithms, or by name).
  bool forced_library_algorithm = false;
};

// ⌈lg p⌉ and ⌊lg p⌋ for p >= 1.
int ceil_log2(int p);
int floor_log2(int p);

}  // namespace collbench
