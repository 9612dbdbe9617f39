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

template <std::size_t kCollective, std::size_t kAlgorithm>
std::string forced_unsupported_reason(std::string_view transport_kind, int ranks,
                                      std::size_t count) {
  const MpichCollective& collective = kCollectives[kCollective];
  std::string reason = library_unsupported_reason(transport_kind, ranks, count);
  if (reason.empty() && collective.needs_equal_blocks && ranks > 0 &&
      count % static_cast<std::size_t>(ranks) != 0) {
    reason = fmt::format(
        "{} governs the equal-block call only, and {} elements do not divide into {} ranks",
        mpich_algorithm_variable(collective), count, ranks);
  }
  if (reason.empty() && probe() != nullptr) {
    reason = probe()(collective, collective.algorithms[kAlgorithm], /*offered_only=*/false);
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
  const MpichCollective& collective = kCollectives[kCollective];
  return build_library_collective(collective.collective, transport, spec, in, out,
                                  &collective.algorithms[kAlgorithm]);
}

template <std::size_t kCollective, std::size_t... kAlgorithms>
std::vector<AlgorithmInfo> rows_of(std::index_sequence<kAlgorithms...>) {
  const MpichCollective& collective = kCollectives[kCollective];
  return {AlgorithmInfo{
      collective.algorithms[kAlgorithms].row,
      "MPICH's own collective, this algorithm forced (mpi transport; --library-algorithms, "
      "MPIR_CVAR_<COLL>_INTRA_ALGORITHM=<name> at launch: one algorithm per launch)",
      forced_unsupported_reason<kCollective, kAlgorithms>, forced_cost<kCollective>,
      /*reduces_on_every_rank=*/false, library_workspace, build_forced<kCollective, kAlgorithms>,
      /*placed_cost=*/nullptr,
      /*needs_equal_ranks_per_node=*/false, /*forced_library_algorithm=*/true}...};
}

template <std::size_t kCollective>
std::vector<AlgorithmInfo> rows() {
  return rows_of<kCollective>(
      std::make_index_sequence<kCollectives[kCollective].algorithms.size()>());
}

}  // namespace

std::span<const MpichCollective> mpich_tuned_collectives() { return kCollectives; }

const MpichCollective* find_mpich_tuned(std::string_view collective) {
  for (const MpichCollective& entry : kCollectives) {
    if (entry.collective == collective) return &entry;
  }
  return nullptr;
}

const OmpiTunedAlgorithm* find_mpich_tuned_algorithm(const MpichCollective& collective,
                                                     std::string_view row) {
  for (const OmpiTunedAlgorithm& algorithm : collective.algorithms) {
    if (algorithm.row == row) return &algorithm;
  }
  return nullptr;
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
  const MpichCollective* entry = find_mpich_tuned(collective);
  const OmpiTunedAlgorithm* algorithm =
      entry != nullptr ? find_mpich_tuned_algorithm(*entry, row) : nullptr;
  if (algorithm == nullptr || probe() == nullptr) return {};
  return probe()(*entry, *algorithm, /*offered_only=*/true);
}

namespace detail {

// The rows of `collective` (none for a collective MPICH's table lacks), for
// the registry.
std::vector<AlgorithmInfo> mpich_tuned_rows(std::string_view collective) {
  static const std::array<std::vector<AlgorithmInfo>, kCollectives.size()> all = {
      rows<0>(), rows<1>(), rows<2>(), rows<3>(), rows<4>(), rows<5>()};
  for (std::size_t i = 0; i < kCollectives.size(); ++i) {
    if (kCollectives[i].collective == collective) return all[i];
  }
  return {};
}

}  // namespace detail
}  // namespace collbench
