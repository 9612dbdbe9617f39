// Open MPI's coll_tuned algorithms and their rows; see
// collbench/collectives/ompi_tuned.h.
//
// Ids and names are Open MPI 4.1's (`ompi_info --param coll tuned --level 9`,
// the enumerators of coll_tuned_<library>_algorithm); the rules file's
// collective ids are its COLLTYPE enumeration (coll_base_functions.h). The
// rules file's message size is count × type size of the whole vector for
// every one of these six (allgather and alltoall: the total over ranks,
// reduce_scatter_block: rcount × p), which is collbench's bytes column in
// each case, so no conversion is needed.
#include "collbench/collectives/ompi_tuned.h"

#include <fmt/format.h>

#include <array>
#include <stdexcept>
#include <utility>
#include <vector>

#include "collbench/collectives/collective.h"
#include "collbench/collectives/library.h"

namespace collbench {
namespace {

constexpr OmpiTunedAlgorithm kAllreduce[] = {
    {"ompi_basic_linear", 1}, {"ompi_nonoverlapping", 2}, {"ompi_recursive_doubling", 3},
    {"ompi_ring", 4},         {"ompi_segmented_ring", 5}, {"ompi_rabenseifner", 6},
};
constexpr OmpiTunedAlgorithm kReduceScatterBlock[] = {
    {"ompi_basic_linear", 1},
    {"ompi_recursive_doubling", 2},
    {"ompi_recursive_halving", 3},
    {"ompi_butterfly", 4},
};
constexpr OmpiTunedAlgorithm kAllgather[] = {
    {"ompi_linear", 1}, {"ompi_bruck", 2},    {"ompi_recursive_doubling", 3},
    {"ompi_ring", 4},   {"ompi_neighbor", 5}, {"ompi_two_proc", 6, 2},
};
constexpr OmpiTunedAlgorithm kBcast[] = {
    {"ompi_basic_linear", 1},
    {"ompi_chain", 2},
    {"ompi_pipeline", 3},
    {"ompi_split_binary_tree", 4},
    {"ompi_binary_tree", 5},
    {"ompi_binomial", 6},
    {"ompi_knomial", 7},
    {"ompi_scatter_allgather", 8},
    {"ompi_scatter_allgather_ring", 9},
};
constexpr OmpiTunedAlgorithm kReduce[] = {
    {"ompi_linear", 1},   {"ompi_chain", 2},           {"ompi_pipeline", 3},     {"ompi_binary", 4},
    {"ompi_binomial", 5}, {"ompi_in_order_binary", 6}, {"ompi_rabenseifner", 7},
};
constexpr OmpiTunedAlgorithm kAlltoall[] = {
    {"ompi_linear", 1},      {"ompi_pairwise", 2},    {"ompi_modified_bruck", 3},
    {"ompi_linear_sync", 4}, {"ompi_two_proc", 5, 2},
};

constexpr std::array<OmpiTunedCollective, 6> kCollectives = {{
    {"allreduce", "allreduce", 2, false, kAllreduce},
    {"reduce_scatter", "reduce_scatter_block", 13, true, kReduceScatterBlock},
    {"allgather", "allgather", 0, true, kAllgather},
    {"broadcast", "bcast", 7, false, kBcast},
    {"reduce", "reduce", 11, false, kReduce},
    {"alltoall", "alltoall", 3, true, kAlltoall},
}};

OmpiTunedProbe& probe() {
  static OmpiTunedProbe instance = nullptr;
  return instance;
}

template <std::size_t kCollective, std::size_t kAlgorithm>
std::string forced_unsupported_reason(std::string_view transport_kind, int ranks,
                                      std::size_t count) {
  const OmpiTunedCollective& collective = kCollectives[kCollective];
  std::string reason = library_unsupported_reason(transport_kind, ranks, count);
  if (reason.empty() && collective.needs_equal_blocks && ranks > 0 &&
      count % static_cast<std::size_t>(ranks) != 0) {
    reason = fmt::format(
        "coll_tuned_{}_algorithm governs the equal-block call only, and {} elements do not "
        "divide into {} ranks",
        collective.library, count, ranks);
  }
  const OmpiTunedAlgorithm& algorithm = collective.algorithms[kAlgorithm];
  if (reason.empty() && algorithm.only_ranks != 0 && ranks != algorithm.only_ranks) {
    reason = fmt::format("Open MPI's {} {} runs on {} ranks only", collective.library,
                         algorithm.row.substr(kOmpiRowPrefix.size()), algorithm.only_ranks);
  }
  if (reason.empty() && probe() != nullptr) {
    reason = probe()(collective, algorithm, /*offered_only=*/false);
  }
  return reason;
}

template <std::size_t kCollective>
CostTerms forced_cost(int ranks, double bytes) {
  return find_collective(kCollectives[kCollective].collective)->lower_bound(ranks, bytes);
}

template <std::size_t kCollective, std::size_t kAlgorithm>
std::unique_ptr<Collective> build_forced(Transport& transport, const CollectiveSpec& spec,
                                         std::span<const std::byte> in, std::span<std::byte> out) {
  const OmpiTunedCollective& collective = kCollectives[kCollective];
  return build_library_collective(collective.collective, transport, spec, in, out,
                                  &collective.algorithms[kAlgorithm]);
}

template <std::size_t kCollective, std::size_t... kAlgorithms>
std::vector<AlgorithmInfo> rows_of(std::index_sequence<kAlgorithms...>) {
  const OmpiTunedCollective& collective = kCollectives[kCollective];
  return {
      AlgorithmInfo{collective.algorithms[kAlgorithms].row,
                    "Open MPI's own collective, this coll_tuned algorithm forced (mpi transport; "
                    "--library-algorithms, coll_tuned_use_dynamic_rules=1 at launch)",
                    forced_unsupported_reason<kCollective, kAlgorithms>, forced_cost<kCollective>,
                    /*reduces_on_every_rank=*/false, library_workspace,
                    build_forced<kCollective, kAlgorithms>, /*placed_cost=*/nullptr,
                    /*needs_equal_ranks_per_node=*/false, /*forced_library_algorithm=*/true}...};
}

template <std::size_t kCollective>
std::vector<AlgorithmInfo> rows() {
  return rows_of<kCollective>(
      std::make_index_sequence<kCollectives[kCollective].algorithms.size()>());
}

}  // namespace

std::span<const OmpiTunedCollective> ompi_tuned_collectives() { return kCollectives; }

const OmpiTunedCollective* find_ompi_tuned(std::string_view collective) {
  for (const OmpiTunedCollective& entry : kCollectives) {
    if (entry.collective == collective) return &entry;
  }
  return nullptr;
}

const OmpiTunedAlgorithm* find_ompi_tuned_algorithm(const OmpiTunedCollective& collective,
                                                    std::string_view row) {
  for (const OmpiTunedAlgorithm& algorithm : collective.algorithms) {
    if (algorithm.row == row) return &algorithm;
  }
  return nullptr;
}

void set_ompi_tuned_probe(OmpiTunedProbe instance) { probe() = instance; }

std::string ompi_tuned_missing(std::string_view collective, std::string_view row) {
  const OmpiTunedCollective* entry = find_ompi_tuned(collective);
  const OmpiTunedAlgorithm* algorithm =
      entry != nullptr ? find_ompi_tuned_algorithm(*entry, row) : nullptr;
  if (algorithm == nullptr || probe() == nullptr) return {};
  return probe()(*entry, *algorithm, /*offered_only=*/true);
}

namespace detail {

// The rows of `collective` (none for a collective Open MPI's table lacks),
// for the registry.
std::vector<AlgorithmInfo> ompi_tuned_rows(std::string_view collective) {
  static const std::array<std::vector<AlgorithmInfo>, kCollectives.size()> all = {
      rows<0>(), rows<1>(), rows<2>(), rows<3>(), rows<4>(), rows<5>()};
  for (std::size_t i = 0; i < kCollectives.size(); ++i) {
    if (kCollectives[i].collective == collective) return all[i];
  }
  return {};
}

}  // namespace detail
}  // namespace collbench
