// The harness's load columns from recorded /proc readings: two traces of a
// 2-CPU node, 2 s apart at 100 ticks per second, on which a 2-rank job ran;
// idle (the job alone) and busy (a `yes` loop took most of a core). Each
// rank's LoadWatch reads the trace; the job's sum of their shares gives
// the row's columns, as Runner::record_load does.
#include "load_watch.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "families.h"
#include "options.h"
#include "reporter.h"

namespace collbench::harness {
namespace {

std::string proc_stat(std::uint64_t user, std::uint64_t system, std::uint64_t idle,
                      std::uint64_t steal, std::uint64_t ctxt) {
  return "cpu  " + std::to_string(user) + " 1741 " + std::to_string(system) + " " +
         std::to_string(idle) + " 1132 0 2450 " + std::to_string(steal) + " 0 0\n" +
         "cpu0 712314 860 244432 171915 221 0 842 0 0 0\n"
         "cpu1 701239 880 264144 164388 911 0 1607 0 0 0\n"
         "intr 1 2 3\nctxt " +
         std::to_string(ctxt) + "\nbtime 1764900000\nprocs_running 3\n";
}

// A node's /proc/stat and one rank process's CPU ticks at the start and
// the end of a benchmark, as read by that rank.
struct Trace {
  std::vector<std::string> node;  // /proc/stat at each reading
  std::vector<std::uint64_t> process_ticks;
};

// The idle node: in 400 ticks (2 CPUs x 2 s) the node counted 392 busy and
// the two ranks 195 + 194.
const std::string kIdleStart = proc_stat(1000000, 500000, 300000, 0, 5000);
const std::string kIdleEnd = proc_stat(1000000 + 300, 500000 + 92, 300000 + 8, 0, 5400);
// The busy node: the ranks got 130 + 129 ticks, the node was busy all 400.
const std::string kBusyStart = proc_stat(2000000, 600000, 400000, 0, 9000);
const std::string kBusyEnd = proc_stat(2000000 + 330, 600000 + 70, 400000, 0, 11000);

LoadSources replay(std::vector<std::string> node, std::vector<std::uint64_t> ticks) {
  auto node_at = std::make_shared<std::size_t>(0);
  auto ticks_at = std::make_shared<std::size_t>(0);
  LoadSources sources;
  sources.node = [node, node_at] { return parse_proc_stat(node.at((*node_at)++)); };
  sources.process_ticks = [ticks, ticks_at] { return ticks.at((*ticks_at)++); };
  sources.ticks_per_second = 100;
  return sources;
}

// Two ranks, one process each on the same node: their watches' shares summed.
std::optional<OtherLoad> two_processes(const std::string& start, const std::string& end,
                                       std::uint64_t rank0_ticks, std::uint64_t rank1_ticks) {
  LoadWatch rank0(2, 1, replay({start, end}, {5000, 5000 + rank0_ticks}));
  LoadWatch rank1(2, 1, replay({start, end}, {7000, 7000 + rank1_ticks}));
  rank0.start();
  rank1.start();
  const LoadShares a = rank0.share(), b = rank1.share();
  LoadShares sums;
  for (std::size_t i = 0; i < sums.values.size(); ++i) sums.values[i] = a.values[i] + b.values[i];
  return job_load(sums, 100);
}

TEST(LoadWatch, AnIdleNodeIsNotLoaded) {
  const auto load = two_processes(kIdleStart, kIdleEnd, 195, 194);
  ASSERT_TRUE(load);
  EXPECT_DOUBLE_EQ(load->seconds, 2.0);
  EXPECT_NEAR(load->other_cores, 0.015, 1e-9);  // (392 - 389) / 200
  EXPECT_NEAR(load->context_switches_per_second, 200, 1e-9);
  EXPECT_FALSE(load->loaded) << load->describe();
}

TEST(LoadWatch, ABusyNodeIsLoaded) {
  const auto load = two_processes(kBusyStart, kBusyEnd, 130, 129);
  ASSERT_TRUE(load);
  EXPECT_NEAR(load->other_cores, 0.705, 1e-9);  // (400 - 259) / 200
  EXPECT_NEAR(load->context_switches_per_second, 1000, 1e-9);
  EXPECT_TRUE(load->loaded) << load->describe();
}

// --transport inproc: every rank in one process, whose ticks are counted once.
TEST(LoadWatch, RanksOfOneProcessCountItsTicksOnce) {
  LoadWatch watch(2, 2, replay({kBusyStart, kBusyEnd}, {100, 100 + 259}));
  watch.start();
  const LoadShares mine = watch.share();
  LoadShares sums;  // job_sum over the process's two ranks
  for (std::size_t i = 0; i < sums.values.size(); ++i) sums.values[i] = 2 * mine.values[i];
  const auto load = job_load(sums, 100);
  ASSERT_TRUE(load);
  EXPECT_NEAR(load->other_cores, 0.705, 1e-9);
}

// Two nodes of one rank each: one idle, one busy; the job's nodes are one
// machine of 4 CPUs.
TEST(LoadWatch, NodesAreSummed) {
  LoadWatch idle(1, 1, replay({kIdleStart, kIdleEnd}, {0, 389}));
  LoadWatch busy(1, 1, replay({kBusyStart, kBusyEnd}, {0, 259}));
  idle.start();
  busy.start();
  const LoadShares a = idle.share(), b = busy.share();
  LoadShares sums;
  for (std::size_t i = 0; i < sums.values.size(); ++i) sums.values[i] = a.values[i] + b.values[i];
  const auto load = job_load(sums, 100);
  ASSERT_TRUE(load);
  EXPECT_DOUBLE_EQ(load->seconds, 2.0);
  EXPECT_NEAR(load->other_cores, 0.72, 1e-9);  // (3 + 141) / 200
  EXPECT_TRUE(load->loaded);
}

TEST(LoadWatch, NoReadingNoColumns) {
  LoadSources broken = replay({kIdleStart}, {0, 1});
  broken.node = []() -> NodeCpuTimes { throw std::runtime_error("cannot read /proc/stat"); };
  LoadWatch watch(1, 1, broken);
  watch.start();
  EXPECT_FALSE(job_load(watch.share(), 100));
  // No tick passed between the readings: nothing can be said either.
  LoadWatch still(1, 1, replay({kIdleStart, kIdleStart}, {0, 0}));
  still.start();
  EXPECT_FALSE(job_load(still.share(), 100));
}

// The counters reach the row: loaded `yes` or `no`, and empty without them.
TEST(LoadWatch, TheRowCarriesTheLoad) {
  Options options = parse_options({});
  RunMetadata metadata;
  metadata.ranks = 2;
  RowContext context;
  context.transport = "mpi";
  context.reduce_kernel = "baseline";
  context.options = &options;
  context.metadata = &metadata;
  BenchmarkCase entry;
  entry.name = "allreduce/ring/1024";
  const CollectiveInfo& allreduce = *find_collective("allreduce");
  entry.collective = &allreduce;
  entry.algorithm = allreduce.find_algorithm("ring");
  entry.message_bytes = {1024};
  benchmark::BenchmarkReporter::Run run;
  run.run_name.function_name = entry.name;
  run.run_type = benchmark::BenchmarkReporter::Run::RT_Iteration;
  run.iterations = 10;
  run.counters["median_us"] = benchmark::Counter(12.5);
  const auto field = [&](const std::vector<std::string>& row, const std::string& column) {
    const auto& columns = csv_columns();
    return row.at(static_cast<std::size_t>(std::find(columns.begin(), columns.end(), column) -
                                           columns.begin()));
  };
  const auto quiet = csv_row(entry, run, context, "t");
  EXPECT_EQ(field(quiet, "loaded"), "");
  EXPECT_EQ(field(quiet, "other_cores"), "");
  const auto busy = two_processes(kBusyStart, kBusyEnd, 130, 129);
  ASSERT_TRUE(busy);
  set_load_counters(run.counters, *busy);
  const auto row = csv_row(entry, run, context, "t");
  EXPECT_EQ(field(row, "loaded"), "yes");
  EXPECT_EQ(field(row, "other_cores"), "0.705");
  EXPECT_EQ(field(row, "load_seconds"), "2.00");
  EXPECT_EQ(field(row, "steal_cores"), "0.000");
  EXPECT_EQ(field(row, "context_switches_per_s"), "1000");
  const auto idle = two_processes(kIdleStart, kIdleEnd, 195, 194);
  set_load_counters(run.counters, *idle);
  EXPECT_EQ(field(csv_row(entry, run, context, "t"), "loaded"), "no");
}

}  // namespace
}  // namespace collbench::harness
