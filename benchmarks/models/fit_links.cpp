// Steps 1 and 2 of collbench-fit (fit.h): the links (ping-pong, link matrix,
// sendrecv) and the local kernels (γ, the memcpy ceiling).
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
