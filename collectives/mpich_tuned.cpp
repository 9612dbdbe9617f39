// MPICH's collective algorithms and their rows; see
// collbench/collectives/mpich_tuned.h.
//
// The names are those MPICH 4.0.2 (Debian bookworm's libmpich12) accepts for
// MPIR_CVAR_<COLL>_INTRA_ALGORITHM at MPI_Init (it aborts on any other), less
// `auto`, its own choice, which is the `mpi` row.
#include "collbench/collectives/mpich_tuned.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <utility>
#include <vector>

#include "collbench/collectives/collective.h"
#include "collbench/collectives/library.h"
#include "forced_library_rows.h"

namespace collbench {
namespace {

constexpr OmpiTunedAlgorithm kAllreduce[] = {
    {"mpich_nb", 1},
    {"mpich_smp", 2},
    {"mpich_recursive_doubling", 3},
    {"mpich_reduce_scatter_allgather", 4},
};
constexpr OmpiTunedAlgorithm kReduceScatterBlock[] = {
    {"mpich_nb", 1},
    {"mpich_recursive_doubling", 2},
    {"mpich_pairwise", 3},
    {"mpich_noncommutative", 4},
    {"mpich_recursive_halving", 5},
};
constexpr OmpiTunedAlgorithm kAllgather[] = {
    {"mpich_nb", 1},
    {"mpich_recursive_doubling", 2},
    {"mpich_ring", 3},
    {"mpich_brucks", 4},
};
constexpr OmpiTunedAlgorithm kBcast[] = {
    {"mpich_nb", 1},
    {"mpich_smp", 2},
    {"mpich_binomial", 3},
    {"mpich_scatter_recursive_doubling_allgather", 4},
    {"mpich_scatter_ring_allgather", 5},
};
constexpr OmpiTunedAlgorithm kReduce[] = {
    {"mpich_nb", 1},
    {"mpich_smp", 2},
    {"mpich_binomial", 3},
    {"mpich_reduce_scatter_gather", 4},
};
constexpr OmpiTunedAlgorithm kAlltoall[] = {
    {"mpich_nb", 1},        {"mpich_brucks", 2},
    {"mpich_pairwise", 3},  {"mpich_pairwise_sendrecv_replace", 4},
    {"mpich_scattered", 5},
};

constexpr std::array<MpichCollective, 6> kCollectives = {{
    {"allreduce", "allreduce", "Allreduce", false, false, false, kAllreduce},
    {"reduce_scatter", "reduce_scatter_block", "Reduce_scatter_block", true, false, true,
     kReduceScatterBlock},
    {"allgather", "allgather", "Allgather", true, true, false, kAllgather},
    {"broadcast", "bcast", "Bcast", false, false, false, kBcast},
    {"reduce", "reduce", "Reduce", false, false, false, kReduce},
    {"alltoall", "alltoall", "Alltoall", true, true, false, kAlltoall},
}};

MpichTunedProbe& probe() {
  static MpichTunedProbe instance = nullptr;
  return instance;
}

struct Mpich {
  static constexpr const auto& kCollectives = collbench::kCollectives;
  static constexpr std::string_view kDescription =
      "MPICH's own collective, this algorithm forced (mpi transport; --library-algorithms, "
      "MPIR_CVAR_<COLL>_INTRA_ALGORITHM=<name> at launch: one algorithm per launch)";
  static MpichTunedProbe& probe() { return collbench::probe(); }
  static std::string unequal_blocks_reason(const MpichCollective& collective, std::size_t count,
                                           int ranks) {
    return fmt::format(
        "{} governs the equal-block call only, and {} elements do not divide into {} ranks",
        mpich_algorithm_variable(collective), count, ranks);
  }
  // MPICH's table has no algorithm limited to some rank counts.
  static std::string algorithm_reason(const MpichCollective&, const OmpiTunedAlgorithm&, int) {
    return {};
  }
};

}  // namespace

std::span<const MpichCollective> mpich_tuned_collectives() { return kCollectives; }

const MpichCollective* find_mpich_tuned(std::string_view collective) {
  return forced_library::find_entry(kCollectives, collective);
}

const OmpiTunedAlgorithm* find_mpich_tuned_algorithm(const MpichCollective& collective,
                                                     std::string_view row) {
  return forced_library::find_algorithm(collective, row);
}

std::string mpich_algorithm_variable(const MpichCollective& collective) {
  std::string upper(collective.library);
  std::transform(upper.begin(), upper.end(), upper.begin(),
                 [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
  return fmt::format("MPIR_CVAR_{}_INTRA_ALGORITHM", upper);
}

std::string_view mpich_algorithm_name(const OmpiTunedAlgorithm& algorithm) {
  return algorithm.row.substr(kMpichRowPrefix.size());
}

void set_mpich_tuned_probe(MpichTunedProbe instance) { probe() = instance; }

std::string mpich_tuned_missing(std::string_view collective, std::string_view row) {
  return forced_library::missing<Mpich>(collective, row);
}

namespace detail {

std::vector<AlgorithmInfo> mpich_tuned_rows(std::string_view collective) {
  return forced_library::rows<Mpich>(collective);
}

}  // namespace detail
}  // namespace collbench
