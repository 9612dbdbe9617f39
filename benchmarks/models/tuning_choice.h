// The MPI library's rows and the choice at one measured point: what the
// Open MPI export (tuning_ompi.cpp), MPICH's (tuning_mpich.cpp) and the
// filter of loaded rows (measurements.cpp) share. Internal to collbench_models.
#pragma once

#include <map>
#include <set>
#include <span>
#include <string>
#include <string_view>

#include "collbench/collectives/mpich_tuned.h"
#include "collbench/collectives/ompi_tuned.h"
#include "collbench/models/fit.h"
#include "collbench/models/tuning.h"

namespace collbench::tuning_internal {

// The library's rows measured for one collective on one rank count, by size.
using RowsBySize = std::map<double, std::map<std::string, const Measurement*>>;

// Whether a row of `family` and `algorithm` is one of the library's: its
// default (`mpi`) or one of its forced algorithms, Open MPI's or MPICH's.
bool is_library_row(std::string_view family, std::string_view algorithm);

// The column `name` of every row of `tables` whose family and algorithm are
// a library row's, distinct and sorted.
std::set<std::string> library_column(std::span<const NamedTable> tables, std::string_view name);

// `values` separated by commas, or "(not recorded)".
std::string joined(const std::set<std::string>& values);

// One choice: the fastest forced row, kept only where it beats `mpi`
// beyond both spreads. `Table`: OmpiTunedCollective or MpichCollective
// (instantiated for both in tuning.cpp).
template <typename Table>
LibraryChoice choose(const Table& collective, int ranks, double bytes,
                     const std::map<std::string, const Measurement*>& rows);

}  // namespace collbench::tuning_internal
