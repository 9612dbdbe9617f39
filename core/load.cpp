#include "collbench/core/load.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <vector>

namespace collbench {
namespace {

std::vector<std::string_view> split_fields(std::string_view line) {
  std::vector<std::string_view> fields;
  std::size_t at = 0;
  while (at < line.size()) {
    const std::size_t start = line.find_first_not_of(" \t", at);
    if (start == std::string_view::npos) break;
    const std::size_t end = std::min(line.find_first_of(" \t", start), line.size());
    fields.push_back(line.substr(start, end - start));
    at = end;
  }
  return fields;
}

std::uint64_t to_ticks(std::string_view field, std::string_view what) {
  std::uint64_t value = 0;
  const auto [end, error] = std::from_chars(field.data(), field.data() + field.size(), value);
  if (error != std::errc() || end != field.data() + field.size()) {
    throw std::runtime_error(fmt::format("{}: \"{}\" is not a count", what, field));
  }
  return value;
}

std::string read_whole(const char* path) {
  std::ifstream file(path);
  if (!file) throw std::runtime_error(fmt::format("cannot read {}", path));
  std::ostringstream text;
  text << file.rdbuf();
  return text.str();
}

}  // namespace

NodeCpuTimes parse_proc_stat(std::string_view text) {
  NodeCpuTimes times;
  bool aggregate = false, switches = false;
  std::size_t at = 0;
  while (at < text.size()) {
    const std::size_t end = std::min(text.find('\n', at), text.size());
    const std::vector<std::string_view> fields = split_fields(text.substr(at, end - at));
    at = end + 1;
    if (fields.empty()) continue;
    if (fields[0] == "cpu") {
      // user nice system idle iowait irq softirq steal [guest guest_nice]
      if (fields.size() < 9) throw std::runtime_error("/proc/stat: the cpu line has < 8 counters");
      std::uint64_t c[8];
      for (int i = 0; i < 8; ++i)
        c[i] = to_ticks(fields[static_cast<std::size_t>(i) + 1], "/proc/stat cpu");
      times.busy = c[0] + c[1] + c[2] + c[5] + c[6];
      times.idle = c[3] + c[4];
      times.steal = c[7];
      aggregate = true;
    } else if (fields[0].starts_with("cpu")) {
      ++times.cpus;
    } else if (fields[0] == "ctxt" && fields.size() >= 2) {
      times.context_switches = to_ticks(fields[1], "/proc/stat ctxt");
      switches = true;
    }
  }
  if (!aggregate) throw std::runtime_error("/proc/stat: no aggregate cpu line");
  if (times.cpus == 0) throw std::runtime_error("/proc/stat: no cpuN line");
  if (!switches) throw std::runtime_error("/proc/stat: no ctxt line");
  return times;
}

std::uint64_t parse_process_ticks(std::string_view text) {
  const std::size_t name_end = text.rfind(')');
  if (name_end == std::string_view::npos) {
    throw std::runtime_error("/proc/<pid>/stat: no ')' after the command name");
  }
  // After ')': field 3 (state) is the first, so utime (14) and stime (15)
  // are the 12th and 13th.
  const std::vector<std::string_view> fields = split_fields(text.substr(name_end + 1));
  if (fields.size() < 13) throw std::runtime_error("/proc/<pid>/stat: fewer than 15 fields");
  return to_ticks(fields[11], "/proc/<pid>/stat utime") +
         to_ticks(fields[12], "/proc/<pid>/stat stime");
}

NodeCpuTimes read_node_cpu_times() { return parse_proc_stat(read_whole("/proc/stat")); }

std::uint64_t read_own_process_ticks() {
  return parse_process_ticks(read_whole("/proc/self/stat"));
}

double clock_ticks_per_second() {
  const long ticks = sysconf(_SC_CLK_TCK);
  return ticks > 0 ? static_cast<double>(ticks) : 100.0;
}

std::string OtherLoad::describe() const {
  return fmt::format("{:.2f} cores of other work, {:.2f} stolen, over {:.1f} s", other_cores,
                     steal_cores, seconds);
}

OtherLoad other_load(const LoadReading& before, const LoadReading& after, double ticks_per_second,
                     double threshold_cores) {
  const NodeCpuTimes& b = before.node;
  const NodeCpuTimes& a = after.node;
  if (a.cpus != b.cpus || a.busy < b.busy || a.idle < b.idle || a.steal < b.steal ||
      a.context_switches < b.context_switches || after.job_ticks < before.job_ticks) {
    throw std::invalid_argument("load readings out of order (a counter went backwards)");
  }
  OtherLoad load;
  const auto all_ticks =
      static_cast<double>((a.busy - b.busy) + (a.idle - b.idle) + (a.steal - b.steal));
  // Elapsed time per CPU, in ticks: every CPU is busy, idle or stolen.
  const double interval_ticks = all_ticks / a.cpus;
  if (interval_ticks <= 0) {
    load.resolution_cores = a.cpus;
    return load;  // no tick passed: nothing can be said
  }
  load.seconds = interval_ticks / ticks_per_second;
  // The job's ticks come from other counters than the node's; a process
  // may be charged a tick the node counted as idle, so other work never
  // goes below zero.
  const double busy = static_cast<double>(a.busy - b.busy);
  const double job = static_cast<double>(after.job_ticks - before.job_ticks);
  load.other_cores = std::max(0.0, busy - job) / interval_ticks;
  load.steal_cores = static_cast<double>(a.steal - b.steal) / interval_ticks;
  load.context_switches_per_second =
      static_cast<double>(a.context_switches - b.context_switches) / load.seconds;
  // One tick of error in each of busy, job and steal.
  load.resolution_cores = 3.0 / interval_ticks;
  load.loaded = load.other_cores + load.steal_cores - load.resolution_cores > threshold_cores;
  return load;
}

}  // namespace collbench
