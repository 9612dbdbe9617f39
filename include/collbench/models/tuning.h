// Tuning files the MPI library reads, from measurements of its own
// algorithms (collbench --library-algorithms: the ompi_* rows of
// collbench/collectives/ompi_tuned.h): collbench-fit --export ompi-rules.
//
// Open MPI 4.1's coll_tuned dynamic rules file (read with
// coll_tuned_use_dynamic_rules 1 and coll_tuned_dynamic_rules_filename F) is
// whitespace-separated integers, `#` to the end of a line a comment:
//
//   NCOLL {COLLID NCOMSIZES {COMSIZE NMSG {MSGSIZE ALG FANINOUT SEGSIZE}}}
//
// For a call, the library takes its collective's last communicator entry
// whose COMSIZE ≤ the communicator's size (the first when none is), and in it
// the last message entry whose MSGSIZE ≤ the call's size; ALG 0 hands the call
// back to the library's fixed decision. Open MPI ignores a file it cannot
// parse without a word, so parse_ompi_rules holds every exported file to
// this grammar (tests/tuning_test.cpp).
//
// The choice at each measured size and communicator size is the library's
// fastest forced algorithm where it beats the library's default (`mpi`)
// beyond both interquartile ranges (the spread of the repetitions' medians;
// with one repetition, any faster median), else 0; so the file never
// replaces the default on noise. The file claims only what was measured:
// below the smallest measured size, above the largest and on communicator
// sizes not measured it hands back to 0.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "collbench/collectives/mpich_tuned.h"
#include "collbench/models/fit.h"

namespace collbench {

struct RulesMessage {
  std::uint64_t bytes = 0;
  int algorithm = 0;
  int fan = 0;
  int segment = 0;
  bool operator==(const RulesMessage&) const = default;
};
struct RulesCommunicator {
  int ranks = 0;
  std::vector<RulesMessage> messages;
};
struct RulesCollective {
  int id = 0;
  std::vector<RulesCommunicator> communicators;
};
struct RulesFile {
  std::vector<RulesCollective> collectives;
};

// The export's decision at one measured point.
struct LibraryChoice {
  std::string collective;  // collbench's name
  int ranks = 0;
  double bytes = 0;
  std::string chosen;   // the ompi_* row, or "mpi" (the default kept)
  int algorithm = 0;    // its id, 0 for "mpi"
  std::string fastest;  // the fastest forced row measured here
  double fastest_seconds = 0;
  double default_seconds = 0;  // NaN when `mpi` was not measured here
};

struct OmpiRulesExport {
  std::vector<LibraryChoice> choices;
  RulesFile rules;
  std::string text;  // the file: a header saying where it was measured, then the rules
};

// The export from `measurements` (aggregate_measurements of `tables`, which
// the header's hosts, library and runs come from). Throws
// std::runtime_error when no forced algorithm was measured at all, when a
// collective has measurements of the library but none of its forced
// algorithms, when the library rows mix dtypes, operations or placements, or
// for a row named ompi_* that the library's table lacks.
// `load_note` (leave_out_loaded's header, fit.h), when not empty, is one more
// line of the header.
OmpiRulesExport export_ompi_rules(std::span<const Measurement> measurements,
                                  std::span<const NamedTable> tables,
                                  std::string_view load_note = {});

// Parses a rules file by the grammar above, also holding it to what Open
// MPI's reader assumes: known collective ids, each at most once, communicator
// sizes ascending, message sizes ascending from 0, no negative number,
// nothing after the last entry. Throws std::runtime_error naming `source`,
// the line and what is wrong.
RulesFile parse_ompi_rules(std::string_view text, std::string_view source);

// The entry the library takes from `rules` for collective `id` on `ranks`
// ranks and a call of `bytes` (the lookup above: algorithm, fan-in/out and
// segment size); all zero when no entry applies.
RulesMessage ompi_rules_entry(const RulesFile& rules, int id, int ranks, std::uint64_t bytes);
// Its algorithm.
int ompi_rules_algorithm(const RulesFile& rules, int id, int ranks, std::uint64_t bytes);

// ---- MPICH: collbench-fit --export mpich-json ------------------------------
//
// MPICH's collective selection file (MPIR_CVAR_COLL_SELECTION_TUNING_JSON_FILE,
// read at MPI_Init, used where MPIR_CVAR_<COLL>_INTRA_ALGORITHM is auto) is a
// JSON decision tree of objects only: per "collective=<name>" and
// "comm_type=intra|inter", conditions ("comm_size<=N", "avg_msg_size<N",
// "total_msg_size=any", "is_commutative=yes", ...) tried in order, the first
// that holds taken, down to a leaf {"algorithm=MPIR_<Coll>_intra_<name>": {}}.
// MPICH aborts on a call whose collective the file lacks, so an export is
// MPICH 4.0.2's own file (mpich_default_selection()) with the intra subtree of
// each measured collective replaced: per measured communicator size
// ("comm_size<=p", sizes between and beyond keep the defaults) the choices
// made as for Open MPI above, at their sizes as MPICH measures a call
// (MpichCollective::size_per_rank, total_msg_size), the defaults elsewhere.

// A node of the tree: its conditions (keys) in order, each with its subtree.
struct SelectionNode {
  std::vector<std::pair<std::string, SelectionNode>> children;
};

struct MpichJsonExport {
  std::vector<LibraryChoice> choices;  // LibraryChoice::algorithm: the row's id, 0 for mpi
  SelectionNode tree;
  std::string text;  // a /* */ comment saying where it was measured, then the tree
};

// As export_ompi_rules, from the mpich_* rows.
MpichJsonExport export_mpich_json(std::span<const Measurement> measurements,
                                  std::span<const NamedTable> tables,
                                  std::string_view load_note = {});

// Parses a selection file (objects of objects, /* */ comments, as MPICH's
// reader); throws std::runtime_error naming `source` and the line.
SelectionNode parse_mpich_selection(std::string_view text, std::string_view source);
std::string format_mpich_selection(const SelectionNode& root);
// MPICH 4.0.2's own selection file.
std::string_view mpich_default_selection();

// The algorithm function (MPIR_Allreduce_intra_ring) `root` selects for an
// intra call of `collective` on `ranks` ranks of collbench's `bytes`, by the
// conditions an export writes; empty where the walk reaches a condition only
// MPICH's defaults use (a call left to MPICH).
std::string mpich_selection_algorithm(const SelectionNode& root, const MpichCollective& collective,
                                      int ranks, double bytes);

}  // namespace collbench
