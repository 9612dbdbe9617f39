// The MPI library's rows and the choices made from them, shared by the Open
// MPI rules file (tuning_ompi.cpp), MPICH's selection file (tuning_mpich.cpp)
// and the filter of loaded rows (measurements.cpp); see tuning_choice.h and
// collbench/models/tuning.h.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <limits>
#include <map>
#include <ranges>
#include <set>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "collbench/collectives/collective.h"
#include "tuning_choice.h"

namespace collbench::tuning_internal {

bool is_library_row(std::string_view family, std::string_view algorithm) {
  const OmpiTunedCollective* ompi = find_ompi_tuned(family);
  const MpichCollective* mpich = find_mpich_tuned(family);
  if (ompi == nullptr && mpich == nullptr) return false;
  return algorithm == kMpiLibraryAlgorithm ||
         (ompi != nullptr && find_ompi_tuned_algorithm(*ompi, algorithm) != nullptr) ||
         (mpich != nullptr && find_mpich_tuned_algorithm(*mpich, algorithm) != nullptr);
}

namespace {

std::string describe(std::string_view collective, int ranks, double bytes) {
  return fmt::format("{} on {} ranks at {} bytes", collective, ranks, bytes);
}

// The library's rows measured for one collective on one rank count, by size.
using RowsBySize = std::map<double, std::map<std::string, const Measurement*>>;

// The column `name` of every row of `tables` whose family and algorithm are
// a library row's, distinct and sorted.
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

// `values` separated by commas, or "(not recorded)".
std::string joined(const std::set<std::string>& values) {
  return values.empty() ? std::string("(not recorded)")
                        : fmt::format("{}", fmt::join(values, ", "));
}

// One choice: the fastest forced row, kept only where it beats `mpi`
// beyond both spreads.
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

// The library's rows of `table`'s collectives, per collective's index in it,
// rank count and size.
using RowsByCollective = std::map<std::size_t, std::map<int, RowsBySize>>;

bool forced_measured(const std::map<int, RowsBySize>& by_ranks) {
  for (const auto& [ranks, by_size] : by_ranks) {
    for (const auto& [bytes, rows] : by_size) {
      if (rows.size() > rows.count(std::string(kMpiLibraryAlgorithm))) return true;
    }
  }
  return false;
}

template <typename Table>
bool forced_row(const Table& collective, std::string_view algorithm) {
  return std::any_of(collective.algorithms.begin(), collective.algorithms.end(),
                     [&](const OmpiTunedAlgorithm& a) { return a.row == algorithm; });
}

// The library's rows of an export's input, and what they were measured with
// (an export is for one of each).
struct LibraryRows {
  RowsByCollective by_collective;
  std::set<std::pair<std::string, std::string>> kinds;  // dtype, placement
  std::set<std::string> ops;  // the collectives that reduce nothing have none
  std::set<std::string> sources;
};

// The rows of `table`'s collectives on the mpi transport that are `mpi` or
// one of the table's forced algorithms; a row named with the forced prefix
// that the table lacks is an error.
template <typename Table>
LibraryRows library_rows(std::span<const Measurement> measurements, std::span<const Table> table,
                         const ExportWords<Table>& words) {
  LibraryRows rows;
  for (const Measurement& m : measurements) {
    if (m.transport != "mpi") continue;
    const auto entry = std::find_if(table.begin(), table.end(),
                                    [&](const Table& c) { return c.collective == m.family; });
    if (entry == table.end()) continue;
    if (m.algorithm != kMpiLibraryAlgorithm && !forced_row(*entry, m.algorithm)) {
      if (m.algorithm.starts_with(words.row_prefix)) {
        throw std::runtime_error(fmt::format(
            "{}: unknown {} algorithm '{}' for {} ({} {}'s are {})", fmt::join(m.sources, ", "),
            words.library, m.algorithm, m.family, words.library, words.release,
            fmt::join(entry->algorithms |
                          std::views::transform([](const OmpiTunedAlgorithm& a) { return a.row; }),
                      ", ")));
      }
      continue;
    }
    rows.by_collective[static_cast<std::size_t>(entry - table.begin())][m.ranks][m.bytes]
                      [m.algorithm] = &m;
    rows.kinds.emplace(m.dtype, m.placement);
    if (!m.op.empty()) rows.ops.insert(m.op);
    rows.sources.insert(m.sources.begin(), m.sources.end());
  }
  return rows;
}

// Refuses rows with no forced algorithm at all, or of several kinds.
template <typename Table>
void check_library_rows(const LibraryRows& rows, const ExportWords<Table>& words) {
  if (std::none_of(rows.by_collective.begin(), rows.by_collective.end(),
                   [](const auto& entry) { return forced_measured(entry.second); })) {
    throw std::runtime_error(std::string(words.none_forced));
  }
  if (rows.kinds.size() > 1 || rows.ops.size() > 1) {
    std::vector<std::string> listed;
    for (const auto& [dtype, placement] : rows.kinds) {
      listed.push_back(fmt::format("{} {}", dtype, placement.empty() ? "-" : placement));
    }
    throw std::runtime_error(fmt::format(
        "the library's rows mix {} (dtype, placement) and ops {}: {} is for one of each; pass "
        "the CSVs of one",
        fmt::join(listed, "; "), fmt::join(rows.ops, ", "), words.file));
  }
}

ExportHeader export_header(std::span<const NamedTable> tables, const LibraryRows& rows) {
  const auto& [dtype, placement] = *rows.kinds.begin();
  const std::string op = rows.ops.empty() ? std::string("(no reduction)") : *rows.ops.begin();
  const std::set<std::string> nodes = library_column(tables, "nodes");
  const bool one_node = placement == "intra" || (nodes.size() == 1 && *nodes.begin() == "1");
  return {fmt::format("{}", fmt::join(rows.sources, ", ")),
          fmt::format("Measured on hosts {} ({} node{}: {}), {} {}, with {}; runs {}.",
                      joined(library_column(tables, "hosts")), joined(nodes),
                      nodes.size() == 1 && *nodes.begin() == "1" ? "" : "s",
                      one_node ? "shared memory" : "a network", dtype, op,
                      joined(library_column(tables, "mpi_library")),
                      joined(library_column(tables, "run_id"))),
          one_node ? "Shared memory on one node: these choices are not evidence for a network."
                   : "Measured across nodes: valid for this network and these node counts."};
}

}  // namespace

template <typename Table>
LibraryChoices<Table> library_choices(std::span<const Measurement> measurements,
                                      std::span<const NamedTable> tables,
                                      std::span<const Table> table,
                                      const ExportWords<Table>& words) {
  const LibraryRows rows = library_rows(measurements, table, words);
  check_library_rows(rows, words);
  LibraryChoices<Table> result;
  for (const auto& [index, by_ranks] : rows.by_collective) {
    const Table& collective = table[index];
    if (!forced_measured(by_ranks)) {
      throw std::runtime_error(fmt::format(
          "{} has measurements of the library (mpi) but none of its forced algorithms: run "
          "collbench --families {} --library-algorithms{}, or leave its rows out",
          collective.collective, collective.collective, words.forced_setting(collective)));
    }
    auto& measured = result.collectives.emplace_back();
    measured.table = &collective;
    for (const auto& [ranks, by_size] : by_ranks) {
      std::vector<LibraryChoice>& choices = measured.by_ranks[ranks];
      for (const auto& [bytes, measured_rows] : by_size) {
        choices.push_back(choose(collective, ranks, bytes, measured_rows));
      }
      result.all.insert(result.all.end(), choices.begin(), choices.end());
    }
  }
  result.header = export_header(tables, rows);
  return result;
}

template LibraryChoices<OmpiTunedCollective> library_choices(
    std::span<const Measurement>, std::span<const NamedTable>, std::span<const OmpiTunedCollective>,
    const ExportWords<OmpiTunedCollective>&);
template LibraryChoices<MpichCollective> library_choices(std::span<const Measurement>,
                                                         std::span<const NamedTable>,
                                                         std::span<const MpichCollective>,
                                                         const ExportWords<MpichCollective>&);

}  // namespace collbench::tuning_internal
