// --sync window's clock synchronization and start schedule
// (benchmarks/harness/clock_sync.h): offsets and drifts injected into the
// ranks' clocks on the in-process transport are recovered; a late start is
// reported with its lateness and skipped past.
#include "clock_sync.h"

#include <gtest/gtest.h>

#include <array>
#include <chrono>
#include <mutex>

#include "collbench/transport/inproc_transport.h"

namespace collbench::harness {
namespace {

double steady_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// Rank r's clock reads the steady clock scaled by (1 + drift[r]) and
// shifted by offset[r].
struct SkewedClocks {
  std::array<double, 3> offset{};
  std::array<double, 3> drift{};
  LocalClock of(int rank) const {
    return [this, rank] {
      const auto r = static_cast<std::size_t>(rank);
      return steady_seconds() * (1 + drift[r]) + offset[r];
    };
  }
};

std::array<ClockModel, 3> synchronized_models(const SkewedClocks& clocks,
                                              const ClockSyncSettings& settings) {
  std::array<ClockModel, 3> models{};
  std::mutex mutex;
  run_in_process(3, [&](InstrumentedTransport& transport) {
    const ClockModel model = synchronize_clocks(transport, clocks.of(transport.rank()), settings);
    const std::lock_guard<std::mutex> lock(mutex);
    models[static_cast<std::size_t>(transport.rank())] = model;
  });
  return models;
}

// local − reference of rank r's clock when it reads `local` (rank 0's
// clock is the steady one).
double true_offset(const SkewedClocks& clocks, std::size_t r, double local) {
  const double steady = (local - clocks.offset[r]) / (1 + clocks.drift[r]);
  return local - steady;
}

// The ping-pongs' error is at most half the shortest round trip, which a
// thread descheduled mid-ping on a busy machine makes long: the bound is
// generous, the injected skews hundreds of times larger.
constexpr double kBound = 1e-3;

TEST(ClockSync, RecoversInjectedOffsets) {
  SkewedClocks clocks;
  clocks.offset = {0, 0.25, -1.5};
  const std::array<ClockModel, 3> models = synchronized_models(clocks, {});
  for (std::size_t r = 0; r < 3; ++r) {
    EXPECT_NEAR(models[r].offset, clocks.offset[r], kBound) << "rank " << r;
  }
}

TEST(ClockSync, RecoversInjectedDrift) {
  SkewedClocks clocks;
  clocks.offset = {0, 3.0, 0};
  clocks.drift = {0, 0.02, -0.03};
  ClockSyncSettings settings;
  settings.span_seconds = 0.1;
  const std::array<ClockModel, 3> models = synchronized_models(clocks, settings);
  EXPECT_EQ(models[0].drift, 0);
  EXPECT_EQ(models[0].offset, 0);
  for (std::size_t r = 1; r < 3; ++r) {
    // local − reference grows by drift / (1 + drift) per second of the
    // local clock.
    const double drift = clocks.drift[r] / (1 + clocks.drift[r]);
    EXPECT_NEAR(models[r].drift, drift, 2e-3) << "rank " << r;
    const ClockModel& model = models[r];
    EXPECT_NEAR(model.offset, true_offset(clocks, r, model.anchor), kBound) << "rank " << r;
    // Both ends of the span: the line, not only its middle.
    for (const double later : {-0.05, 0.05}) {
      const double local = model.anchor + later;
      EXPECT_NEAR(local - model.to_reference(local), true_offset(clocks, r, local), kBound)
          << "rank " << r << " at " << later << " s";
    }
  }
}

TEST(ClockSync, ResidualErrorIsSmallForAGoodModelAndLargeForABadOne) {
  SkewedClocks clocks;
  clocks.offset = {0, 0.5, 0};
  std::array<double, 3> good{};
  std::array<double, 3> bad{};
  std::mutex mutex;
  run_in_process(3, [&](InstrumentedTransport& transport) {
    const LocalClock now = clocks.of(transport.rank());
    const ClockModel model = synchronize_clocks(transport, now, {});
    ClockModel off = model;
    if (transport.rank() == 1) off.offset += 0.05;
    const double good_error = residual_clock_error(transport, now, model);
    const double bad_error = residual_clock_error(transport, now, off);
    const std::lock_guard<std::mutex> lock(mutex);
    good[static_cast<std::size_t>(transport.rank())] = good_error;
    bad[static_cast<std::size_t>(transport.rank())] = bad_error;
  });
  for (std::size_t r = 0; r < 3; ++r) {
    EXPECT_LT(good[r], kBound) << "rank " << r;
    // The largest over ranks, on every rank: rank 1's 50 ms.
    EXPECT_NEAR(bad[r], 0.05, kBound) << "rank " << r;
  }
}

TEST(ClockSync, FitKeepsOnlyADriftItResolves) {
  // Points on a line: offset and slope exact.
  std::vector<OffsetSample> line;
  for (int k = 0; k < 6; ++k) line.push_back({10.0 + k, 2.0 + 1e-3 * k, 1e-6});
  const ClockModel model = fit_clock_model(line);
  EXPECT_NEAR(model.drift, 1e-3, 1e-12);
  EXPECT_NEAR(model.offset + model.drift * (12.0 - model.anchor), 2.002, 1e-12);
  // Noise with no trend: no drift, the mean offset.
  const std::vector<OffsetSample> noise = {
      {0, 1e-6, 0}, {1, -1e-6, 0}, {2, 1e-6, 0}, {3, -1e-6, 0}, {4, 2e-6, 0}};
  const ClockModel flat = fit_clock_model(noise);
  EXPECT_EQ(flat.drift, 0);
  EXPECT_NEAR(flat.offset, 0.4e-6, 1e-15);
  EXPECT_THROW(fit_clock_model({}), std::invalid_argument);
}

// A clock that advances by `step` at every reading.
struct SteppingClock {
  double time = 0;
  double step = 1e-6;
  LocalClock clock() {
    return [this] {
      time += step;
      return time;
    };
  }
};

TEST(WindowSchedule, StartsInItsWindowsAndReportsALateStart) {
  SteppingClock clock;
  WindowSchedule schedule;
  run_in_process(1, [&](InstrumentedTransport& transport) {
    schedule.agree(transport, clock.clock(), ClockModel{}, 1e-3, 10e-3);
  });
  EXPECT_EQ(schedule.window(), 1e-3);
  const double first = clock.time + 10e-3;  // the agreed first start (the clock read once)
  // In time: waits until the start.
  EXPECT_EQ(schedule.wait_for_next(clock.clock()), 0);
  EXPECT_GE(clock.time, first);
  EXPECT_LT(clock.time, first + 3e-6);
  // The second window starts 1 ms later; arriving 2.5 ms after it: late.
  clock.time = first + 1e-3 + 2.5e-3;
  EXPECT_NEAR(schedule.wait_for_next(clock.clock()), 2.5e-3, 2e-6);
  // Skipping the 3 windows it was late by: the next start (the sixth
  // window, at first + 5 ms) lies ahead again.
  schedule.skip(3);
  EXPECT_EQ(schedule.wait_for_next(clock.clock()), 0);
  EXPECT_GE(clock.time, first + 5e-3);
  EXPECT_LT(clock.time, first + 5e-3 + 3e-6);
  // Made late on purpose (--debug-late-rank): 1.5 windows after the start.
  EXPECT_NEAR(schedule.wait_for_next(clock.clock(), 1.5e-3), 1.5e-3, 2e-6);
}

TEST(WindowSchedule, EveryRankGetsRankZerosWindow) {
  std::array<double, 3> windows{};
  std::mutex mutex;
  run_in_process(3, [&](InstrumentedTransport& transport) {
    WindowSchedule schedule;
    schedule.agree(transport, steady_seconds, ClockModel{}, transport.rank() == 0 ? 2e-3 : 1.0,
                   5e-3);
    const std::lock_guard<std::mutex> lock(mutex);
    windows[static_cast<std::size_t>(transport.rank())] = schedule.window();
  });
  for (std::size_t r = 0; r < 3; ++r) EXPECT_EQ(windows[r], 2e-3) << "rank " << r;
}

TEST(WindowSchedule, WindowHoldsTwoCyclesAndTheClockError) {
  EXPECT_EQ(window_seconds(100e-6, 5e-6), 220e-6);
  EXPECT_EQ(window_seconds(1e-6, 0), kMinWindowSeconds);
}

}  // namespace
}  // namespace collbench::harness
