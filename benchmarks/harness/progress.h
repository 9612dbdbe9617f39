// Progress of a long run on stderr, from rank 0: which benchmark, how many
// are left, time elapsed. One line, rewritten in place; the reporter clears
// it before results are printed so that it never mixes with the table.
// Off when stderr is not a terminal (unless --progress: under mpirun rank
// 0's stderr is always a pipe) and with --quiet.
#pragma once

#include <chrono>
#include <cstddef>
#include <string>

namespace collbench::harness {

class Progress {
 public:
  Progress(bool enabled, std::size_t total)
      : enabled_(enabled), total_(total), start_(std::chrono::steady_clock::now()) {}

  bool enabled() const { return enabled_; }
  // A benchmark starts (its first call).
  void started(const std::string& name);
  // Erases the progress line, if one is shown.
  void clear();

 private:
  bool enabled_;
  std::size_t total_;
  std::size_t started_ = 0;
  bool line_shown_ = false;
  std::chrono::steady_clock::time_point start_;
};

}  // namespace collbench::harness
