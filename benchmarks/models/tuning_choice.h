// The MPI library's rows and the choices made from them: the skeleton the
// Open MPI export (tuning_ompi.cpp) and MPICH's (tuning_mpich.cpp) share,
// and the test of a library row the filter of loaded rows (measurements.cpp)
// uses. Internal to collbench_models.
#pragma once

#include <map>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "collbench/collectives/mpich_tuned.h"
#include "collbench/collectives/ompi_tuned.h"
#include "collbench/models/fit.h"
#include "collbench/models/tuning.h"

namespace collbench::tuning_internal {

// Whether a row of `family` and `algorithm` is one of the library's: its
// default (`mpi`) or one of its forced algorithms, Open MPI's or MPICH's.
bool is_library_row(std::string_view family, std::string_view algorithm);

// What one library's export says where its input falls short.
template <typename Table>
struct ExportWords {
  std::string_view library;      // "MPICH": whose forced algorithms a row names
  std::string_view release;      // "4.0": the release whose algorithms the table holds
  std::string_view row_prefix;   // a forced row's prefix (kOmpiRowPrefix, kMpichRowPrefix)
  std::string_view file;         // "a rules file": what is for one dtype, placement and op
  std::string_view none_forced;  // the input has no forced row at all: how to measure them
  // What else measuring `collective`'s forced algorithms needs, after
  // "collbench --families C --library-algorithms" (empty, or " with X set").
  std::string (*forced_setting)(const Table& collective);
};

// Where an export's rows were measured, for its header.
struct ExportHeader {
  std::string sources;   // the input files, comma-separated
  std::string measured;  // "Measured on hosts ... runs ...."
  std::string scope;     // whether the choices hold for a network
};

// The choices of one export: per measured collective of the library's table
// (in the table's order), per rank count (ascending), one per measured size.
template <typename Table>
struct LibraryChoices {
  struct Collective {
    const Table* table = nullptr;
    std::map<int, std::vector<LibraryChoice>> by_ranks;
  };
  std::vector<Collective> collectives;
  std::vector<LibraryChoice> all;  // every choice, in that order
  ExportHeader header;
};

// The skeleton both exports share: the library's rows of `measurements`
// (those of `table`'s collectives on the mpi transport: `mpi` and the forced
// algorithms), checked as tuning.h says (in `words`), and the choice at each
// measured size. `Table`: OmpiTunedCollective or MpichCollective
// (instantiated for both in tuning.cpp).
template <typename Table>
LibraryChoices<Table> library_choices(std::span<const Measurement> measurements,
                                      std::span<const NamedTable> tables,
                                      std::span<const Table> table,
                                      const ExportWords<Table>& words);

}  // namespace collbench::tuning_internal
