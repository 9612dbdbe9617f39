// The fits of collbench-fit: Hockney, γ, memcpy ceiling, bottom-up
// prediction, top-down fits and selection (see fit.h for the order and the
// weighting).
#include "collbench/models/fit.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>
#include <stdexcept>
#include <tuple>

#include "collbench/collectives/collective.h"
#include "collbench/core/dtype.h"

namespace collbench {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

std::string or_none(const std::string& value) { return value.empty() ? "(none)" : value; }

std::vector<std::string> sources_of(const std::vector<const Measurement*>& points) {
  std::set<std::string> all;
  for (const Measurement* m : points) all.insert(m->sources.begin(), m->sources.end());
  return {all.begin(), all.end()};
}

std::vector<int> ranks_of(const std::vector<const Measurement*>& points) {
  std::set<int> all;
  for (const Measurement* m : points) all.insert(m->ranks);
  return {all.begin(), all.end()};
}

std::string describe_sizes(const std::vector<const Measurement*>& points) {
  std::vector<std::string> items;
  for (const Measurement* m : points) {
    items.push_back(m->ranks > 0 && find_collective(m->family) != nullptr
                        ? fmt::format("{} B at {} ranks", m->bytes, m->ranks)
                        : fmt::format("{} B", m->bytes));
  }
  return items.empty() ? "none" : fmt::to_string(fmt::join(items, ", "));
}

[[noreturn]] void too_few_points(const std::vector<const Measurement*>& points,
                                 const std::string& what, int needed, const std::string& why) {
  throw std::runtime_error(
      fmt::format("{}: too few points for the {}: {} distinct point{} ({}); needs at least {} {}",
                  fmt::to_string(fmt::join(sources_of(points), ", ")), what, points.size(),
                  points.size() == 1 ? "" : "s", describe_sizes(points), needed, why));
}

ModelFit base_fit(const std::string& model, const std::vector<const Measurement*>& points) {
  ModelFit fit;
  fit.model = model;
  const Measurement& first = *points.front();
  fit.family = first.family;
  fit.transport = first.transport;
  fit.provider = first.provider;
  fit.placement = first.placement;
  fit.dtype = first.dtype;
  fit.op = first.op;
  fit.algorithm = first.algorithm;
  fit.ranks = ranks_of(points);
  fit.min_bytes = std::numeric_limits<double>::infinity();
  fit.max_bytes = 0;
  for (const Measurement* m : points) {
    fit.min_bytes = std::min(fit.min_bytes, m->bytes);
    fit.max_bytes = std::max(fit.max_bytes, m->bytes);
  }
  fit.sources = sources_of(points);
  fit.alpha_rel_stderr = fit.beta_rel_stderr = fit.gamma_rel_stderr = kNaN;
  return fit;
}

Eigen::VectorXd seconds_of(const std::vector<const Measurement*>& points) {
  Eigen::VectorXd t(static_cast<Eigen::Index>(points.size()));
  for (std::size_t i = 0; i < points.size(); ++i) {
    t(static_cast<Eigen::Index>(i)) = points[i]->seconds;
  }
  return t;
}

void add_predictions(FitResults& results, const std::string& model,
                     const std::vector<const Measurement*>& points,
                     const std::vector<double>& predicted) {
  for (std::size_t i = 0; i < points.size(); ++i) {
    results.predictions.push_back({model, *points[i], predicted[i]});
  }
}

// Fits t = c0 + n·c1 (Hockney for p2p, overhead + γ for reduce).
ModelFit fit_affine(FitResults& results, const std::string& model, const std::string& what,
                    const std::vector<const Measurement*>& points) {
  const bool hockney = model.starts_with("hockney");
  if (points.size() < 3) {
    too_few_points(points, what, 3,
                   "distinct sizes: 2 parameters and at least one point to judge the fit");
  }
  Eigen::MatrixXd terms(static_cast<Eigen::Index>(points.size()), 2);
  for (std::size_t i = 0; i < points.size(); ++i) {
    terms(static_cast<Eigen::Index>(i), 0) = 1.0;
    terms(static_cast<Eigen::Index>(i), 1) = points[i]->bytes;
  }
  const RelativeFit fit = fit_relative(terms, seconds_of(points));
  ModelFit result = base_fit(model, points);
  result.params.alpha = fit.coefficients(0);
  result.alpha_rel_stderr = fit.relative_stderr(0);
  if (hockney) {
    result.terms = "alpha+n*beta";
    result.params.beta = fit.coefficients(1);
    result.beta_rel_stderr = fit.relative_stderr(1);
  } else {
    result.terms = "t0+n*gamma";
    result.params.gamma = fit.coefficients(1);
    result.gamma_rel_stderr = fit.relative_stderr(1);
    result.gamma_source = "fitted";
  }
  result.quality = fit.quality;
  add_predictions(results, model, points, fit.predicted);
  return result;
}

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
                               int>;                    // transport, provider, placement, ranks
using GammaKey = std::tuple<std::string, std::string>;  // dtype, op
// collective, transport, provider, placement, dtype, op, algorithm
using AlgorithmKey = std::tuple<std::string, std::string, std::string, std::string, std::string,
                                std::string, std::string>;
// collective, transport, provider, placement, dtype, op, ranks
using SelectionKey =
    std::tuple<std::string, std::string, std::string, std::string, std::string, std::string, int>;

LinkKey link_key(const Measurement& m) { return {m.transport, m.provider, m.placement}; }
ExchangeKey exchange_key(const Measurement& m) {
  return {m.transport, m.provider, m.placement, m.ranks};
}
GammaKey gamma_key(const Measurement& m) { return {m.dtype, m.op}; }
using ConcurrentGammaKey = std::tuple<std::string, std::string, int>;  // dtype, op, ranks
ConcurrentGammaKey concurrent_gamma_key(const Measurement& m) { return {m.dtype, m.op, m.ranks}; }
std::tuple<std::string, std::string> memcpy_key(const Measurement& m) {
  return {m.transport, m.provider};
}
AlgorithmKey algorithm_key(const Measurement& m) {
  return {m.family, m.transport, m.provider, m.placement, m.dtype, m.op, m.algorithm};
}
SelectionKey selection_key(const Measurement& m) {
  return {m.family, m.transport, m.provider, m.placement, m.dtype, m.op, m.ranks};
}

// The p2p fit that stands for the links of an allreduce group: the same
// placement when measured, otherwise the inter-node one (the network is what
// collbench is about), otherwise intra.
const ModelFit* find_link(const std::map<LinkKey, ModelFit>& links, const std::string& transport,
                          const std::string& provider, const std::string& placement) {
  for (const std::string& candidate : {placement, std::string("inter"), std::string("intra")}) {
    const auto it = links.find({transport, provider, candidate});
    if (it != links.end()) return &it->second;
  }
  return nullptr;
}

// The sendrecv fit for an allreduce group at `ranks`: the same placement
// only (a chain across hosts and one inside a host are different links); an
// unknown placement (no nodes column) takes inter, else intra, as find_link.
const ModelFit* find_exchange(const std::map<ExchangeKey, ModelFit>& exchanges,
                              const std::string& transport, const std::string& provider,
                              const std::string& placement, int ranks) {
  const std::vector<std::string> candidates = placement.empty()
                                                  ? std::vector<std::string>{"inter", "intra"}
                                                  : std::vector<std::string>{placement};
  for (const std::string& candidate : candidates) {
    const auto it = exchanges.find({transport, provider, candidate, ranks});
    if (it != exchanges.end()) return &it->second;
  }
  return nullptr;
}

// γ for a dtype and op: the same op, else sum (every op costs about the same:
// one load, one combine, one store), else any op of the dtype.
const ModelFit* find_gamma(const std::map<GammaKey, ModelFit>& gammas, const std::string& dtype,
                           const std::string& op) {
  for (const std::string& candidate : {op, std::string("sum")}) {
    const auto it = gammas.find({dtype, candidate});
    if (it != gammas.end()) return &it->second;
  }
  for (const auto& [key, fit] : gammas) {
    if (std::get<0>(key) == dtype) return &fit;
  }
  return nullptr;
}

Eigen::MatrixXd cost_matrix(const std::vector<const Measurement*>& points) {
  Eigen::MatrixXd terms(static_cast<Eigen::Index>(points.size()), 3);
  for (std::size_t i = 0; i < points.size(); ++i) {
    const CostTerms c =
        model_terms(points[i]->family, points[i]->algorithm, points[i]->ranks, points[i]->bytes);
    terms.row(static_cast<Eigen::Index>(i)) << c.messages, c.bytes, c.reduce_bytes;
  }
  return terms;
}

std::string group_name(const AlgorithmKey& key) {
  const auto& [collective, transport, provider, placement, dtype, op, algorithm] = key;
  return fmt::format(
      "top-down fit of {} algorithm={} transport={} provider={} placement={} dtype={} op={}",
      collective, algorithm, transport, or_none(provider), or_none(placement), dtype, or_none(op));
}

// Takes α, β, γ of `fit` (all three fitted) into `result`, unless γ is too
// uncertain and `local_gamma` can stand in for it: then false, and the note
// says why.
bool take_fitted_gamma(const RelativeFit& fit, const ModelFit* local_gamma,
                       const FitOptions& options, ModelFit& result) {
  const double stderr_gamma = fit.relative_stderr(2);
  if (local_gamma != nullptr && !(stderr_gamma <= options.gamma_max_rel_stderr)) {
    // Zero γ also lands here (infinite error): a γ pinned at zero by the
    // constraint is as undetermined as a wildly uncertain one.
    result.note =
        std::isfinite(stderr_gamma)
            ? fmt::format(
                  "γ from the local reduce fit: this group's own estimate has relative "
                  "standard error {:.0f}% (limit {:.0f}%)",
                  100 * stderr_gamma, 100 * options.gamma_max_rel_stderr)
            : "γ from the local reduce fit: this group's own estimate is 0 (the constraint "
              "γ ≥ 0 holds it there), so its points do not determine γ";
    return false;
  }
  result.gamma_source = "fitted";
  result.params = {fit.coefficients(0), fit.coefficients(1), fit.coefficients(2)};
  result.alpha_rel_stderr = fit.relative_stderr(0);
  result.beta_rel_stderr = fit.relative_stderr(1);
  result.gamma_rel_stderr = fit.relative_stderr(2);
  return true;
}

// The γ of a collective that reduces nothing (allgather): its cost terms
// have no reduce_bytes, so it needs no local reduce rows and has no γ.
const ModelFit& no_gamma() {
  static const ModelFit none = [] {
    ModelFit fit;
    fit.model = "none";
    fit.params.gamma = 0;
    return fit;
  }();
  return none;
}
bool is_no_gamma(const ModelFit* gamma) { return gamma == &no_gamma(); }

// Fits α and β alone: γ fixed at the local reduce fit's (none where nothing
// is reduced), or, without one, absorbed into β.
RelativeFit fit_alpha_beta(const Eigen::MatrixXd& terms, const Eigen::VectorXd& seconds,
                           const ModelFit* local_gamma,
                           const std::vector<const Measurement*>& points, const std::string& what,
                           ModelFit& result) {
  const Eigen::MatrixXd alpha_beta = terms.leftCols(2);
  Eigen::VectorXd fixed = Eigen::VectorXd::Zero(terms.rows());
  if (is_no_gamma(local_gamma)) {
    result.gamma_source = "none";
    result.params.gamma = 0;
    result.note = "nothing is reduced: no γ term";
  } else if (local_gamma != nullptr) {
    result.gamma_source = "local";
    result.params.gamma = local_gamma->params.gamma;
    fixed = terms.col(2) * local_gamma->params.gamma;
  } else {
    result.gamma_source = "absorbed";
    result.note =
        "no local reduce fit for this dtype and γ not separable here: β includes γ's share";
  }
  if (weighted_rank(alpha_beta, seconds) < 2) {
    too_few_points(points, what, 2,
                   "different (ranks, bytes) combinations that separate the latency term from "
                   "the bandwidth term");
  }
  RelativeFit fit = fit_relative(alpha_beta, seconds, fixed);
  result.params.alpha = fit.coefficients(0);
  result.params.beta = fit.coefficients(1);
  result.alpha_rel_stderr = fit.relative_stderr(0);
  result.beta_rel_stderr = fit.relative_stderr(1);
  return fit;
}

// Step 4 for one group: α, β and, where the points determine it, γ.
ModelFit fit_top_down(FitResults& results, const AlgorithmKey& key,
                      const std::vector<const Measurement*>& points, const ModelFit* local_gamma,
                      const FitOptions& options) {
  const std::string what = group_name(key);
  if (points.size() < 3) {
    too_few_points(points, what, 3,
                   "distinct (ranks, bytes) points: α and β, and one point to judge the fit (4 "
                   "to fit γ as well)");
  }
  bool own = true;
  model_terms(std::get<0>(key), std::get<6>(key), 2, 1.0, &own);
  const Eigen::MatrixXd terms = cost_matrix(points);
  const Eigen::VectorXd seconds = seconds_of(points);
  ModelFit result = base_fit("top_down", points);
  result.terms = own ? "own" : "lower_bound";

  const int rank = weighted_rank(terms, seconds);
  RelativeFit fit;
  bool fitted_gamma = false;
  if (rank == 3 && points.size() >= 4) {
    fit = fit_relative(terms, seconds);
    fitted_gamma = take_fitted_gamma(fit, local_gamma, options, result);
  } else if (local_gamma != nullptr && !is_no_gamma(local_gamma)) {
    result.note = rank < 3 ? "γ from the local reduce fit: this algorithm's bytes and reduce_bytes "
                             "are proportional at every measured point, so its times cannot "
                             "separate β from γ"
                           : "γ from the local reduce fit: 3 points cannot fit α, β and γ and "
                             "judge the fit";
  }
  if (!fitted_gamma) fit = fit_alpha_beta(terms, seconds, local_gamma, points, what, result);
  result.quality = fit.quality;
  add_predictions(results, "top_down", points, fit.predicted);
  return result;
}

// Measured (bytes, seconds) of one benchmark, ascending in bytes: built once
// per group, then interpolated at every point predicted from it.
using SizeCurve = std::vector<std::pair<double, double>>;

SizeCurve size_curve(const std::vector<const Measurement*>& points) {
  SizeCurve curve;
  for (const Measurement* m : points) {
    if (m->bytes > 0 && m->seconds > 0) curve.emplace_back(m->bytes, m->seconds);
  }
  std::sort(curve.begin(), curve.end());
  return curve;
}

// Time at `bytes` on the piecewise-linear log-log curve through `curve`;
// nullopt outside the measured range, where there is nothing to interpolate
// between.
std::optional<double> interpolate_seconds(const SizeCurve& curve, double bytes) {
  if (curve.empty() || !(bytes >= curve.front().first) || !(bytes <= curve.back().first)) {
    return std::nullopt;
  }
  const auto upper = std::lower_bound(curve.begin(), curve.end(), std::pair(bytes, 0.0));
  if (upper->first == bytes) return upper->second;
  const auto lower = std::prev(upper);
  const double weight = std::log(bytes / lower->first) / std::log(upper->first / lower->first);
  return std::exp(std::log(lower->second) + weight * std::log(upper->second / lower->second));
}

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
                                      const SizeCurve& exchange, const SizeCurve& reduce) {
  if (terms.messages <= 0 || terms.bytes <= 0) return std::nullopt;
  const double message_bytes = terms.bytes / terms.messages;
  // Seconds per byte on `curve` at the working-set size, within its range.
  const auto per_byte_at_working_set = [&](const SizeCurve& curve) {
    const double bytes = std::clamp(vector_bytes, message_bytes, curve.back().first);
    return *interpolate_seconds(curve, bytes) / bytes;
  };
  const std::optional<double> exchange_seconds = interpolate_seconds(exchange, message_bytes);
  if (!exchange_seconds) return std::nullopt;
  double seconds = terms.messages *
                   std::max(*exchange_seconds, message_bytes * per_byte_at_working_set(exchange));
  if (terms.reduce_bytes > 0) {
    const std::optional<double> reduce_seconds = interpolate_seconds(reduce, message_bytes);
    if (!reduce_seconds) return std::nullopt;
    seconds += terms.reduce_bytes *
               std::max(*reduce_seconds / message_bytes, per_byte_at_working_set(reduce));
  }
  return seconds;
}

// `model` null: the algorithm has no model here (nothing to predict with).
std::optional<double> model_seconds(const NetworkModel* model, const CollectiveInfo& collective,
                                    const std::string& algorithm, const std::string& transport,
                                    int ranks, double bytes, double element_bytes) {
  if (model == nullptr) return std::nullopt;
  if (const AlgorithmInfo* info = collective.find_algorithm(algorithm); info != nullptr) {
    const auto count = static_cast<std::size_t>(bytes / element_bytes);
    if (!info->unsupported_reason(transport, ranks, count).empty()) return std::nullopt;
  }
  return model_terms(collective.name, algorithm, ranks, bytes)
      .seconds(model->alpha, model->beta, model->gamma);
}

// A (collective, algorithm)'s place in the registry, the order used
// everywhere: the collectives in their order, each one's algorithms in
// theirs; a name that is not an algorithm (pingpong, reduce, memcpy) or a
// family that is not a collective after every one.
std::size_t registry_position(std::string_view collective, std::string_view name) {
  std::size_t position = 0;
  for (const CollectiveInfo& info : collectives()) {
    for (const AlgorithmInfo& algorithm : info.algorithms) {
      if (info.name == collective && algorithm.name == name) return position;
      ++position;
    }
  }
  return position;
}

std::vector<std::string> ordered_candidates(std::string_view collective,
                                            const std::set<std::string>& names) {
  // Registry order first, then the rest by name (the set's order).
  std::vector<std::string> ordered(names.begin(), names.end());
  std::stable_sort(ordered.begin(), ordered.end(), [&](const std::string& a, const std::string& b) {
    return registry_position(collective, a) < registry_position(collective, b);
  });
  return ordered;
}

// predictions.csv in registry order of the collectives and algorithms
// (groups are kept in a map by name): the plots take their order and colours
// from the rows, and an algorithm's colour must be the same in every figure
// of a run.
void order_predictions_by_registry(FitResults& results) {
  std::stable_sort(results.predictions.begin(), results.predictions.end(),
                   [](const PointPrediction& a, const PointPrediction& b) {
                     return registry_position(a.point.family, a.point.algorithm) <
                            registry_position(b.point.family, b.point.algorithm);
                   });
}

}  // namespace

CostTerms model_terms(std::string_view collective, std::string_view algorithm, int ranks,
                      double bytes, bool* own) {
  const CollectiveInfo* info = find_collective(collective);
  if (info == nullptr) {
    throw std::invalid_argument(fmt::format("model_terms: unknown collective '{}'; known: {}",
                                            collective, collective_names()));
  }
  if (const AlgorithmInfo* algorithm_info = info->find_algorithm(algorithm)) {
    if (!is_library_algorithm(*algorithm_info)) {
      if (own != nullptr) *own = true;
      return algorithm_info->cost(ranks, bytes);
    }
  }
  if (own != nullptr) *own = false;
  if (ranks <= 1) return {};
  return info->lower_bound(ranks, bytes);
}

std::string selection_string(std::span<const std::pair<double, std::string>> winners) {
  std::vector<std::pair<double, std::string>> merged;
  for (const auto& [bytes, name] : winners) {
    if (!merged.empty() && merged.back().second == name) {
      merged.back().first = bytes;
    } else {
      merged.emplace_back(bytes, name);
    }
  }
  std::string out;
  double start = 0;
  for (std::size_t i = 0; i < merged.size(); ++i) {
    if (i > 0) out += ';';
    const bool last = i + 1 == merged.size();
    out += fmt::format("{}:{:.0f}-{}", merged[i].second, start,
                       last ? std::string("max") : fmt::format("{:.0f}", merged[i].first));
    start = merged[i].first + 1;
  }
  return out;
}

namespace {

// The cost terms that make two algorithms the same exchange; nullopt for the
// library's algorithms, which have none of their own.
std::optional<CostTerms> exchange_terms(std::string_view collective, std::string_view placement,
                                        std::string_view algorithm, int ranks, double bytes) {
  if (const std::optional<Layout> layout = placement_layout(placement)) {
    const CollectiveInfo* info = find_collective(collective);
    const AlgorithmInfo* algorithm_info =
        info == nullptr ? nullptr : info->find_algorithm(algorithm);
    if (algorithm_info == nullptr || algorithm_info->placed_cost == nullptr ||
        is_library_algorithm(*algorithm_info)) {
      return std::nullopt;
    }
    return algorithm_info->placed_cost(*layout, bytes);
  }
  bool own = false;
  const CostTerms terms = model_terms(collective, algorithm, ranks, bytes, &own);
  return own ? std::optional<CostTerms>(terms) : std::nullopt;
}

bool same_terms(const CostTerms& a, const CostTerms& b) {
  // Equal up to rounding: the same formula may be summed in another order.
  const auto close = [](double x, double y) {
    return std::abs(x - y) <= 1e-9 * std::max({1.0, std::abs(x), std::abs(y)});
  };
  return close(a.messages, b.messages) && close(a.bytes, b.bytes) &&
         close(a.reduce_bytes, b.reduce_bytes) && close(a.intra_messages, b.intra_messages) &&
         close(a.intra_bytes, b.intra_bytes);
}

}  // namespace

std::vector<std::size_t> same_exchanges(std::string_view collective, std::string_view placement,
                                        int ranks, std::span<const std::string> candidates,
                                        std::span<const double> sizes) {
  std::vector<std::vector<std::optional<CostTerms>>> terms;
  for (const std::string& name : candidates) {
    std::vector<std::optional<CostTerms>>& own = terms.emplace_back();
    if (find_collective(collective) == nullptr) continue;  // unknown: no terms
    for (const double bytes : sizes) {
      own.push_back(exchange_terms(collective, placement, name, ranks, bytes));
    }
  }
  const auto equivalent = [&](std::size_t a, std::size_t b) {
    if (terms[a].empty() || terms[b].empty()) return false;
    for (std::size_t i = 0; i < sizes.size(); ++i) {
      if (!terms[a][i] || !terms[b][i] || !same_terms(*terms[a][i], *terms[b][i])) return false;
    }
    return true;
  };
  std::vector<std::size_t> exchange(candidates.size());
  for (std::size_t i = 0; i < candidates.size(); ++i) {
    exchange[i] = i;
    for (std::size_t j = 0; j < i; ++j) {
      if (equivalent(i, j)) {
        exchange[i] = j;
        break;
      }
    }
  }
  return exchange;
}

std::vector<Choice> choose_significant(std::span<const std::string> candidates,
                                       const TimesBySize& times,
                                       std::span<const std::size_t> exchange, double tolerance) {
  const auto exchange_of = [&](std::size_t i) { return exchange.empty() ? i : exchange[i]; };
  std::vector<Choice> choices;
  std::string previous;
  for (const auto& [bytes, measured] : times) {
    std::vector<const TimeSpread*> time(candidates.size(), nullptr);
    for (std::size_t i = 0; i < candidates.size(); ++i) {
      if (const auto it = measured.find(candidates[i]); it != measured.end()) {
        time[i] = &it->second;
      }
    }
    const auto beats = [&](const TimeSpread& y, const TimeSpread& x) {
      return y.q3 * (1 + tolerance) < x.q1;
    };
    std::vector<bool> contender(candidates.size(), false);
    std::optional<std::size_t> fastest;
    for (std::size_t i = 0; i < candidates.size(); ++i) {
      if (time[i] == nullptr) continue;
      contender[i] = std::none_of(time.begin(), time.end(), [&](const TimeSpread* other) {
        return other != nullptr && beats(*other, *time[i]);
      });
      if (!fastest || time[i]->median < time[*fastest]->median) fastest = i;
    }
    // The preferred exchange: the first in candidate order with a median
    // within the tolerance of the lowest (the lowest's own, at worst).
    std::optional<std::size_t> preferred;
    for (std::size_t i = 0; fastest && !preferred && i < candidates.size(); ++i) {
      if (contender[i] && time[i]->median <= time[*fastest]->median * (1 + tolerance)) {
        preferred = exchange_of(i);
      }
    }
    Choice choice;
    choice.bytes = bytes;
    std::optional<std::size_t> chosen;
    for (std::size_t i = 0; preferred && i < candidates.size(); ++i) {
      if (!contender[i]) continue;
      if (exchange_of(i) != *preferred) {
        choice.ties.push_back(candidates[i]);
      } else if (!chosen) {
        chosen = i;
      } else {
        choice.same.push_back(candidates[i]);
      }
    }
    if (chosen) {
      choice.chosen = candidates[*chosen];
      if (!previous.empty() && previous != choice.chosen) {
        choice.previous = previous;
        if (const auto it = measured.find(previous); it != measured.end()) {
          choice.margin = it->second.median / time[*chosen]->median;
          choice.gap = it->second.q1 / time[*chosen]->q3;
        }
      }
      previous = choice.chosen;
    }
    choices.push_back(choice);
  }
  return choices;
}

namespace {

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

// The Hockney line of a link matrix: through its median link's two points
// (latency and bandwidth transfer, measurements.cpp), exactly; fitted like a
// ping-pong when matrices of several sizes are combined.
ModelFit link_matrix_line(FitResults& results, const LinkKey& key,
                          const std::vector<const Measurement*>& points) {
  const auto& [transport, provider, placement] = key;
  const std::string what =
      fmt::format("link matrix transport={} provider={}", transport, or_none(provider));
  if (points.size() > 2) {
    ModelFit fit = fit_affine(results, "hockney_link_matrix", "Hockney fit of the " + what, points);
    fit.note = fmt::format("{}: Hockney fit over the median link's {} sizes", what, points.size());
    return fit;
  }
  // One size: measurements.cpp refuses a matrix whose two sizes are equal.
  const Measurement& small = *points.front();
  const Measurement& large = *points.back();
  const double beta = (large.seconds - small.seconds) / (large.bytes - small.bytes);
  if (!(beta > 0)) {
    throw std::runtime_error(fmt::format(
        "{} ({}): its median link takes {:.6g} us at {:.0f} B and {:.6g} us at {:.0f} B; a "
        "Hockney line needs a larger transfer that takes longer",
        what, fmt::join(small.sources, ", "), small.seconds * 1e6, small.bytes, large.seconds * 1e6,
        large.bytes));
  }
  ModelFit fit = base_fit("hockney_link_matrix", points);
  fit.terms = "alpha+n*beta";
  fit.params.beta = beta;
  fit.params.alpha = std::max(0.0, small.seconds - small.bytes * beta);
  const std::vector<double> predicted = {fit.params.alpha + small.bytes * beta,
                                         fit.params.alpha + large.bytes * beta};
  fit.quality = fit_quality(std::vector<double>{small.seconds, large.seconds}, predicted);
  fit.note = fmt::format(
      "{}: the line through the median of {} directed links at {:.0f} B (latency) and {:.0f} B "
      "(one-way bandwidth transfer)",
      what, small.samples, small.bytes, large.bytes);
  add_predictions(results, "hockney_link_matrix", points, predicted);
  return fit;
}

// Step 1: Hockney per link, the ping-pong, the link matrix, then the sendrecv
// chain per rank count.
LinkFits fit_links(FitResults& results, std::span<const Measurement> measurements) {
  LinkFits fits;
  for (const auto& [key, points] : group_by(measurements, "p2p", link_key, "pingpong")) {
    const auto& [transport, provider, placement] = key;
    ModelFit fit = fit_affine(
        results, "hockney",
        fmt::format("Hockney fit of the p2p ping-pong transport={} provider={} placement={}",
                    transport, or_none(provider), placement),
        points);
    fits.ping_pongs.emplace(key, fit);
    results.fits.push_back(std::move(fit));
  }
  for (const auto& [key, points] : group_by(measurements, "p2p", link_key, "link_matrix")) {
    ModelFit fit = link_matrix_line(results, key, points);
    fits.link_matrices.emplace(key, fit);
    results.fits.push_back(std::move(fit));
  }
  for (const auto& [key, points] : group_by(measurements, "p2p", exchange_key, "sendrecv")) {
    const auto& [transport, provider, placement, ranks] = key;
    ModelFit fit = fit_affine(
        results, "hockney_sendrecv",
        fmt::format("Hockney fit of the p2p sendrecv transport={} provider={} placement={} "
                    "ranks={}",
                    transport, or_none(provider), placement, ranks),
        points);
    fits.exchanges.emplace(key, fit);
    fits.exchange_curves.emplace(key, size_curve(points));
    results.fits.push_back(std::move(fit));
  }
  return fits;
}

// The memcpy ceiling of one transport: the highest copy bandwidth measured.
ModelFit memcpy_ceiling(const std::vector<const Measurement*>& points) {
  ModelFit fit = base_fit("memcpy", points);
  fit.terms = "n/bandwidth";
  fit.dtype.clear();
  fit.op.clear();
  double best = 0, at = 0;
  for (const Measurement* m : points) {
    if (m->bytes / m->seconds > best) {
      best = m->bytes / m->seconds;
      at = m->bytes;
    }
  }
  if (best <= 0) {
    too_few_points(points, "memcpy ceiling", 1, "size > 0 bytes");
  }
  fit.params.beta = 1 / best;
  fit.quality.points = static_cast<int>(points.size());
  fit.quality.r2_log = fit.quality.median_rel_err = fit.quality.max_rel_err = kNaN;
  fit.note = fmt::format("highest copy bandwidth, reached at {:.0f} B", at);
  return fit;
}

// Step 2: γ per (dtype, op), the reduce curves, and the memcpy ceiling.
LocalFits fit_local_kernels(FitResults& results, std::span<const Measurement> measurements) {
  LocalFits fits;
  for (const auto& [key, points] : group_by(measurements, "local", gamma_key, "reduce")) {
    ModelFit fit = fit_affine(
        results, "reduce_gamma",
        fmt::format("γ fit of the local reduce dtype={} op={}", std::get<0>(key), std::get<1>(key)),
        points);
    fits.gammas.emplace(key, fit);
    fits.reduce_curves.emplace(key, size_curve(points));
    results.fits.push_back(std::move(fit));
  }
  for (const auto& [key, points] :
       group_by(measurements, "local", concurrent_gamma_key, "reduce_all")) {
    fits.reduce_all_curves.emplace(key, size_curve(points));
  }
  for (const auto& [key, points] : group_by(measurements, "local", memcpy_key, "memcpy")) {
    results.fits.push_back(memcpy_ceiling(points));
  }
  return fits;
}

// Bottom-up α, β may differ by rank count (sendrecv fits), so its models are
// kept per rank count; a top-down fit spans every rank count.
using BottomUpModels = std::map<std::string, std::map<int, NetworkModel>>;  // by algorithm
using TopDownModels = std::map<std::string, NetworkModel>;                  // by algorithm
struct CollectiveModels {
  BottomUpModels bottom_up;
  TopDownModels top_down;
};
// collective, transport, provider, placement, dtype, op: what step 5 selects among
using ModelsKey =
    std::tuple<std::string, std::string, std::string, std::string, std::string, std::string>;
using FittedModels = std::map<ModelsKey, CollectiveModels>;

// One (collective, algorithm) group of steps 3 and 4 and the fits its
// bottom-up predictions take α, β and γ from.
struct AlgorithmGroup {
  std::string collective, transport, provider, placement, dtype, op, algorithm;
  std::vector<const Measurement*> points;  // at 2 or more ranks
  // The collective reduces (allgather does not: no op, no γ term, no_gamma).
  bool reduces = true;
  const ModelFit* gamma = nullptr;
  const ModelFit* ping_pong = nullptr;
  std::map<int, std::vector<const Measurement*>> points_by_ranks;
  // Per rank count, the fit whose α, β predict it: the sendrecv chain at
  // that p when measured (every rank busy, as in the allreduce), else the
  // ping-pong.
  std::map<int, const ModelFit*> exchange_at;
};

AlgorithmGroup algorithm_group(const AlgorithmKey& key, std::vector<const Measurement*> points,
                               const LinkFits& links, const LocalFits& local) {
  AlgorithmGroup group;
  std::tie(group.collective, group.transport, group.provider, group.placement, group.dtype,
           group.op, group.algorithm) = key;
  group.points = std::move(points);
  group.reduces = find_collective(group.collective)->reduces;
  group.gamma = group.reduces ? find_gamma(local.gammas, group.dtype, group.op) : &no_gamma();
  group.ping_pong = find_link(links.ping_pongs, group.transport, group.provider, group.placement);
  for (const Measurement* m : group.points) group.points_by_ranks[m->ranks].push_back(m);
  for (const auto& entry : group.points_by_ranks) {
    const int ranks = entry.first;
    if (const ModelFit* exchange =
            find_exchange(links.exchanges, group.transport, group.provider, group.placement, ranks);
        exchange != nullptr) {
      group.exchange_at[ranks] = exchange;
    }
  }
  return group;
}

// One bottom-up fit over `points` of `group` with α, β of `source`.
void predict_bottom_up(FitResults& results, const AlgorithmGroup& group,
                       const std::vector<const Measurement*>& points, const ModelFit& source,
                       const std::string& note, BottomUpModels& bottom_up) {
  ModelFit fit = base_fit("bottom_up", points);
  fit.terms = "own";
  fit.params = {source.params.alpha, source.params.beta, group.gamma->params.gamma};
  fit.gamma_source = group.reduces ? "local" : "none";
  fit.link_model = source.model;
  fit.note = note;
  std::vector<double> predicted, measured;
  for (const Measurement* m : points) {
    predicted.push_back(model_terms(group.collective, group.algorithm, m->ranks, m->bytes)
                            .seconds(fit.params.alpha, fit.params.beta, fit.params.gamma));
    measured.push_back(m->seconds);
  }
  fit.quality = fit_quality(measured, predicted);
  add_predictions(results, "bottom_up", points, predicted);
  for (const int ranks : fit.ranks) bottom_up[group.algorithm][ranks] = fit.params;
  results.fits.push_back(std::move(fit));
}

// The by-size prediction of `points` of `group` from the sendrecv points
// behind `exchange` and the reduce points behind γ; points whose mean message
// size lies outside either measured range get none.
void predict_by_size(FitResults& results, const AlgorithmGroup& group,
                     const std::vector<const Measurement*>& points, const ModelFit& exchange,
                     const LinkFits& links, const LocalFits& local) {
  const int ranks = exchange.ranks.front();
  const ModelFit& gamma = *group.gamma;
  const SizeCurve& sendrecv =
      links.exchange_curves.at({exchange.transport, exchange.provider, exchange.placement, ranks});
  // Reductions that run on every rank at once are priced with every rank
  // reducing at once, when that was measured at this p.
  const AlgorithmInfo* info = find_collective(group.collective)->find_algorithm(group.algorithm);
  const auto together = local.reduce_all_curves.find({gamma.dtype, gamma.op, ranks});
  const bool every_rank = info != nullptr && info->reduces_on_every_rank &&
                          together != local.reduce_all_curves.end() && !together->second.empty();
  // Nothing reduced: by_size_seconds never reads the reduce curve.
  static const SizeCurve kNoReduce;
  const SizeCurve& reduce = !group.reduces ? kNoReduce
                            : every_rank   ? together->second
                                           : local.reduce_curves.at({gamma.dtype, gamma.op});
  std::vector<const Measurement*> covered;
  std::vector<double> predicted, measured;
  for (const Measurement* m : points) {
    const std::optional<double> seconds =
        by_size_seconds(model_terms(group.collective, group.algorithm, m->ranks, m->bytes),
                        m->bytes, sendrecv, reduce);
    if (!seconds) continue;
    covered.push_back(m);
    predicted.push_back(*seconds);
    measured.push_back(m->seconds);
  }
  if (covered.size() < points.size()) {
    results.notes.push_back(fmt::format(
        "bottom-up by size: {} of {} {} points at {} ranks left out: their mean message "
        "size is outside the measured sendrecv ({:.0f}..{:.0f} B) or reduce sizes",
        points.size() - covered.size(), points.size(), group.algorithm, exchange.ranks.front(),
        exchange.min_bytes, exchange.max_bytes));
  }
  if (covered.empty()) return;
  ModelFit fit = base_fit("bottom_up_by_size", covered);
  fit.terms = "own";
  fit.params = {kNaN, kNaN, kNaN};
  fit.link_model = exchange.model;
  fit.note =
      group.reduces
          ? fmt::format(
                "each exchange at the {} sendrecv time at {} ranks and each byte reduced at the "
                "{} {} {} rate, both interpolated at the mean message size bytes/messages, "
                "each byte at the rate at the vector size where that is slower (working set)",
                exchange.placement, ranks,
                every_rank ? fmt::format("local reduce_all (every rank at once, {} ranks)", ranks)
                           : std::string("local reduce (rank 0 alone)"),
                gamma.dtype, gamma.op)
          : fmt::format(
                "each exchange at the {} sendrecv time at {} ranks, interpolated at the mean "
                "message size bytes/messages, each byte at the rate at the vector size where "
                "that is slower (working set); nothing is reduced",
                exchange.placement, ranks);
  fit.quality = fit_quality(measured, predicted);
  add_predictions(results, "bottom_up_by_size", covered, predicted);
  results.fits.push_back(std::move(fit));
}

// Why `group` gets no bottom-up prediction at all; empty when it gets one.
std::string bottom_up_skip_note(const AlgorithmGroup& group) {
  bool own = true;
  model_terms(group.collective, group.algorithm, 2, 1.0, &own);
  if (!own) {
    return fmt::format(
        "bottom-up: {} {} (transport={}) has no cost model of its own; fitted top-down with "
        "the {} lower-bound terms only",
        group.collective, group.algorithm, group.transport, group.collective);
  }
  if (group.ping_pong == nullptr && group.exchange_at.empty()) {
    return fmt::format(
        "bottom-up: skipped {} on transport={} provider={}: no p2p ping-pong rows for that "
        "transport and provider",
        group.algorithm, group.transport, or_none(group.provider));
  }
  if (group.gamma == nullptr) {
    return fmt::format(
        "bottom-up: skipped {} on transport={} dtype={}: no local reduce rows for dtype {}",
        group.algorithm, group.transport, group.dtype, group.dtype);
  }
  return {};
}

// Step 3b for a group on several nodes of several ranks each: the
// bottom-up prediction over both levels (fit.h).
void predict_two_level(FitResults& results, const AlgorithmGroup& group, const Layout& layout,
                       const LinkFits& links) {
  const AlgorithmInfo* info = find_collective(group.collective)->find_algorithm(group.algorithm);
  // Each level its own ping-pong: no stand-in of the other level (find_link's).
  const auto ping_pong = [&](const std::string& placement) -> const ModelFit* {
    const auto it = links.ping_pongs.find({group.transport, group.provider, placement});
    return it == links.ping_pongs.end() ? nullptr : &it->second;
  };
  // Between nodes the link matrix where there is one: it measures each
  // pair of hosts alone, one rank per host (fit.h).
  const auto matrix = links.link_matrices.find({group.transport, group.provider, "inter"});
  const ModelFit* intra = ping_pong("intra");
  const ModelFit* inter =
      matrix != links.link_matrices.end() ? &matrix->second : ping_pong("inter");
  std::string missing;
  if (info == nullptr || info->placed_cost == nullptr) {
    missing = "it has no cost over two levels (placed_cost)";
  } else if (intra == nullptr || inter == nullptr) {
    missing = fmt::format(
        "it needs p2p ping-pong rows intra, and a link matrix (collbench-linkmatrix's links "
        "CSV) or p2p ping-pong rows inter, for transport={} provider={} (collbench --families "
        "p2p with several ranks per node; both intra and inter)",
        group.transport, or_none(group.provider));
  } else if (group.gamma == nullptr) {
    missing = fmt::format("no local reduce rows for dtype {}", group.dtype);
  }
  if (!missing.empty()) {
    results.notes.push_back(fmt::format("bottom-up two-level: skipped {} {} on {}: {}",
                                        group.collective, group.algorithm, group.placement,
                                        missing));
    return;
  }
  const TwoLevelLinks levels{intra->params.alpha, intra->params.beta, inter->params.alpha,
                             inter->params.beta};
  ModelFit fit = base_fit("bottom_up_two_level", group.points);
  fit.terms = "own";
  fit.params = {inter->params.alpha, inter->params.beta, group.gamma->params.gamma};
  fit.gamma_source = group.reduces ? "local" : "none";
  fit.link_model = inter->model;
  fit.note = fmt::format(
      "two levels, {} nodes of {} ranks by {}: inside a node α={:.3g} us, 1/β={:.4g} GB/s (intra "
      "ping-pong); between nodes α={:.3g} us, 1/β={:.4g} GB/s ({}), each step at the bytes of "
      "its busiest NIC",
      layout.nodes, layout.per_node, to_string(layout.map_by), levels.intra_alpha * 1e6,
      levels.intra_beta > 0 ? 1e-9 / levels.intra_beta : kNaN, levels.inter_alpha * 1e6,
      levels.inter_beta > 0 ? 1e-9 / levels.inter_beta : kNaN,
      inter->model == "hockney_link_matrix" ? "link matrix" : "inter ping-pong");
  std::vector<double> predicted, measured;
  for (const Measurement* m : group.points) {
    predicted.push_back(info->placed_cost(layout, m->bytes).seconds(levels, fit.params.gamma));
    measured.push_back(m->seconds);
  }
  fit.quality = fit_quality(measured, predicted);
  add_predictions(results, "bottom_up_two_level", group.points, predicted);
  results.fits.push_back(std::move(fit));
}

// Step 3 for one group: the bottom-up predictions, one for every rank count
// from the ping-pong, or one per rank count from that count's sendrecv fit
// (plus its by-size prediction) or, without one, from the ping-pong.
void predict_group_bottom_up(FitResults& results, const AlgorithmGroup& group,
                             const LinkFits& links, const LocalFits& local,
                             BottomUpModels& bottom_up) {
  if (const std::optional<Layout> layout = placement_layout(group.placement)) {
    predict_two_level(results, group, *layout, links);
    return;
  }
  if (std::string skipped = bottom_up_skip_note(group); !skipped.empty()) {
    results.notes.push_back(std::move(skipped));
    return;
  }
  const ModelFit* link = group.ping_pong;
  const std::string gamma_note = group.reduces ? fmt::format("γ from the local reduce {} {}",
                                                             group.gamma->dtype, group.gamma->op)
                                               : std::string("no γ: nothing is reduced");
  if (group.exchange_at.empty()) {
    // One fit for every rank count: α, β do not depend on p.
    predict_bottom_up(results, group, group.points, *link,
                      fmt::format("α, β from the {} p2p fit, {}", link->placement, gamma_note),
                      bottom_up);
    return;
  }
  for (const auto& [ranks, points] : group.points_by_ranks) {
    const auto exchange = group.exchange_at.find(ranks);
    if (exchange != group.exchange_at.end()) {
      predict_bottom_up(results, group, points, *exchange->second,
                        fmt::format("α, β from the {} sendrecv fit at {} ranks, {}",
                                    exchange->second->placement, ranks, gamma_note),
                        bottom_up);
      predict_by_size(results, group, points, *exchange->second, links, local);
    } else if (link != nullptr) {
      predict_bottom_up(results, group, points, *link,
                        fmt::format("α, β from the {} p2p ping-pong fit (no sendrecv rows "
                                    "at {} ranks), {}",
                                    link->placement, ranks, gamma_note),
                        bottom_up);
    } else {
      results.notes.push_back(fmt::format(
          "bottom-up: skipped {} at {} ranks on transport={} provider={}: no p2p "
          "sendrecv rows at {} ranks and no ping-pong rows for that transport and provider",
          group.algorithm, ranks, group.transport, or_none(group.provider), ranks));
    }
  }
}

// Steps 3 and 4: per (collective, algorithm) group, the bottom-up
// predictions, then the top-down fit; the models step 5 selects with.
FittedModels fit_collective_groups(FitResults& results, std::span<const Measurement> measurements,
                                   const LinkFits& links, const LocalFits& local,
                                   const FitOptions& options) {
  FittedModels models;
  std::size_t single_rank_points = 0;
  for (const auto& [key, all_points] : group_collectives(measurements, algorithm_key)) {
    std::vector<const Measurement*> points;
    for (const Measurement* m : all_points) {
      if (m->ranks >= 2) points.push_back(m);
    }
    single_rank_points += all_points.size() - points.size();
    if (points.empty()) continue;
    const AlgorithmGroup group = algorithm_group(key, std::move(points), links, local);
    CollectiveModels& fitted = models[{group.collective, group.transport, group.provider,
                                       group.placement, group.dtype, group.op}];
    predict_group_bottom_up(results, group, links, local, fitted.bottom_up);
    ModelFit fit = fit_top_down(results, key, group.points, group.gamma, options);
    fitted.top_down[group.algorithm] = fit.params;
    results.fits.push_back(std::move(fit));
  }
  if (single_rank_points > 0) {
    results.notes.push_back(fmt::format(
        "{} collective point{} at 1 rank left out: nothing crosses a network, every cost term is "
        "0",
        single_rank_points, single_rank_points == 1 ? "" : "s"));
  }
  return models;
}

// The rows of one selection: per measured size, the algorithm chosen on
// evidence (choose_significant), the lowest median, the fastest predicted
// bottom-up and fitted top-down, and the MPI library's time.
template <typename Predict, typename Fitted>
std::vector<SelectionRow> selection_rows(std::span<const std::string> candidates,
                                         std::span<const std::size_t> exchange, double tolerance,
                                         const TimesBySize& measured, const Predict& predict,
                                         const Fitted& fitted) {
  const std::vector<Choice> choices = choose_significant(candidates, measured, exchange, tolerance);
  std::vector<SelectionRow> rows;
  std::size_t index = 0;
  for (const auto& [bytes, times] : measured) {
    SelectionRow row;
    row.bytes = bytes;
    std::tie(row.measured, row.measured_seconds) =
        fastest(candidates, bytes, [&](const std::string& name, double) {
          const auto it = times.find(name);
          return it == times.end() ? std::nullopt : std::optional<double>(it->second.median);
        });
    std::tie(row.predicted, row.predicted_seconds) = fastest(candidates, bytes, predict);
    std::tie(row.fitted, row.fitted_seconds) = fastest(candidates, bytes, fitted);
    row.choice = choices[index++];
    if (const auto it = times.find(row.choice.chosen); it != times.end()) {
      row.chosen_time = it->second;
    }
    if (const auto it = times.find(std::string(kMpiLibraryAlgorithm)); it != times.end()) {
      row.mpi_seconds = it->second.median;
    }
    rows.push_back(row);
  }
  return rows;
}

// Step 5 for one (collective, ..., ranks) group with at least 2 ranks.
Selection select_algorithms(const SelectionKey& key, const std::vector<const Measurement*>& points,
                            const CollectiveModels& models, double tolerance) {
  const auto& [collective, transport, provider, placement, dtype, op, ranks] = key;
  const CollectiveInfo& collective_info = *find_collective(collective);
  Selection selection{collective, transport, provider, placement, dtype, op,
                      ranks,      {},        {},       "",        "",    ""};
  std::set<std::string> names;
  TimesBySize measured;
  for (const Measurement* m : points) {
    names.insert(m->algorithm);
    measured[m->bytes][m->algorithm] = {m->seconds, m->q1_seconds, m->q3_seconds, m->samples};
  }
  selection.candidates = ordered_candidates(collective, names);
  const auto parsed = parse_dtype(dtype);
  const double element_bytes = parsed ? static_cast<double>(dtype_size(*parsed)) : 1.0;
  const auto predict = [&](const std::string& name, double bytes) {
    const NetworkModel* model = nullptr;
    if (const auto by_ranks = models.bottom_up.find(name); by_ranks != models.bottom_up.end()) {
      if (const auto it = by_ranks->second.find(ranks); it != by_ranks->second.end()) {
        model = &it->second;
      }
    }
    return model_seconds(model, collective_info, name, transport, ranks, bytes, element_bytes);
  };
  const auto fitted = [&](const std::string& name, double bytes) {
    const auto it = models.top_down.find(name);
    return model_seconds(it == models.top_down.end() ? nullptr : &it->second, collective_info, name,
                         transport, ranks, bytes, element_bytes);
  };
  std::vector<double> sizes;
  for (const auto& [bytes, times] : measured) sizes.push_back(bytes);
  const std::vector<std::size_t> exchange =
      same_exchanges(collective, placement, ranks, selection.candidates, sizes);
  selection.rows =
      selection_rows(selection.candidates, exchange, tolerance, measured, predict, fitted);
  std::vector<std::pair<double, std::string>> measured_winners;
  for (const SelectionRow& row : selection.rows) {
    measured_winners.emplace_back(row.bytes, row.choice.chosen);
  }
  selection.measured_string = selection_string(measured_winners);
  const double max_bytes = measured.rbegin()->first;
  selection.predicted_string =
      crossover_selection_string(selection.candidates, max_bytes, element_bytes, predict);
  selection.fitted_string =
      crossover_selection_string(selection.candidates, max_bytes, element_bytes, fitted);
  return selection;
}

// Step 5: selection per rank count.
void select_per_rank_count(FitResults& results, std::span<const Measurement> measurements,
                           const FittedModels& models, double tolerance) {
  // A group without a model of its kind (every point at 1 rank) predicts nothing.
  static const CollectiveModels kNoModels;
  for (const auto& [key, points] : group_collectives(measurements, selection_key)) {
    const auto& [collective, transport, provider, placement, dtype, op, ranks] = key;
    if (ranks < 2) continue;
    const auto it = models.find({collective, transport, provider, placement, dtype, op});
    results.selections.push_back(
        select_algorithms(key, points, it == models.end() ? kNoModels : it->second, tolerance));
  }
}

}  // namespace

FitResults fit_measurements(std::span<const Measurement> measurements, const FitOptions& options) {
  FitResults results;
  const LinkFits links = fit_links(results, measurements);
  const LocalFits local = fit_local_kernels(results, measurements);
  const FittedModels models = fit_collective_groups(results, measurements, links, local, options);
  if (results.fits.empty()) {
    throw std::runtime_error(
        "nothing to fit: no p2p pingpong, local reduce/memcpy or collective rows at 2 or more "
        "ranks in the input");
  }
  select_per_rank_count(results, measurements, models, options.tie_tolerance);
  order_predictions_by_registry(results);
  return results;
}

}  // namespace collbench
