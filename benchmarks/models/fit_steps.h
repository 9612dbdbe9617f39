// What the files of collbench-fit's fitting share (fit.cpp runs the steps of
// fit.h in order): the points' keys and groups, the fits every step makes
// (Hockney, top-down), the size curves and models a prediction reads, and
// each step's entry. Internal to collbench::models; not installed.
#pragma once

#include <Eigen/Dense>
#include <limits>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include "collbench/collectives/collective.h"
#include "collbench/models/fit.h"
#include "collbench/models/least_squares.h"

namespace collbench {

inline constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

inline std::string or_none(const std::string& value) { return value.empty() ? "(none)" : value; }

std::vector<std::string> sources_of(const std::vector<const Measurement*>& points);

std::vector<int> ranks_of(const std::vector<const Measurement*>& points);

std::string describe_sizes(const std::vector<const Measurement*>& points);

[[noreturn]] void too_few_points(const std::vector<const Measurement*>& points,
                                 const std::string& what, int needed, const std::string& why);

ModelFit base_fit(const std::string& model, const std::vector<const Measurement*>& points);

Eigen::VectorXd seconds_of(const std::vector<const Measurement*>& points);

void add_predictions(FitResults& results, const std::string& model,
                     const std::vector<const Measurement*>& points,
                     const std::vector<double>& predicted);

// Fits t = c0 + n·c1 (Hockney for p2p, overhead + γ for reduce).
ModelFit fit_affine(FitResults& results, const std::string& model, const std::string& what,
                    const std::vector<const Measurement*>& points);

// The points of every collective (family: its name), grouped by `key`.
template <typename Key>
std::map<Key, std::vector<const Measurement*>> group_collectives(
    std::span<const Measurement> measurements, Key (*key)(const Measurement&)) {
  std::map<Key, std::vector<const Measurement*>> groups;
  for (const Measurement& m : measurements) {
    if (find_collective(m.family) != nullptr) groups[key(m)].push_back(&m);
  }
  return groups;
}

template <typename Key>
std::map<Key, std::vector<const Measurement*>> group_by(std::span<const Measurement> measurements,
                                                        std::string_view family,
                                                        Key (*key)(const Measurement&),
                                                        std::string_view algorithm = {}) {
  std::map<Key, std::vector<const Measurement*>> groups;
  for (const Measurement& m : measurements) {
    if (m.family == family && (algorithm.empty() || m.algorithm == algorithm)) {
      groups[key(m)].push_back(&m);
    }
  }
  return groups;
}

using LinkKey =
    std::tuple<std::string, std::string, std::string>;  // transport, provider, placement

using ExchangeKey = std::tuple<std::string, std::string, std::string,
                               int>;  // transport, provider, placement, ranks

using GammaKey = std::tuple<std::string, std::string>;  // dtype, op

// collective, transport, provider, placement, dtype, op, algorithm
using AlgorithmKey = std::tuple<std::string, std::string, std::string, std::string, std::string,
                                std::string, std::string>;

// collective, transport, provider, placement, dtype, op, ranks
using SelectionKey =
    std::tuple<std::string, std::string, std::string, std::string, std::string, std::string, int>;

inline LinkKey link_key(const Measurement& m) { return {m.transport, m.provider, m.placement}; }

ExchangeKey exchange_key(const Measurement& m);

inline GammaKey gamma_key(const Measurement& m) { return {m.dtype, m.op}; }

using ConcurrentGammaKey = std::tuple<std::string, std::string, int>;  // dtype, op, ranks

inline ConcurrentGammaKey concurrent_gamma_key(const Measurement& m) {
  return {m.dtype, m.op, m.ranks};
}

std::tuple<std::string, std::string> memcpy_key(const Measurement& m);

AlgorithmKey algorithm_key(const Measurement& m);

SelectionKey selection_key(const Measurement& m);

// The p2p fit that stands for the links of an allreduce group: the same
// placement when measured, otherwise the inter-node one (the network is what
// collbench is about), otherwise intra.
const ModelFit* find_link(const std::map<LinkKey, ModelFit>& links, const std::string& transport,
                          const std::string& provider, const std::string& placement);

// The sendrecv fit for an allreduce group at `ranks`: the same placement
// only (a chain across hosts and one inside a host are different links); an
// unknown placement (no nodes column) takes inter, else intra, as find_link.
const ModelFit* find_exchange(const std::map<ExchangeKey, ModelFit>& exchanges,
                              const std::string& transport, const std::string& provider,
                              const std::string& placement, int ranks);

// γ for a dtype and op: the same op, else sum (every op costs about the same:
// one load, one combine, one store), else any op of the dtype.
const ModelFit* find_gamma(const std::map<GammaKey, ModelFit>& gammas, const std::string& dtype,
                           const std::string& op);

Eigen::MatrixXd cost_matrix(const std::vector<const Measurement*>& points);

std::string group_name(const AlgorithmKey& key);

// Takes α, β, γ of `fit` (all three fitted) into `result`, unless γ is too
// uncertain and `local_gamma` can stand in for it: then false, and the note
// says why.
bool take_fitted_gamma(const RelativeFit& fit, const ModelFit* local_gamma,
                       const FitOptions& options, ModelFit& result);

// The γ of a collective that reduces nothing (allgather): its cost terms
// have no reduce_bytes, so it needs no local reduce rows and has no γ.
const ModelFit& no_gamma();

inline bool is_no_gamma(const ModelFit* gamma) { return gamma == &no_gamma(); }

// Fits α and β alone: γ fixed at the local reduce fit's (none where nothing
// is reduced), or, without one, absorbed into β.
RelativeFit fit_alpha_beta(const Eigen::MatrixXd& terms, const Eigen::VectorXd& seconds,
                           const ModelFit* local_gamma,
                           const std::vector<const Measurement*>& points, const std::string& what,
                           ModelFit& result);

// Step 4 for one group: α, β and, where the points determine it, γ.
ModelFit fit_top_down(FitResults& results, const AlgorithmKey& key,
                      const std::vector<const Measurement*>& points, const ModelFit* local_gamma,
                      const FitOptions& options);

// Measured (bytes, seconds) of one benchmark, ascending in bytes: built once
// per group, then interpolated at every point predicted from it.
using SizeCurve = std::vector<std::pair<double, double>>;

SizeCurve size_curve(const std::vector<const Measurement*>& points);

// Time at `bytes` on the piecewise-linear log-log curve through `curve`;
// nullopt outside the measured range, where there is nothing to interpolate
// between.
std::optional<double> interpolate_seconds(const SizeCurve& curve, double bytes);

// The by-size bottom-up prediction (PLogP's idea, Kielmann et al. 2000: the
// per-message cost is measured at each message size instead of one line
// through all sizes): the algorithm's critical path of `messages` exchanges
// and `reduce_bytes` reduced, each exchange priced at the measured sendrecv
// time and each byte reduced at the measured reduce rate, both at the mean
// message size m = bytes/messages of its CostTerms. One Hockney line through
// 8 B..64 MiB misses both where the p2p rate changes with size (cache-resident
// copies against memory-bound ones on shared memory) and the reduce rate does
// (about 4x between 1 MiB and 64 MiB here); this does not.
//
// Working set: a sendrecv or reduce of m bytes touches 2m bytes per rank,
// an out-of-place allreduce of n bytes touches in and out, 2n, whatever its
// message size. Where the machine's per-byte rate at n (the largest measured
// size, if n is beyond it) is slower than at m, because 2n per rank no longer
// fits in a cache that 2m does, each byte moved or reduced is priced at the
// rate at n; the time at m stays the floor, so latency-bound messages keep
// their α. nullopt when m is outside either measured range.
std::optional<double> by_size_seconds(const CostTerms& terms, double vector_bytes,
                                      const SizeCurve& exchange, const SizeCurve& reduce);

// `model` null: the algorithm has no model here (nothing to predict with).
std::optional<double> model_seconds(const NetworkModel* model, const CollectiveInfo& collective,
                                    const std::string& algorithm, const std::string& transport,
                                    int ranks, double bytes, double element_bytes);

// A (collective, algorithm)'s place in the registry, the order used
// everywhere: the collectives in their order, each one's algorithms in
// theirs; a name that is not an algorithm (pingpong, reduce, memcpy) or a
// family that is not a collective after every one.
std::size_t registry_position(std::string_view collective, std::string_view name);

std::vector<std::string> ordered_candidates(std::string_view collective,
                                            const std::set<std::string>& names);

// predictions.csv in registry order of the collectives and algorithms
// (groups are kept in a map by name): the plots take their order and colours
// from the rows, and an algorithm's colour must be the same in every figure
// of a run.
void order_predictions_by_registry(FitResults& results);

// Steps 1 and 2 (fit.h), what the collective groups of steps 3 and 4 are
// predicted from.
struct LinkFits {
  std::map<LinkKey, ModelFit> ping_pongs;
  std::map<LinkKey, ModelFit> link_matrices;  // between hosts: placement inter
  std::map<ExchangeKey, ModelFit> exchanges;  // sendrecv, per rank count
  std::map<ExchangeKey, SizeCurve> exchange_curves;
};

struct LocalFits {
  std::map<GammaKey, ModelFit> gammas;
  std::map<GammaKey, SizeCurve> reduce_curves;
  // The reduce with every rank of the job reducing at once (local/reduce_all),
  // per rank count: what ring, recursive doubling, Rabenseifner and the
  // sharded parameter server see, whose ranks reduce together and share a
  // node's caches and memory bandwidth. By-size curves only.
  std::map<ConcurrentGammaKey, SizeCurve> reduce_all_curves;
};

// Step 1: Hockney per link, the ping-pong, the link matrix, then the sendrecv
// chain per rank count.
LinkFits fit_links(FitResults& results, std::span<const Measurement> measurements);

// Step 2: γ per (dtype, op), the reduce curves, and the memcpy ceiling.
LocalFits fit_local_kernels(FitResults& results, std::span<const Measurement> measurements);

// Bottom-up α, β may differ by rank count (sendrecv fits), so its models are
// kept per rank count; a top-down fit spans every rank count.
using BottomUpModels = std::map<std::string, std::map<int, NetworkModel>>;  // by algorithm

using TopDownModels = std::map<std::string, NetworkModel>;  // by algorithm

struct CollectiveModels {
  BottomUpModels bottom_up;
  TopDownModels top_down;
};

// collective, transport, provider, placement, dtype, op: what step 5 selects among
using ModelsKey =
    std::tuple<std::string, std::string, std::string, std::string, std::string, std::string>;

using FittedModels = std::map<ModelsKey, CollectiveModels>;

// Steps 3 and 4: per (collective, algorithm) group, the bottom-up
// predictions, then the top-down fit; the models step 5 selects with.
FittedModels fit_collective_groups(FitResults& results, std::span<const Measurement> measurements,
                                   const LinkFits& links, const LocalFits& local,
                                   const FitOptions& options);

// Step 5: selection per rank count.
void select_per_rank_count(FitResults& results, std::span<const Measurement> measurements,
                           const FittedModels& models, double tolerance);

}  // namespace collbench
