// How fast the sim transport simulates: ring allreduce of 1 MiB in
// size-only mode on a full-bisection fat-tree of p nodes (p = 1024 by
// default; --ranks=4096 for the larger one: one platform per process).
// Reported: wall seconds per collective (real time), the simulated time,
// simulated messages per wall second and per CPU second (this process's
// user + system time: on a shared machine the wall time is mostly waiting
// for a core), and the process's peak RSS.
//   collbench-sim-speed [--ranks=N] [--iterations=N] [--progress-us=T]
//                       [--cfg=SimGrid option...] [Google Benchmark flags]
// (--iterations: collectives timed, default 2; 1 at p = 4096 halves the run.
// --progress-us: a line on stderr every T simulated microseconds with the
// messages and CPU seconds so far, so that a run stopped by a time limit
// still tells its rate.)
#include <benchmark/benchmark.h>
#include <sys/resource.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <exception>
#include <memory>
#include <simgrid/s4u.hpp>
#include <string>
#include <vector>

#include "collbench/collectives/collective.h"
#include "collbench/core/malloc_name.h"
#include "collbench/transport/sim_transport.h"
#include "standard_output.h"

namespace collbench {
namespace {

int g_ranks = 1024;
int g_iterations = 2;
std::vector<std::string> g_simgrid_args;  // --cfg=... and --log=... pass through

double g_progress_seconds = 0;  // simulated; 0: no progress lines

// A two-level fat-tree of p nodes, k per leaf switch (the smallest divisor
// of p with k² >= p: k = √p for a square), k spine switches each linked to
// every leaf switch: full bisection.
std::string fat_tree(int ranks) {
  int k = 1;
  while (k * k < ranks || ranks % k != 0) ++k;
  return "fat-tree:2;" + std::to_string(k) + "," + std::to_string(ranks / k) + ";1," +
         std::to_string(k) + ";1,1";
}

double peak_rss_mib() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_maxrss) / 1024;  // KiB on Linux
}

double cpu_seconds() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  const auto seconds = [](const timeval& t) { return t.tv_sec + t.tv_usec * 1e-6; };
  return seconds(usage.ru_utime) + seconds(usage.ru_stime);
}

// Built in main, where a refusal (a --cfg SimGrid dies on, a bad --ranks)
// can end the process with its message: thrown inside a benchmark it went
// to std::terminate.
std::unique_ptr<SimRankGroup> g_group;

void BM_RingAllreduceSizeOnly(benchmark::State& state) {
  SimRankGroup* const group = g_group.get();
  const CollectiveInfo& allreduce = *find_collective("allreduce");
  const AlgorithmInfo& ring = *allreduce.find_algorithm("ring");
  const CollectiveSpec spec{DType::f32, ReduceOp::sum, (1 << 20) / 4, 0, {}};
  std::vector<std::unique_ptr<UntouchedBuffer>> buffers;
  std::vector<std::unique_ptr<Collective>> calls(static_cast<std::size_t>(g_ranks));
  for (int rank = 0; rank < g_ranks; ++rank) {
    buffers.push_back(std::make_unique<UntouchedBuffer>(spec.count * 4));
  }
  group->run([&](Transport& transport) {
    const auto rank = static_cast<std::size_t>(transport.rank());
    calls[rank] = ring.build(transport, spec, buffers[rank]->span(), buffers[rank]->span());
  });
  double simulated = 0;
  std::uint64_t messages = 0;
  double wall = 0;
  double cpu = 0;
  for (auto _ : state) {
    const std::uint64_t before = group->messages();
    std::vector<double> start(calls.size()), end(calls.size());
    const auto wall_start = std::chrono::steady_clock::now();
    const double cpu_start = cpu_seconds();
    group->run([&](Transport& transport) {
      const auto rank = static_cast<std::size_t>(transport.rank());
      if (rank == 0 && g_progress_seconds > 0) {
        // A daemon: the engine ends it when the ranks are done. Its sleeps
        // touch no link, so the simulated times are the same without it.
        simgrid::s4u::Actor::create("progress", simgrid::s4u::this_actor::get_host(), [&] {
          const double begin = simgrid::s4u::Engine::get_clock();
          for (;;) {
            simgrid::s4u::this_actor::sleep_for(g_progress_seconds);
            std::fprintf(stderr,
                         "progress: %.0f us simulated, %llu messages, %.1f CPU s, %.0f MiB\n",
                         (simgrid::s4u::Engine::get_clock() - begin) * 1e6,
                         static_cast<unsigned long long>(group->messages() - before),
                         cpu_seconds() - cpu_start, peak_rss_mib());
          }
        })->daemonize();
      }
      start[rank] = group->now(transport);
      calls[rank]->run();
      end[rank] = group->now(transport);
    });
    wall += std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
    cpu += cpu_seconds() - cpu_start;
    simulated = *std::max_element(end.begin(), end.end()) - start[0];
    messages += group->messages() - before;
  }
  state.counters["ranks"] = g_ranks;
  state.counters["simulated_us"] = simulated * 1e6;
  state.counters["messages"] = static_cast<double>(messages) / state.iterations();
  state.counters["messages_per_wall_s"] = static_cast<double>(messages) / wall;
  state.counters["cpu_s"] = cpu / static_cast<double>(state.iterations());
  state.counters["messages_per_cpu_s"] = static_cast<double>(messages) / cpu;
  state.counters["peak_rss_MiB"] = peak_rss_mib();
}

}  // namespace
}  // namespace collbench

int main(int argc, char** argv) {
  collbench::cli::fail_on_unwritten_standard_output("collbench-sim-speed");
  std::vector<char*> rest;
  for (int i = 0; i < argc; ++i) {
    if (std::strncmp(argv[i], "--ranks=", 8) == 0) {
      const char* const value = argv[i] + 8;
      const char* const end = value + std::strlen(value);
      if (const auto [at, error] = std::from_chars(value, end, collbench::g_ranks);
          error != std::errc{} || at != end || collbench::g_ranks < 1) {
        std::fprintf(stderr, "collbench-sim-speed: --ranks %s: give a whole number of 1 or more\n",
                     value);
        return 2;
      }
    } else if (std::strncmp(argv[i], "--iterations=", 13) == 0) {
      collbench::g_iterations = std::atoi(argv[i] + 13);
      if (collbench::g_iterations < 1) {
        std::fprintf(stderr, "collbench-sim-speed: --iterations %s: give 1 or more\n",
                     argv[i] + 13);
        return 2;
      }
    } else if (std::strncmp(argv[i], "--progress-us=", 14) == 0) {
      collbench::g_progress_seconds = std::atof(argv[i] + 14) * 1e-6;
      if (!(collbench::g_progress_seconds > 0)) {
        std::fprintf(stderr, "collbench-sim-speed: --progress-us %s: give a positive time\n",
                     argv[i] + 14);
        return 2;
      }
    } else if (std::strncmp(argv[i], "--cfg=", 6) == 0 || std::strncmp(argv[i], "--log=", 6) == 0) {
      collbench::g_simgrid_args.emplace_back(argv[i]);
    } else {
      rest.push_back(argv[i]);
    }
  }
  int rest_count = static_cast<int>(rest.size());
  benchmark::Initialize(&rest_count, rest.data());
  try {
    collbench::SimParams params;
    params.ranks = collbench::g_ranks;
    params.platform = collbench::fat_tree(collbench::g_ranks);
    params.link_latency = 0.5e-6;
    params.link_bandwidth = 12.5e9;
    params.gamma_rate = 10e9;
    params.payload = false;
    params.simgrid_args = collbench::g_simgrid_args;
    collbench::g_group = collbench::make_sim_rank_group(params);
  } catch (const std::exception& refusal) {
    // Its first line: SimGrid lists every config key after "Bad config key: x".
    const std::string why = refusal.what();
    std::fprintf(stderr, "collbench-sim-speed: %s\n", why.substr(0, why.find('\n')).c_str());
    return 2;
  }
  // Its speed depends on it (CMakeLists.txt, COLLBENCH_WITH_JEMALLOC).
  benchmark::AddCustomContext("collbench_malloc", collbench::malloc_name());
  benchmark::RegisterBenchmark("BM_RingAllreduceSizeOnly", collbench::BM_RingAllreduceSizeOnly)
      ->Iterations(collbench::g_iterations)
      ->Unit(benchmark::kSecond)
      ->UseRealTime();
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  collbench::g_group.reset();
}
