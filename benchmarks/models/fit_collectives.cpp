// Steps 3 and 4 of collbench-fit (fit.h): each collective group's bottom-up
// predictions and top-down fits.
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

namespace {

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

}  // namespace

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

}  // namespace collbench
