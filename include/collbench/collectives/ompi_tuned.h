// Open MPI's coll_tuned algorithms as collbench rows: `ompi_<name>` in each
// collective's table, the library's own collective with one of its
// algorithms forced, so that a run measures every choice the library has
// and collbench-fit can write the rules file the library reads
// (collbench/models/tuning.h).
//
// One table (ompi_tuned.cpp) holds, per collective, Open MPI's name for it
// (its control variable is coll_tuned_<library>_algorithm), its id in a
// dynamic rules file, and each algorithm's row name and id. Open MPI 4.1's
// values; the library itself is the check: a row runs only where
// coll_tuned_<library>_algorithm has an enumerator of that id whose name is
// the row's without "ompi_" ('-' read as '_'), and otherwise says what it
// lacks.
//
// Forcing (collectives/mpi/): with coll_tuned_use_dynamic_rules set at
// launch (read-only afterwards), the row writes the control variable through
// MPI_T, duplicates the transport's communicator (coll_tuned reads the value
// when a communicator is created) and writes 0 back, so that no other
// communicator is affected. The fan-out and segment size are the library's
// defaults for a forced algorithm, kOmpiForcedFanout and
// kOmpiForcedSegmentBytes, which an exported rules file repeats.
//
// Rows in this file need no MPI; whether the library offers them is asked of
// collectives_mpi through set_ompi_tuned_probe (the harness links it). A
// program without it (the fitter) lists and fits them as it does `mpi`.
#pragma once

#include <span>
#include <string>
#include <string_view>

namespace collbench {

struct OmpiTunedAlgorithm {
  std::string_view row;  // "ompi_ring": collbench's name, in --algorithms and the CSV
  int id;                // the control variable's value and the rules file's algorithm
  // The only rank count it runs on (Open MPI's two_proc algorithms return
  // MPI_ERR_UNSUPPORTED_OPERATION elsewhere); 0: any.
  int only_ranks = 0;
};

struct OmpiTunedCollective {
  std::string_view collective;  // collbench's
  std::string_view library;     // Open MPI's, in coll_tuned_<library>_algorithm
  int rules_id;                 // the collective's id in a dynamic rules file
  // The control variable governs the equal-block call (MPI_Reduce_scatter_block,
  // MPI_Allgather, MPI_Alltoall), which collbench makes when p divides the count;
  // other counts take the v-variant, which it does not govern.
  bool needs_equal_blocks;
  std::span<const OmpiTunedAlgorithm> algorithms;
};

inline constexpr std::string_view kOmpiRowPrefix = "ompi_";
// coll_tuned_<library>_algorithm_{tree,chain}_fanout and _segmentsize's
// defaults in Open MPI 4.1: what a forced algorithm runs with.
inline constexpr int kOmpiForcedFanout = 4;
inline constexpr int kOmpiForcedSegmentBytes = 0;

std::span<const OmpiTunedCollective> ompi_tuned_collectives();
// nullptr when collbench's `collective` has no rows of Open MPI's.
const OmpiTunedCollective* find_ompi_tuned(std::string_view collective);
// nullptr when `row` is not one of `collective`'s.
const OmpiTunedAlgorithm* find_ompi_tuned_algorithm(const OmpiTunedCollective& collective,
                                                    std::string_view row);

// What collectives_mpi tells about the library of this process: with
// `offered_only`, why it does not have the algorithm (empty: it has); else
// also why it cannot force it now (coll_tuned_use_dynamic_rules not set).
using OmpiTunedProbe = std::string (*)(const OmpiTunedCollective& collective,
                                       const OmpiTunedAlgorithm& algorithm, bool offered_only);
void set_ompi_tuned_probe(OmpiTunedProbe probe);

// Why the library of this process does not offer `collective`'s row `row`;
// empty when it does, when `row` is not an Open MPI row, or when no probe was
// set (a program without MPI cannot tell).
std::string ompi_tuned_missing(std::string_view collective, std::string_view row);

}  // namespace collbench
