// What the fitting steps share; see fit_steps.h.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>
#include <stdexcept>
#include <tuple>

#include "collbench/core/dtype.h"
#include "fit_steps.h"

namespace collbench {

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

ExchangeKey exchange_key(const Measurement& m) {
  return {m.transport, m.provider, m.placement, m.ranks};
}

std::tuple<std::string, std::string> memcpy_key(const Measurement& m) {
  return {m.transport, m.provider};
}

AlgorithmKey algorithm_key(const Measurement& m) {
  return {m.family, m.transport, m.provider, m.placement, m.dtype, m.op, m.algorithm};
}

SelectionKey selection_key(const Measurement& m) {
  return {m.family, m.transport, m.provider, m.placement, m.dtype, m.op, m.ranks};
}

const ModelFit* find_link(const std::map<LinkKey, ModelFit>& links, const std::string& transport,
                          const std::string& provider, const std::string& placement) {
  for (const std::string& candidate : {placement, std::string("inter"), std::string("intra")}) {
    const auto it = links.find({transport, provider, candidate});
    if (it != links.end()) return &it->second;
  }
  return nullptr;
}

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

const ModelFit& no_gamma() {
  static const ModelFit none = [] {
    ModelFit fit;
    fit.model = "none";
    fit.params.gamma = 0;
    return fit;
  }();
  return none;
}

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

SizeCurve size_curve(const std::vector<const Measurement*>& points) {
  SizeCurve curve;
  for (const Measurement* m : points) {
    if (m->bytes > 0 && m->seconds > 0) curve.emplace_back(m->bytes, m->seconds);
  }
  std::sort(curve.begin(), curve.end());
  return curve;
}

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

void order_predictions_by_registry(FitResults& results) {
  std::stable_sort(results.predictions.begin(), results.predictions.end(),
                   [](const PointPrediction& a, const PointPrediction& b) {
                     return registry_position(a.point.family, a.point.algorithm) <
                            registry_position(b.point.family, b.point.algorithm);
                   });
}

}  // namespace collbench
