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
#include <utility>
#include <vector>

#include "collbench/collectives/collective.h"
#include "collbench/collectives/library.h"
#include "forced_library_rows.h"

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

struct OpenMpi {
  static constexpr const auto& kCollectives = collbench::kCollectives;
  static constexpr std::string_view kDescription =
      "Open MPI's own collective, this coll_tuned algorithm forced (mpi transport; "
      "--library-algorithms, coll_tuned_use_dynamic_rules=1 at launch)";
  static OmpiTunedProbe& probe() { return collbench::probe(); }
  static std::string unequal_blocks_reason(const OmpiTunedCollective& collective, std::size_t count,
                                           int ranks) {
    return fmt::format(
        "coll_tuned_{}_algorithm governs the equal-block call only, and {} elements do not "
        "divide into {} ranks",
        collective.library, count, ranks);
  }
  static std::string algorithm_reason(const OmpiTunedCollective& collective,
                                      const OmpiTunedAlgorithm& algorithm, int ranks) {
    if (algorithm.only_ranks == 0 || ranks == algorithm.only_ranks) return {};
    return fmt::format("Open MPI's {} {} runs on {} ranks only", collective.library,
                       algorithm.row.substr(kOmpiRowPrefix.size()), algorithm.only_ranks);
  }
};

}  // namespace

std::span<const OmpiTunedCollective> ompi_tuned_collectives() { return kCollectives; }

const OmpiTunedCollective* find_ompi_tuned(std::string_view collective) {
  return forced_library::find_entry(kCollectives, collective);
}

const OmpiTunedAlgorithm* find_ompi_tuned_algorithm(const OmpiTunedCollective& collective,
                                                    std::string_view row) {
  return forced_library::find_algorithm(collective, row);
}

void set_ompi_tuned_probe(OmpiTunedProbe instance) { probe() = instance; }

std::string ompi_tuned_missing(std::string_view collective, std::string_view row) {
  return forced_library::missing<OpenMpi>(collective, row);
}

namespace detail {

std::vector<AlgorithmInfo> ompi_tuned_rows(std::string_view collective) {
  return forced_library::rows<OpenMpi>(collective);
}

}  // namespace detail
}  // namespace collbench
