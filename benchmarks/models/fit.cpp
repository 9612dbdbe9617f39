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

#include "fit_steps.h"

namespace collbench {

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
