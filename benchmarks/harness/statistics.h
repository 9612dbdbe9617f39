// Statistics across the timed iterations of one benchmark run.
//
// Google Benchmark reports only the mean of an iteration's time; collective
// latency has a long tail (a descheduled rank, a retransmission), so the
// harness keeps every iteration's time itself and reports the order
// statistics that show the tail: min, median, mean, p99 and max.
#pragma once

#include <cstddef>
#include <span>

namespace collbench::harness {

struct Summary {
  std::size_t samples = 0;
  double min = 0;
  double median = 0;
  double mean = 0;
  double p99 = 0;
  double max = 0;
};

// Summarizes `samples` (any unit; the result is in the same unit). The median
// of an even count is the mean of the two middle values; p99 is the
// nearest-rank percentile (the smallest sample that at least 99% of the
// samples do not exceed), so it is always a measured value. Throws
// std::invalid_argument for an empty span. Reorders `samples`.
Summary summarize(std::span<double> samples);

// Nearest-rank percentile of sorted samples, `percent` in (0, 100].
double nearest_rank_percentile(std::span<const double> sorted, double percent);

}  // namespace collbench::harness
