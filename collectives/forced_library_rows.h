// The registry rows of an MPI library's own collectives with one algorithm
// forced (Open MPI's coll_tuned in ompi_tuned.cpp, MPICH's CVARs in
// mpich_tuned.cpp): one row per algorithm of each collective the library's
// table lists. Both libraries' rows differ only in how a row is described
// and refused, which `Library` says; the rest is here once.
//
// AlgorithmInfo holds plain function pointers, so each row's functions are
// instantiated for its (collective, algorithm) indices into the table.
//
// `Library` provides:
//   static constexpr const auto& kCollectives;  // std::array of the table's
//       collectives, each with .collective, .needs_equal_blocks, .algorithms
//   static constexpr std::string_view kDescription;  // every row's text
//   static auto& probe();  // the library's probe (a function pointer or null)
//   // Why `algorithm` cannot run at `ranks`, or "": the equal-block call
//   // refused (`count` elements on `ranks`) or the algorithm's own limits.
//   static std::string unequal_blocks_reason(const Collective&, std::size_t count, int ranks);
//   static std::string algorithm_reason(const Collective&, const OmpiTunedAlgorithm&, int ranks);
#ifndef COLLBENCH_COLLECTIVES_FORCED_LIBRARY_ROWS_H_
#define COLLBENCH_COLLECTIVES_FORCED_LIBRARY_ROWS_H_

#include <array>
#include <cstddef>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "collbench/collectives/collective.h"
#include "collbench/collectives/library.h"
#include "collbench/collectives/ompi_tuned.h"

namespace collbench::forced_library {

// The entry of `table` for collbench's `collective`, or nullptr.
template <class Table>
const typename Table::value_type* find_entry(const Table& table, std::string_view collective) {
  for (const auto& entry : table) {
    if (entry.collective == collective) return &entry;
  }
  return nullptr;
}

// `collective`'s algorithm whose row is `row`, or nullptr.
template <class Entry>
const OmpiTunedAlgorithm* find_algorithm(const Entry& collective, std::string_view row) {
  for (const OmpiTunedAlgorithm& algorithm : collective.algorithms) {
    if (algorithm.row == row) return &algorithm;
  }
  return nullptr;
}

// What the library's probe says is missing for `row` of `collective` (""
// without a probe or for a row that is not the library's).
template <class Library>
std::string missing(std::string_view collective, std::string_view row) {
  const auto* entry = find_entry(Library::kCollectives, collective);
  const OmpiTunedAlgorithm* algorithm = entry != nullptr ? find_algorithm(*entry, row) : nullptr;
  if (algorithm == nullptr || Library::probe() == nullptr) return {};
  return Library::probe()(*entry, *algorithm, /*offered_only=*/true);
}

template <class Library, std::size_t kCollective, std::size_t kAlgorithm>
std::string unsupported_reason(std::string_view transport_kind, int ranks, std::size_t count) {
  const auto& collective = Library::kCollectives[kCollective];
  const OmpiTunedAlgorithm& algorithm = collective.algorithms[kAlgorithm];
  std::string reason = library_unsupported_reason(transport_kind, ranks, count);
  if (reason.empty() && collective.needs_equal_blocks && ranks > 0 &&
      count % static_cast<std::size_t>(ranks) != 0) {
    reason = Library::unequal_blocks_reason(collective, count, ranks);
  }
  if (reason.empty()) reason = Library::algorithm_reason(collective, algorithm, ranks);
  if (reason.empty() && Library::probe() != nullptr) {
    reason = Library::probe()(collective, algorithm, /*offered_only=*/false);
  }
  return reason;
}

// A forced algorithm's cost is unknown: the collective's lower bound.
template <class Library, std::size_t kCollective>
CostTerms cost(int ranks, double bytes) {
  return ::collbench::find_collective(Library::kCollectives[kCollective].collective)
      ->lower_bound(ranks, bytes);
}

template <class Library, std::size_t kCollective, std::size_t kAlgorithm>
std::unique_ptr<Collective> build(Transport& transport, const CollectiveSpec& spec,
                                  std::span<const std::byte> in, std::span<std::byte> out) {
  const auto& collective = Library::kCollectives[kCollective];
  return build_library_collective(collective.collective, transport, spec, in, out,
                                  &collective.algorithms[kAlgorithm]);
}

template <class Library, std::size_t kCollective, std::size_t... kAlgorithms>
std::vector<AlgorithmInfo> rows_of(std::index_sequence<kAlgorithms...>) {
  const auto& collective = Library::kCollectives[kCollective];
  return {AlgorithmInfo{collective.algorithms[kAlgorithms].row, Library::kDescription,
                        unsupported_reason<Library, kCollective, kAlgorithms>,
                        cost<Library, kCollective>,
                        /*reduces_on_every_rank=*/false, library_workspace,
                        build<Library, kCollective, kAlgorithms>, /*placed_cost=*/nullptr,
                        /*needs_equal_ranks_per_node=*/false,
                        /*forced_library_algorithm=*/true}...};
}

template <class Library, std::size_t... kCollectives>
std::array<std::vector<AlgorithmInfo>, sizeof...(kCollectives)> all_rows(
    std::index_sequence<kCollectives...>) {
  return {rows_of<Library, kCollectives>(
      std::make_index_sequence<Library::kCollectives[kCollectives].algorithms.size()>())...};
}

// The rows of `collective` (none for a collective the library's table
// lacks), for the registry.
template <class Library>
std::vector<AlgorithmInfo> rows(std::string_view collective) {
  static const auto all =
      all_rows<Library>(std::make_index_sequence<Library::kCollectives.size()>());
  for (std::size_t i = 0; i < Library::kCollectives.size(); ++i) {
    if (Library::kCollectives[i].collective == collective) return all[i];
  }
  return {};
}

}  // namespace collbench::forced_library

#endif  // COLLBENCH_COLLECTIVES_FORCED_LIBRARY_ROWS_H_
