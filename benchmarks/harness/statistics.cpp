// Order statistics of per-iteration times; see statistics.h.
#include "statistics.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>
#include <string>

namespace collbench::harness {

double nearest_rank_percentile(std::span<const double> sorted, double percent) {
  if (sorted.empty()) throw std::invalid_argument("percentile of an empty sample set");
  if (!(percent > 0 && percent <= 100)) {
    throw std::invalid_argument("percentile " + std::to_string(percent) + " is outside (0, 100]");
  }
  const auto rank =
      static_cast<std::size_t>(std::ceil(percent / 100.0 * static_cast<double>(sorted.size())));
  return sorted[std::clamp<std::size_t>(rank, 1, sorted.size()) - 1];
}

Summary summarize(std::span<double> samples) {
  if (samples.empty()) throw std::invalid_argument("cannot summarize zero iterations");
  std::sort(samples.begin(), samples.end());
  Summary summary;
  summary.samples = samples.size();
  summary.min = samples.front();
  summary.max = samples.back();
  const std::size_t middle = samples.size() / 2;
  summary.median =
      samples.size() % 2 == 1 ? samples[middle] : (samples[middle - 1] + samples[middle]) / 2.0;
  summary.mean =
      std::accumulate(samples.begin(), samples.end(), 0.0) / static_cast<double>(samples.size());
  summary.p99 = nearest_rank_percentile(samples, 99.0);
  return summary;
}

}  // namespace collbench::harness
