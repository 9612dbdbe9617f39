// Steps 1 and 2 of collbench-fit (fit.h): the links (ping-pong, link matrix,
// sendrecv) and the local kernels (γ, the memcpy ceiling).
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <ranges>
#include <set>
#include <span>
#include <stdexcept>
#include <tuple>

#include "collbench/core/dtype.h"
#include "fit_steps.h"

namespace collbench {

namespace {

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

enum class Error { relative, absolute };

// The line t = c0 + n·c1 through `points` that minimises `error`.
RelativeFit line_through(std::span<const Measurement* const> points, Error error) {
  Eigen::MatrixXd terms(static_cast<Eigen::Index>(points.size()), 2);
  Eigen::VectorXd seconds(static_cast<Eigen::Index>(points.size()));
  for (std::size_t i = 0; i < points.size(); ++i) {
    terms.row(static_cast<Eigen::Index>(i)) << 1.0, points[i]->bytes;
    seconds(static_cast<Eigen::Index>(i)) = points[i]->seconds;
  }
  return error == Error::relative ? fit_relative(terms, seconds) : fit_absolute(terms, seconds);
}

double squared_relative_error(const RelativeFit& fit, std::span<const Measurement* const> points) {
  double sum = 0;
  for (std::size_t i = 0; i < points.size(); ++i) {
    sum += std::pow((fit.predicted[i] - points[i]->seconds) / points[i]->seconds, 2);
  }
  return sum;
}

std::size_t distinct_sizes(std::span<const Measurement* const> points) {
  std::set<double> sizes;
  for (const Measurement* m : points) sizes.insert(m->bytes);
  return sizes.size();
}

// What each point of a ping-pong is the median of. A launch's offset is
// shared by its sizes (one launch's 256 KiB and 2 MiB took 19 and 187 µs,
// another's 14 and 145), so a line through one launch's points is that
// launch's α and β; through the medians over launches (measurements.cpp),
// the machine's.
std::string samples_of(std::span<const Measurement* const> points) {
  const auto [fewest, most] = std::ranges::minmax(
      points | std::views::transform([](const Measurement* m) { return m->launches; }));
  if (most < 2) {
    return "each size the median of its rows, from one launch or launches not told apart (no "
           "launch column): a launch's offset is not seen";
  }
  return fewest == most ? fmt::format("each size the median over {} launches", most)
                        : fmt::format("each size the median over {}-{} launches", fewest, most);
}

// The ping-pong's Hockney line, split at the protocol switch (fit.h, step
// 1). The switch is found in the data, not taken from the library's eager
// limit: that limit is not in the CSV and differs by transport (Open MPI's
// vader 4 KiB with its header counted, tcp 64 KiB, libfabric's providers
// their own). α's line is fitted by relative error, as every fit; β's by
// absolute error, because above the switch the per-byte rate still changes
// with size (cache-resident transfers are faster per byte) and the relative
// fit would split the difference, missing the largest sizes, where β is
// nearly all of the time and is what an algorithm's large messages cost.
ModelFit ping_pong_line(FitResults& results, const std::string& what,
                        const std::vector<const Measurement*>& unsorted) {
  constexpr std::size_t kPerSide = 3;  // two parameters and one size to judge them
  if (distinct_sizes(unsorted) < 2 * kPerSide) {
    ModelFit fit = fit_affine(results, "hockney", what, unsorted);
    fit.note = fmt::format(
        "one line through every size: {} sizes are too few to split it at the protocol switch "
        "(needs {} per side)",
        distinct_sizes(unsorted), kPerSide);
    return fit;
  }
  std::vector<const Measurement*> points = unsorted;
  std::stable_sort(points.begin(), points.end(),
                   [](const Measurement* a, const Measurement* b) { return a->bytes < b->bytes; });
  const std::span<const Measurement* const> all(points);
  std::size_t split = 0;
  double least = std::numeric_limits<double>::infinity();
  for (std::size_t k = 1; k < points.size(); ++k) {
    if (points[k - 1]->bytes == points[k]->bytes) continue;
    const auto below = all.first(k), above = all.subspan(k);
    if (distinct_sizes(below) < kPerSide || distinct_sizes(above) < kPerSide) continue;
    const double error = squared_relative_error(line_through(below, Error::relative), below) +
                         squared_relative_error(line_through(above, Error::relative), above);
    if (error < least) {
      least = error;
      split = k;
    }
  }
  const auto below = all.first(split), above = all.subspan(split);
  const RelativeFit alpha_line = line_through(below, Error::relative);
  const RelativeFit absolute = line_through(above, Error::absolute);
  const double beta = absolute.coefficients(1);
  // β's line, its intercept (the switch's cost) by relative error with β
  // held: what predictions.csv and the quality show above the switch.
  const auto rows = static_cast<Eigen::Index>(above.size());
  const Eigen::MatrixXd ones = Eigen::MatrixXd::Ones(rows, 1);
  Eigen::VectorXd seconds(rows), bandwidth_part(rows);
  for (std::size_t i = 0; i < above.size(); ++i) {
    seconds(static_cast<Eigen::Index>(i)) = above[i]->seconds;
    bandwidth_part(static_cast<Eigen::Index>(i)) = above[i]->bytes * beta;
  }
  const RelativeFit beta_line = fit_relative(ones, seconds, bandwidth_part);
  ModelFit fit = base_fit("hockney", points);
  fit.terms = "alpha+n*beta";
  fit.params.alpha = alpha_line.coefficients(0);
  fit.params.beta = beta;
  fit.alpha_rel_stderr = alpha_line.relative_stderr(0);
  fit.beta_rel_stderr = absolute.relative_stderr(1);
  fit.switch_bytes = above.front()->bytes;
  std::vector<double> measured, predicted = alpha_line.predicted;
  predicted.insert(predicted.end(), beta_line.predicted.begin(), beta_line.predicted.end());
  for (const Measurement* m : points) measured.push_back(m->seconds);
  fit.quality = fit_quality(measured, predicted);
  fit.note = fmt::format(
      "α from the line through {:.0f}-{:.0f} B (relative error), β from the line through "
      "{:.0f}-{:.0f} B (absolute error; its intercept {:.3g} µs): the protocol switch at {:.0f} B "
      "is the break where two lines fitted by relative error err least; the quality is of the "
      "two lines; {}",
      below.front()->bytes, below.back()->bytes, above.front()->bytes, above.back()->bytes,
      beta_line.coefficients(0) * 1e6, fit.switch_bytes, samples_of(points));
  add_predictions(results, "hockney", points, predicted);
  return fit;
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

}  // namespace

LinkFits fit_links(FitResults& results, std::span<const Measurement> measurements) {
  LinkFits fits;
  for (const auto& [key, points] : group_by(measurements, "p2p", link_key, "pingpong")) {
    const auto& [transport, provider, placement] = key;
    ModelFit fit = ping_pong_line(
        results,
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

}  // namespace collbench
