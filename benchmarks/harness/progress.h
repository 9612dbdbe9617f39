// Progress of a long run on stderr, from rank 0: which benchmark, how many
// are left, time elapsed and, after the first, an estimate of the time
// left. Either one line rewritten in place (a terminal; the reporter clears
// it before results are printed so that it never mixes with the table), or
// with `every_seconds` a new line at each benchmark's start and at least
// that often while one runs, from a thread of its own: a log cannot show a
// line rewritten in place, and one benchmark (a large model's exchange)
// can run for minutes. Off when stderr is not a terminal (unless --progress
// or --progress-lines: under mpirun rank 0's stderr is always a pipe) and
// with --quiet.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <mutex>
#include <string>
#include <thread>

namespace collbench::harness {

class Progress {
 public:
  // every_seconds > 0: new lines (see above); 0: one line in place.
  Progress(bool enabled, std::size_t total, double every_seconds = 0);
  ~Progress();
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  bool enabled() const { return enabled_; }
  // A benchmark starts (its first call).
  void started(const std::string& name);
  // Erases the progress line, if one is shown in place.
  void clear();

  // "[3/40] allreduce/ring/1024  (37 left, 0:42 elapsed, about 8:38 left)":
  // the estimate spreads the elapsed time over the benchmarks started.
  static std::string line(std::size_t started, std::size_t total, const std::string& name,
                          double elapsed_seconds);

 private:
  void heartbeat();
  void print_locked(bool in_place);

  bool enabled_;
  std::size_t total_;
  std::chrono::duration<double> every_;
  std::size_t started_ = 0;
  std::string name_;
  bool line_shown_ = false;
  std::chrono::steady_clock::time_point start_;
  std::chrono::steady_clock::time_point last_line_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace collbench::harness
