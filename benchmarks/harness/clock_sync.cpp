// Clock synchronization and start windows; see clock_sync.h.
#include "clock_sync.h"

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <limits>
#include <span>
#include <stdexcept>
#include <thread>

namespace collbench::harness {
namespace {

// Tags of the harness's own messages (runner.cpp and harness_group_transport.cpp have the others).
constexpr int kPingTag = 12;
constexpr int kPongTag = 13;
constexpr int kErrorTag = 14;
constexpr int kMaxErrorTag = 15;
constexpr int kWindowTag = 16;

// How long before its start a waiting rank stops yielding and spins.
constexpr double kYieldBeforeSeconds = 20e-6;

template <typename Value>
void send_value(Transport& transport, const Value& value, int peer, int tag) {
  transport.wait(transport.isend(std::as_bytes(std::span(&value, 1)), peer, tag));
}

template <typename Value>
Value receive_value(Transport& transport, int peer, int tag) {
  Value value{};
  transport.wait(transport.irecv(std::as_writable_bytes(std::span(&value, 1)), peer, tag));
  return value;
}

// Rank 0's side of `pings` ping-pongs with every other rank in turn: its
// clock's reading in answer to each ping.
void answer_pings(Transport& transport, const LocalClock& now, int pings) {
  for (int peer = 1; peer < transport.size(); ++peer) {
    for (int ping = 0; ping < pings; ++ping) {
      (void)receive_value<double>(transport, peer, kPingTag);
      send_value(transport, now(), peer, kPongTag);
    }
  }
}

// Another rank's side: the offset of the ping-pong with the shortest round
// trip, whose reply was read closest to the midpoint (SKaMPI's estimate).
OffsetSample measure_offset(Transport& transport, const LocalClock& now, int pings) {
  OffsetSample best{0, 0, std::numeric_limits<double>::infinity()};
  for (int ping = 0; ping < pings; ++ping) {
    const double sent = now();
    send_value(transport, sent, 0, kPingTag);
    const double reference = receive_value<double>(transport, 0, kPongTag);
    const double received = now();
    if (received - sent < best.round_trip) {
      const double middle = (sent + received) / 2;
      best = {middle, middle - reference, received - sent};
    }
  }
  return best;
}

}  // namespace

ClockModel fit_clock_model(const std::vector<OffsetSample>& samples) {
  if (samples.empty()) throw std::invalid_argument("fit_clock_model: no offset samples");
  const auto n = static_cast<double>(samples.size());
  double mean_x = 0;
  double mean_y = 0;
  for (const OffsetSample& sample : samples) {
    mean_x += sample.local / n;
    mean_y += sample.offset / n;
  }
  ClockModel model{mean_y, 0, mean_x};
  double sxx = 0;
  double sxy = 0;
  for (const OffsetSample& sample : samples) {
    sxx += (sample.local - mean_x) * (sample.local - mean_x);
    sxy += (sample.local - mean_x) * (sample.offset - mean_y);
  }
  if (samples.size() < 3 || sxx <= 0) return model;
  const double slope = sxy / sxx;
  double squares = 0;
  for (const OffsetSample& sample : samples) {
    const double residual = sample.offset - mean_y - slope * (sample.local - mean_x);
    squares += residual * residual;
  }
  const double standard_error = std::sqrt(squares / (n - 2) / sxx);
  if (std::abs(slope) > kDriftStandardErrors * standard_error) model.drift = slope;
  return model;
}

ClockModel synchronize_clocks(Transport& transport, const LocalClock& now,
                              const ClockSyncSettings& settings) {
  const int points = std::max(settings.fit_points, 1);
  if (transport.rank() == 0) {
    for (int point = 0; point < points; ++point)
      answer_pings(transport, now, settings.pings_per_point);
    return {};
  }
  const auto pause = std::chrono::duration<double>(
      points > 1 ? settings.span_seconds / static_cast<double>(points - 1) : 0.0);
  std::vector<OffsetSample> samples;
  for (int point = 0; point < points; ++point) {
    if (point > 0) std::this_thread::sleep_for(pause);
    samples.push_back(measure_offset(transport, now, settings.pings_per_point));
  }
  return fit_clock_model(samples);
}

double residual_clock_error(Transport& transport, const LocalClock& now, const ClockModel& model,
                            int pings) {
  if (transport.rank() == 0) {
    answer_pings(transport, now, pings);
    double largest = 0;
    for (int peer = 1; peer < transport.size(); ++peer) {
      largest = std::max(largest, receive_value<double>(transport, peer, kErrorTag));
    }
    for (int peer = 1; peer < transport.size(); ++peer) {
      send_value(transport, largest, peer, kMaxErrorTag);
    }
    return largest;
  }
  const OffsetSample sample = measure_offset(transport, now, pings);
  const double modelled = model.offset + model.drift * (sample.local - model.anchor);
  const double error = std::abs(sample.offset - modelled) + sample.round_trip / 2;
  send_value(transport, error, 0, kErrorTag);
  return receive_value<double>(transport, 0, kMaxErrorTag);
}

void WindowSchedule::agree(Transport& transport, const LocalClock& now, const ClockModel& model,
                           double window, double lead) {
  model_ = model;
  next_ = 0;
  std::array<double, 2> agreed{};  // first start, window
  if (transport.rank() == 0) {
    agreed = {model.to_reference(now()) + lead, window};
    for (int peer = 1; peer < transport.size(); ++peer) {
      send_value(transport, agreed, peer, kWindowTag);
    }
  } else {
    agreed = receive_value<std::array<double, 2>>(transport, 0, kWindowTag);
  }
  first_ = agreed[0];
  window_ = agreed[1];
}

double WindowSchedule::wait_for_next(const LocalClock& now, double not_before) {
  const double start = model_.to_local(first_ + static_cast<double>(next_) * window_);
  ++next_;
  const double arrived = now();
  if (arrived > start) return arrived - start;
  // Far from the start a waiting rank yields its core: ranks that share one
  // (threads of one process, an oversubscribed job) would otherwise keep
  // each other from arriving (seen: one rank spinning 400 us, the other
  // scheduled 5-8 us after the start, every window).
  double time = arrived;
  while (time < start + not_before) {
    if (start + not_before - time > kYieldBeforeSeconds) std::this_thread::yield();
    time = now();
  }
  return not_before > 0 ? time - start : 0;
}

double window_seconds(double cycle_seconds, double clock_error) {
  return std::max(kMinWindowSeconds, 2 * cycle_seconds + 4 * clock_error);
}

}  // namespace collbench::harness
