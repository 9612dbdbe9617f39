// The MPI library's rows and the choice at one measured point, shared by the
// Open MPI rules file (tuning_ompi.cpp), MPICH's selection file
// (tuning_mpich.cpp) and the filter of loaded rows (measurements.cpp); see
// tuning_choice.h and collbench/models/tuning.h.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <limits>
#include <stdexcept>

#include "collbench/collectives/collective.h"
#include "tuning_choice.h"

namespace collbench::tuning_internal {
namespace {

std::string describe(std::string_view collective, int ranks, double bytes) {
  return fmt::format("{} on {} ranks at {} bytes", collective, ranks, bytes);
}

}  // namespace

bool is_library_row(std::string_view family, std::string_view algorithm) {
  const OmpiTunedCollective* ompi = find_ompi_tuned(family);
  const MpichCollective* mpich = find_mpich_tuned(family);
  if (ompi == nullptr && mpich == nullptr) return false;
  return algorithm == kMpiLibraryAlgorithm ||
         (ompi != nullptr && find_ompi_tuned_algorithm(*ompi, algorithm) != nullptr) ||
         (mpich != nullptr && find_mpich_tuned_algorithm(*mpich, algorithm) != nullptr);
}

std::set<std::string> library_column(std::span<const NamedTable> tables, std::string_view name) {
  std::set<std::string> values;
  for (const NamedTable& named : tables) {
    const int column = named.table.column(name);
    const int family = named.table.column("family");
    const int algorithm = named.table.column("algorithm");
    if (column < 0 || family < 0 || algorithm < 0) continue;
    for (const auto& row : named.table.rows) {
      if (!is_library_row(row[static_cast<std::size_t>(family)],
                          row[static_cast<std::size_t>(algorithm)])) {
        continue;
      }
      const std::string& value = row[static_cast<std::size_t>(column)];
      if (!value.empty()) values.insert(value);
    }
  }
  return values;
}

std::string joined(const std::set<std::string>& values) {
  return values.empty() ? std::string("(not recorded)")
                        : fmt::format("{}", fmt::join(values, ", "));
}

template <typename Table>
LibraryChoice choose(const Table& collective, int ranks, double bytes,
                     const std::map<std::string, const Measurement*>& rows) {
  LibraryChoice choice;
  choice.collective = std::string(collective.collective);
  choice.ranks = ranks;
  choice.bytes = bytes;
  choice.default_seconds = std::numeric_limits<double>::quiet_NaN();
  const Measurement* fastest = nullptr;
  // In the table's order, so that ties go to the earlier row.
  for (const OmpiTunedAlgorithm& algorithm : collective.algorithms) {
    const auto it = rows.find(std::string(algorithm.row));
    if (it != rows.end() && (fastest == nullptr || it->second->seconds < fastest->seconds)) {
      fastest = it->second;
    }
  }
  if (fastest == nullptr) {
    throw std::runtime_error(
        fmt::format("no forced algorithm of the library measured for {} (only mpi): run collbench "
                    "--families {} --library-algorithms at that size",
                    describe(collective.collective, ranks, bytes), collective.collective));
  }
  choice.fastest = fastest->algorithm;
  choice.fastest_seconds = fastest->seconds;
  const auto library = rows.find(std::string(kMpiLibraryAlgorithm));
  const bool beats_default = library == rows.end() ||
                             fastest->q3_seconds < library->second->q1_seconds ||
                             (fastest->q3_seconds == fastest->q1_seconds &&
                              library->second->q3_seconds == library->second->q1_seconds &&
                              fastest->seconds < library->second->seconds);
  if (library != rows.end()) choice.default_seconds = library->second->seconds;
  if (beats_default) {
    choice.chosen = fastest->algorithm;
    for (const OmpiTunedAlgorithm& algorithm : collective.algorithms) {
      if (algorithm.row == fastest->algorithm) choice.algorithm = algorithm.id;
    }
  } else {
    choice.chosen = std::string(kMpiLibraryAlgorithm);
  }
  return choice;
}

template LibraryChoice choose(const OmpiTunedCollective&, int, double,
                              const std::map<std::string, const Measurement*>&);
template LibraryChoice choose(const MpichCollective&, int, double,
                              const std::map<std::string, const Measurement*>&);

}  // namespace collbench::tuning_internal
