// --sync window: the ranks' clocks synchronized once, then every timed call
// started at an agreed global time (ReproMPI's window-based scheme, Hunold
// & Carpen-Amarie, "Reproducible MPI Benchmarking Is Still Not as Easy as
// You Think", TPDS 2016).
//
// Why ReproMPI's linear model (offset and drift against rank 0's clock,
// fitted once over a span of ping-pongs) rather than MPIX_Harmonize
// (Schuchart, Hunold & Bosilca: an offset-only agreement, cheap enough to
// repeat before every measurement): the harness synchronizes once per run,
// so a clock that drifts must be modelled, and the residual it leaves is
// measured again at every benchmark (clock_error_us) instead of assumed.
// A drift the fit cannot resolve from its noise (below kDriftStandardErrors
// standard errors: with 8 points pure noise passes 3 in about 2% of fits, 5
// in 0.3%) is taken
// as none: ranks on one node read one clock, and a noisy
// slope would only add an error that grows with the run's length.
//
// Everything here goes over the transport (tags below kFirstSlotTag), so
// it runs the same on MPI, in-process threads and --bootstrap file:DIR.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "collbench/transport/transport.h"

namespace collbench::harness {

// Seconds on a rank's own clock.
using LocalClock = std::function<double()>;

// A rank's clock against the reference (rank 0's): local − reference =
// offset + drift · (local − anchor).
struct ClockModel {
  double offset = 0;
  double drift = 0;
  double anchor = 0;
  double to_reference(double local) const { return local - offset - drift * (local - anchor); }
  double to_local(double reference) const {
    return (reference + offset - drift * anchor) / (1 - drift);
  }
};

struct ClockSyncSettings {
  int fit_points = 8;          // offset measurements the model is fitted to
  int pings_per_point = 20;    // ping-pongs per measurement; the shortest round trip's counts
  double span_seconds = 0.02;  // how far apart in time the first and last measurement lie
};

// One measurement of local − reference: at `local` (the midpoint of the
// shortest round trip), the offset, and that round trip (twice the bound
// on the offset's error).
struct OffsetSample {
  double local = 0;
  double offset = 0;
  double round_trip = 0;
};

inline constexpr double kDriftStandardErrors = 5;

// The model from a rank's measurements: a least-squares line, its slope
// kept only when it exceeds kDriftStandardErrors standard errors. Throws
// std::invalid_argument for no samples.
ClockModel fit_clock_model(const std::vector<OffsetSample>& samples);

// Collective: every rank of `transport` calls it with its own clock; rank
// 0 answers the others' ping-pongs, each other rank returns its model
// (rank 0's is the identity).
ClockModel synchronize_clocks(Transport& transport, const LocalClock& now,
                              const ClockSyncSettings& settings = {});

// Collective: how far each rank's model is off now (|measured − modelled
// offset| of a fresh measurement, plus half its round trip: what the
// measurement cannot resolve), the largest over ranks, on every rank.
double residual_clock_error(Transport& transport, const LocalClock& now, const ClockModel& model,
                            int pings = 20);

// The start times of one benchmark's timed calls on one rank: window i
// starts at first + i · window on the reference clock.
class WindowSchedule {
 public:
  // Collective: rank 0 chooses the first start (`lead` seconds from now on
  // its clock, time for the message to reach every rank) and sends it with
  // its `window` (the other ranks' is ignored) to every rank.
  void agree(Transport& transport, const LocalClock& now, const ClockModel& model, double window,
             double lead);
  // Waits (spinning) for the next window's start, or `not_before` seconds
  // after it; the seconds this rank arrived after the start (0 when in
  // time). A late rank starts at once.
  double wait_for_next(const LocalClock& now, double not_before = 0);
  // Moves the following starts `windows` windows later (after a late start,
  // the same number on every rank, so that the ranks catch up together).
  void skip(std::uint64_t windows) { next_ += windows; }
  double window() const { return window_; }

 private:
  ClockModel model_;
  double first_ = 0;  // reference seconds
  double window_ = 0;
  std::uint64_t next_ = 0;
};

// A rank late for its window reports kLateMarkSeconds plus its lateness as
// its time, so that the reduction of the slowest time every sample already
// makes also tells every rank that the sample is dropped and how many
// windows to skip; no call the timeout allows lasts that long.
inline constexpr double kLateMarkSeconds = 1e9;

// --sync window's state in a Runner: each local rank's clock model and
// schedule, and the current benchmark's window.
struct SyncWindows {
  std::vector<ClockModel> models;  // by local rank
  std::vector<WindowSchedule> schedules;
  const void* benchmark = nullptr;  // the benchmark (and round) the window is for
  int round = -1;
  double window = 0;
  double clock_error = 0;
  std::uint64_t late_starts = 0;  // of the latest timed loop
};

// The window for calls whose cycle (from one start to the next: the call,
// the harness's reduction of its time, a barrier) took `cycle_seconds` (a
// median of probes) with
// `clock_error` left between the ranks' clocks: twice the cycle plus four
// clock errors, at least kMinWindowSeconds.
inline constexpr double kMinWindowSeconds = 10e-6;
double window_seconds(double cycle_seconds, double clock_error);

}  // namespace collbench::harness
