// The load a run did not make: how much CPU other work took on a node while
// a case ran, from the kernel's counters (Linux /proc), so that a number
// measured on a busy machine is marked as such instead of published as if
// the machine were quiet.
//
// A node's busy time (/proc/stat: user, nice, system, irq, softirq) minus
// the CPU time of the job's own processes on it (/proc/<pid>/stat: utime,
// stime, every thread's) is other work's; steal is time the hypervisor gave
// another guest. Both come in clock ticks (USER_HZ, 100 per second here),
// so a short interval is coarse: each counter may be off by one tick, and
// `resolution_cores` says what that is worth over the interval. A case is
// loaded when other work is sure to have taken more than a threshold (10%
// of a core) even after that error is taken off.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace collbench {

// /proc/stat's aggregate "cpu" line and counters, in clock ticks.
struct NodeCpuTimes {
  std::uint64_t busy = 0;   // user + nice + system + irq + softirq (guest is inside user)
  std::uint64_t idle = 0;   // idle + iowait
  std::uint64_t steal = 0;  // taken by the hypervisor for other guests
  int cpus = 0;             // the "cpuN" lines
  std::uint64_t context_switches = 0;  // "ctxt", since boot
};

// Throws std::runtime_error naming the line or field that is missing.
NodeCpuTimes parse_proc_stat(std::string_view text);
// A process's CPU time (utime + stime, fields 14 and 15 of /proc/<pid>/stat)
// in clock ticks. The command name (field 2) may hold spaces and ')', so
// fields are counted after the last ')'. Throws std::runtime_error.
std::uint64_t parse_process_ticks(std::string_view text);

// This node's counters now, and this process's CPU time (every thread's).
// Throw std::runtime_error when /proc cannot be read (not Linux).
NodeCpuTimes read_node_cpu_times();
std::uint64_t read_own_process_ticks();
// Clock ticks per second of these counters (sysconf(_SC_CLK_TCK)).
double clock_ticks_per_second();

// One reading at the start or the end of an interval: the node's counters
// and the CPU time of the job's processes on that node (every rank's there,
// summed).
struct LoadReading {
  NodeCpuTimes node;
  std::uint64_t job_ticks = 0;
};

inline constexpr double kLoadedThresholdCores = 0.10;

struct OtherLoad {
  double seconds = 0;      // the interval, from the node's tick counts
  double other_cores = 0;  // cores other work kept busy, on average
  double steal_cores = 0;  // cores' worth of steal, on average
  double context_switches_per_second = 0;
  double resolution_cores = 0;   // what one tick of error per counter is worth
  bool loaded = false;           // other + steal - resolution > threshold
  std::string describe() const;  // "0.93 cores of other work, 0.00 stolen, over 2.0 s"
};

// Throws std::invalid_argument when `after` is not after `before` (the
// counters went backwards, or the node changed its CPU count).
OtherLoad other_load(const LoadReading& before, const LoadReading& after, double ticks_per_second,
                     double threshold_cores = kLoadedThresholdCores);

}  // namespace collbench
