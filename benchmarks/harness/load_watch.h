// The load a case did not make, over the job's nodes (core/load.h): every
// rank reads its node's /proc counters and its process's CPU time when a
// benchmark starts and after each of Google Benchmark's calls of it; the
// job sums every rank's share of them, and the case's row gets the other
// work, steal and context switches over the whole benchmark (set-up,
// warm-up and every call, not only the last call's timed loop, which can
// be shorter than one clock tick).
//
// A node's counters are read by each of its ranks; each rank contributes
// 1/(ranks on its node) of them, so the job's sum is every node's counters
// once, whichever ranks share a node. A process's CPU time is contributed
// once per process (1/(ranks in the process) by each of its ranks: one
// with MPI, all of them with --transport inproc). The job's nodes are then
// one machine of all their CPUs: `other_cores` is the other work on all of
// them together.
#pragma once

#include <benchmark/benchmark.h>

#include <array>
#include <cstdint>
#include <functional>
#include <optional>

#include "collbench/core/load.h"

namespace collbench::harness {

// Where the readings come from: /proc by default; tests give recorded ones.
struct LoadSources {
  std::function<NodeCpuTimes()> node = read_node_cpu_times;
  std::function<std::uint64_t()> process_ticks = read_own_process_ticks;
  double ticks_per_second = clock_ticks_per_second();
};

// One rank's shares of its node's and its process's counters since start(),
// in millionths of a tick (of a CPU for `cpus`), which the job sums. A rank
// that could not read /proc says so in `unreadable`, and the case gets no
// load columns.
struct LoadShares {
  enum Field { busy, idle, steal, cpus, context_switches, job, unreadable, count };
  std::array<std::uint64_t, count> values{};
};

class LoadWatch {
 public:
  LoadWatch(int ranks_on_node, int ranks_in_process, LoadSources sources = {});
  // A benchmark (a round of one, under --interleave) starts.
  void start();
  LoadShares share();
  double ticks_per_second() const { return sources_.ticks_per_second; }

 private:
  std::optional<LoadReading> read();
  int ranks_on_node_;
  int ranks_in_process_;
  LoadSources sources_;
  std::optional<LoadReading> started_;
};

// The job's load from the sums of every rank's shares; nothing when a rank
// could not read /proc or no clock tick passed (nothing can be said).
std::optional<OtherLoad> job_load(const LoadShares& sums, double ticks_per_second);

// The run's counters of the CSV's load columns (core/columns.csv):
// load_seconds, other_cores, steal_cores, context_switches_per_s, loaded.
void set_load_counters(benchmark::UserCounters& counters, const OtherLoad& load);

}  // namespace collbench::harness
