// The Runner's other timing conventions and --sync window; see
// timing_conventions.h and clock_sync.h.
#include "timing_conventions.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numeric>

#include "collbench/transport/mpi_transport.h"
#include "families.h"
#include "statistics.h"

namespace collbench::harness {
namespace {

// Synchronized probe calls that size a benchmark's window.
constexpr int kWindowProbes = 7;

}  // namespace

void Runner::barrier_on(LocalRank& local, const char* what) {
  group_->barrier(*local.transport, what);
}

double Runner::job_mean(const std::function<double(const LocalRank&)>& value, const char* what) {
  double local_sum = 0;
  for (const LocalRank& local : local_) local_sum += value(local);
  return group_->sum(local_sum, what) / ranks_;
}

void Runner::prepare_windows(const BenchmarkCase& benchmark_case) {
  if (options_.sync != SyncMode::window || benchmark_case.bare) return;
  const auto clock = [this](const LocalRank& local) -> LocalClock {
    return [this, &local] { return now(local); };
  };
  const auto index = [&](const LocalRank& local) {
    return static_cast<std::size_t>(&local - local_.data());
  };
  if (!windows_) {
    windows_ = std::make_unique<SyncWindows>();
    windows_->models.resize(local_.size());
    windows_->schedules.resize(local_.size());
    each_rank([&](LocalRank& local) {
      windows_->models[index(local)] = synchronize_clocks(*local.transport, clock(local));
    });
  }
  SyncWindows& windows = *windows_;
  if (windows.benchmark != current_.first || windows.round != current_.second) {
    windows.benchmark = current_.first;
    windows.round = current_.second;
    each_rank([&](LocalRank& local) {
      const double error =
          residual_clock_error(*local.transport, clock(local), windows.models[index(local)]);
      if (index(local) == 0) windows.clock_error = error;
    });
    // A window must hold a whole cycle of the timed loop: the call, the
    // reduction of its time and, in a group, waking the ranks' threads for
    // the next call; a probe's cycle runs from one start (rank 0's exit of
    // the barrier) to the next, so it holds a barrier too.
    phase_ = Phase::calibration;
    std::vector<double> starts;
    for (int probe = 0; probe <= kWindowProbes; ++probe) {
      each_rank([&](LocalRank& local) {
        barrier_on(local, "the barrier before a window probe");
        if (index(local) == 0) starts.push_back(now(local));
        local.seconds = local.prepared->call(benchmark_case);
      });
      slowest_call("the reduction of a window probe's time");
    }
    std::vector<double> cycles;
    for (std::size_t k = 1; k < starts.size(); ++k) cycles.push_back(starts[k] - starts[k - 1]);
    windows.window = window_seconds(summarize(cycles).median, windows.clock_error);
  }
}

void Runner::agree_on_windows() {
  if (!windows_) return;
  SyncWindows& windows = *windows_;
  const auto index = [&](const LocalRank& local) {
    return static_cast<std::size_t>(&local - local_.data());
  };
  // Time for rank 0's message with the first start to reach every rank.
  const double lead = std::max(1e-3, 10 * windows.window);
  windows.late_starts = 0;
  each_rank([&](LocalRank& local) {
    windows.schedules[index(local)].agree(
        *local.transport, [this, &local] { return now(local); }, windows.models[index(local)],
        windows.window, lead);
  });
  // Rank 0's window is the one every rank uses.
  windows.window = windows.schedules.front().window();
}

void Runner::start_in_window(const Transport& transport) {
  LocalRank& local = local_rank(transport.rank());
  const auto index = static_cast<std::size_t>(&local - local_.data());
  WindowSchedule& schedule = windows_->schedules[index];
  const bool made_late = transport.rank() == options_.debug_late_rank && timed_calls_ % 2 == 0;
  local.late = schedule.wait_for_next([this, &local] { return now(local); },
                                      made_late ? 1.5 * schedule.window() : 0);
}

bool Runner::late_start(double slowest_seconds) {
  if (slowest_seconds < kLateMarkSeconds) return false;
  ++windows_->late_starts;
  const double lateness = slowest_seconds - kLateMarkSeconds;
  // One more than it was late by: the late call and its reduction end
  // after the start it was late for.
  const auto windows = static_cast<std::uint64_t>(std::ceil(lateness / windows_->window)) + 1;
  for (WindowSchedule& schedule : windows_->schedules) schedule.skip(windows);
  return true;
}

void Runner::set_convention_counters(benchmark::State& state, const BenchmarkCase& benchmark_case) {
  if (benchmark_case.family != &collective_family() || benchmark_case.bare) return;
  auto& counters = state.counters;
  if (options_.sync == SyncMode::barrier) {
    const double osu = job_mean(
        [](const LocalRank& local) {
          return std::accumulate(local.own_seconds.begin(), local.own_seconds.end(), 0.0) /
                 static_cast<double>(local.own_seconds.size());
        },
        "the mean over ranks of their mean times");
    counters["osu_avg_us"] = osu * 1e6;
  }
  if (!options_.no_nccl_batch) {
    each_rank([&](LocalRank& local) {
      barrier_on(local, "the barrier before a batch of back-to-back calls");
      const double started = now(local);
      for (int call = 0; call < kNcclBatchCalls; ++call) local.prepared->call(benchmark_case);
      local.seconds = (now(local) - started) / kNcclBatchCalls;
    });
    counters["nccl_avg_us"] = job_mean([](const LocalRank& local) { return local.seconds; },
                                       "the mean over ranks of their batch times") *
                              1e6;
  }
  if (windows_) {
    counters["window_us"] = windows_->window * 1e6;
    counters["clock_error_us"] = windows_->clock_error * 1e6;
    counters["late_starts"] = static_cast<double>(windows_->late_starts);
  }
}

}  // namespace collbench::harness
