// Progress lines on stderr; see progress.h.
#include "progress.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace collbench::harness {
namespace {

std::string minutes(double seconds) {
  const auto whole = static_cast<long long>(std::llround(seconds));
  return fmt::format("{}:{:02}", whole / 60, whole % 60);
}

}  // namespace

Progress::Progress(bool enabled, std::size_t total, double every_seconds)
    : enabled_(enabled),
      total_(total),
      every_(std::min(every_seconds, 86400.0)),  // a day: no clock overflow
      start_(std::chrono::steady_clock::now()),
      last_line_(start_) {
  if (enabled_ && every_seconds > 0) thread_ = std::thread([this] { heartbeat(); });
}

Progress::~Progress() {
  if (!thread_.joinable()) return;
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

std::string Progress::line(std::size_t started, std::size_t total, const std::string& name,
                           double elapsed_seconds) {
  const std::size_t left = total > started ? total - started : 0;
  // The benchmark running is half done, on average.
  const double done = static_cast<double>(started) - 0.5;
  const std::string estimate =
      started > 1 ? fmt::format(", about {} left",
                                minutes(elapsed_seconds / done * (static_cast<double>(left) + 0.5)))
                  : "";
  return fmt::format("[{}/{}] {}  ({} left, {} elapsed{})", started, total, name, left,
                     minutes(elapsed_seconds), estimate);
}

void Progress::print_locked(bool in_place) {
  const auto now = std::chrono::steady_clock::now();
  const std::string text =
      line(started_, total_, name_, std::chrono::duration<double>(now - start_).count());
  // \r and "erase to end of line" rewrite the line in place.
  if (in_place) {
    fmt::print(stderr, "\r\033[K{}", text);
    line_shown_ = true;
  } else {
    fmt::print(stderr, "collbench: {}\n", text);
  }
  std::fflush(stderr);
  last_line_ = now;
}

void Progress::started(const std::string& name) {
  const std::lock_guard<std::mutex> lock(mutex_);
  ++started_;
  name_ = name;
  if (!enabled_) return;
  // New lines: at most one per benchmark start and per period, so that a
  // sweep of thousands of short benchmarks does not flood the log.
  const bool lines = every_.count() > 0;
  if (lines && started_ > 1 && std::chrono::steady_clock::now() - last_line_ < every_ / 2) return;
  print_locked(!lines);
}

void Progress::heartbeat() {
  std::unique_lock<std::mutex> lock(mutex_);
  while (!stopping_) {
    const auto due =
        last_line_ + std::chrono::duration_cast<std::chrono::steady_clock::duration>(every_);
    if (wake_.wait_until(lock, due, [this] { return stopping_; })) break;
    if (std::chrono::steady_clock::now() < last_line_ + every_) continue;
    if (started_ > 0) {
      print_locked(false);
    } else {
      last_line_ = std::chrono::steady_clock::now();  // nothing started yet: nothing to say
    }
  }
}

void Progress::clear() {
  const std::lock_guard<std::mutex> lock(mutex_);
  if (!line_shown_) return;
  fmt::print(stderr, "\r\033[K");
  std::fflush(stderr);
  line_shown_ = false;
}

}  // namespace collbench::harness
