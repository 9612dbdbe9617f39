// The load sampler on /proc readings written down: a 2-CPU node where the
// job alone ran (idle), and one where another process kept a core busy
// (busy), each 2 s apart at 100 ticks per second.
#include "collbench/core/load.h"

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

namespace collbench {
namespace {

// /proc/stat as Linux writes it: the aggregate, then one line per CPU.
std::string proc_stat(std::uint64_t user, std::uint64_t system, std::uint64_t idle,
                      std::uint64_t steal, std::uint64_t ctxt) {
  return "cpu  " + std::to_string(user) + " 1741 " + std::to_string(system) + " " +
         std::to_string(idle) + " 1132 0 2450 " + std::to_string(steal) + " 0 0\n" +
         "cpu0 712314 860 244432 171915 221 0 842 0 0 0\n"
         "cpu1 701239 880 264144 164388 911 0 1607 0 0 0\n"
         "intr 1 2 3\nctxt " +
         std::to_string(ctxt) + "\nbtime 1764900000\nprocs_running 3\n";
}

LoadReading reading(std::uint64_t user, std::uint64_t system, std::uint64_t idle,
                    std::uint64_t steal, std::uint64_t ctxt, std::uint64_t job) {
  return {parse_proc_stat(proc_stat(user, system, idle, steal, ctxt)), job};
}

// Idle: in 2 s (400 ticks on 2 CPUs) the job (2 ranks spinning on 2 cores)
// used 390 ticks, the node counted 392 busy: the rest is noise.
TEST(Load, TheJobAloneIsNotLoad) {
  const auto before = reading(1000000, 500000, 300000, 0, 5000, 1000);
  const auto after = reading(1000000 + 300, 500000 + 92, 300000 + 8, 0, 5400, 1000 + 390);
  const OtherLoad load = other_load(before, after, 100);
  EXPECT_DOUBLE_EQ(load.seconds, 2.0);
  EXPECT_NEAR(load.other_cores, 0.01, 1e-9);
  EXPECT_NEAR(load.context_switches_per_second, 200, 1e-9);
  EXPECT_FALSE(load.loaded) << load.describe();
}

// Busy: the job had one core for its one rank (200 ticks); another process
// took the other core (the node busy 398 ticks of 400).
TEST(Load, AnotherProcessOnACoreIsLoad) {
  const auto before = reading(1000000, 500000, 300000, 0, 5000, 1000);
  const auto after = reading(1000000 + 350, 500000 + 48, 300000 + 2, 0, 9000, 1000 + 200);
  const OtherLoad load = other_load(before, after, 100);
  EXPECT_NEAR(load.other_cores, 0.99, 1e-9);
  EXPECT_TRUE(load.loaded);
  EXPECT_EQ(load.describe(), "0.99 cores of other work, 0.00 stolen, over 2.0 s");
}

// Steal is load too: the hypervisor gave 30% of the node to other guests.
TEST(Load, StealIsLoad) {
  const auto before = reading(1000000, 500000, 300000, 7000, 5000, 1000);
  const auto after = reading(1000000 + 280, 500000, 300000, 7000 + 120, 5400, 1000 + 280);
  const OtherLoad load = other_load(before, after, 100);
  EXPECT_NEAR(load.other_cores, 0.0, 1e-9);
  EXPECT_NEAR(load.steal_cores, 0.6, 1e-9);
  EXPECT_TRUE(load.loaded);
}

// A tick of error is worth 3 / ticks elapsed per CPU: over 0.1 s (10 ticks
// per CPU) 2 ticks of other work (0.2 cores) are within the error, and the
// case is not called loaded on that evidence.
TEST(Load, AShortIntervalIsCoarse) {
  const auto before = reading(1000000, 500000, 300000, 0, 5000, 1000);
  const auto after = reading(1000000 + 12, 500000, 300000 + 8, 0, 5010, 1000 + 10);
  const OtherLoad load = other_load(before, after, 100);
  EXPECT_NEAR(load.other_cores, 0.2, 1e-9);
  EXPECT_NEAR(load.resolution_cores, 0.3, 1e-9);
  EXPECT_FALSE(load.loaded);
}

TEST(Load, NoTickPassedSaysNothing) {
  const auto same = reading(1000000, 500000, 300000, 0, 5000, 1000);
  const OtherLoad load = other_load(same, same, 100);
  EXPECT_EQ(load.seconds, 0);
  EXPECT_FALSE(load.loaded);
}

TEST(Load, ReadingsOutOfOrderAreRefused) {
  const auto before = reading(1000000, 500000, 300000, 0, 5000, 1000);
  const auto after = reading(1000000 + 300, 500000, 300000 + 100, 0, 5400, 1000 + 300);
  EXPECT_THROW(other_load(after, before, 100), std::invalid_argument);
}

TEST(Load, ParsesProcStat) {
  const NodeCpuTimes times = parse_proc_stat(proc_stat(10, 20, 30, 4, 99));
  EXPECT_EQ(times.busy, 10u + 1741 + 20 + 0 + 2450);
  EXPECT_EQ(times.idle, 30u + 1132);
  EXPECT_EQ(times.steal, 4u);
  EXPECT_EQ(times.cpus, 2);
  EXPECT_EQ(times.context_switches, 99u);
  EXPECT_THROW(parse_proc_stat("cpu0 1 2 3 4 5 6 7 8\nctxt 5\n"), std::runtime_error);
  EXPECT_THROW(parse_proc_stat("cpu  1 2 3\ncpu0 1 2 3 4 5 6 7 8\nctxt 5\n"), std::runtime_error);
  EXPECT_THROW(parse_proc_stat("cpu  1 2 3 4 5 6 7 x\ncpu0 1\nctxt 5\n"), std::runtime_error);
}

// A command name with spaces and ')' does not shift the fields.
TEST(Load, ParsesProcessTicksPastTheCommandName) {
  const std::string stat =
      "28407 (rank (0) x) R 28402 28402 16758 0 -1 4194304 100 0 0 0 150 25 0 0 20 0 3 0 "
      "1137029 3133440 390";
  EXPECT_EQ(parse_process_ticks(stat), 175u);
  EXPECT_THROW(parse_process_ticks("28407 cat R 1 2"), std::runtime_error);
  EXPECT_THROW(parse_process_ticks("28407 (cat) R 1 2 3"), std::runtime_error);
}

// This machine's own counters parse, and a process's time never runs back.
TEST(Load, ReadsThisNode) {
  const NodeCpuTimes times = read_node_cpu_times();
  EXPECT_GE(times.cpus, 1);
  const std::uint64_t first = read_own_process_ticks();
  EXPECT_GE(read_own_process_ticks(), first);
  EXPECT_GT(clock_ticks_per_second(), 0);
}

}  // namespace
}  // namespace collbench
