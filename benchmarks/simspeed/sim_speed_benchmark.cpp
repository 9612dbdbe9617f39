// collbench-sim-speed: how fast the sim transport simulates (ring allreduce
// of 1 MiB in size-only mode on a full-bisection fat-tree of p nodes). The
// wall time is mostly waiting for a core on a shared machine, so the rate
// per CPU second (user + system) is reported beside it. Its flags and what
// it reports: kUsage below (--help).
#include <benchmark/benchmark.h>
#include <fmt/format.h>
#include <sys/resource.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <exception>
#include <memory>
#include <optional>
#include <set>
#include <simgrid/s4u.hpp>
#include <stdexcept>
#include <string>
#include <string_view>
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

constexpr const char* kUsage =
    "collbench-sim-speed: how fast the sim transport simulates. Ring allreduce of 1 MiB in\n"
    "size-only mode on a full-bisection fat-tree of N nodes, one rank each; reports wall and\n"
    "CPU seconds per collective, the simulated time, simulated messages per wall and per CPU\n"
    "second, and the peak RSS.\n"
    "  --ranks=N         ranks (nodes) simulated, 1 to 1048576 (default: 1024)\n"
    "  --iterations=N    collectives timed, 1 to 1000000 (default: 2; 1 at N = 4096 halves\n"
    "                    the run)\n"
    "  --progress-us=T   a line on stderr every T simulated microseconds with the messages and\n"
    "                    CPU seconds so far, so that a run stopped early still tells its rate\n"
    "  --cfg=KEY:VALUE, --log=...  SimGrid's own options, passed to it; these may repeat,\n"
    "                    the flags above are refused when given twice\n"
    "  -h, --help        this text, then Google Benchmark's flags, which are accepted too\n";

struct AskedForHelp {};

// The text after `prefix` when `argument` starts with it.
std::optional<std::string_view> value_of(std::string_view argument, std::string_view prefix) {
  if (!argument.starts_with(prefix)) return std::nullopt;
  return argument.substr(prefix.size());
}

int whole_number(std::string_view option, std::string_view text, int lowest, int highest) {
  int value = 0;
  const auto [at, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc{} || at != text.data() + text.size() || value < lowest ||
      value > highest) {
    throw std::invalid_argument(
        fmt::format("{} {}: give a whole number from {} to {}", option, text, lowest, highest));
  }
  return value;
}

double positive_number(std::string_view option, std::string_view text) {
  double value = 0;
  const auto [at, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc{} || at != text.data() + text.size() || !(value > 0) ||
      !std::isfinite(value)) {
    throw std::invalid_argument(fmt::format("{} {}: give a positive time", option, text));
  }
  return value;
}

// Takes this program's own flags out of argv into the globals; returns the
// rest (argv[0] first) for Google Benchmark. --help wins wherever it is, as
// in the other executables (CLI11); each of our flags is given once at most,
// as everywhere (the second value silently won); --cfg and --log add up.
std::vector<char*> take_own_arguments(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    const std::string_view argument = argv[i];
    if (argument == "--help" || argument == "-h") throw AskedForHelp{};
  }
  std::vector<char*> rest;
  std::set<std::string_view> given;
  const auto once = [&given](std::string_view option) {
    if (!given.insert(option).second) {
      throw std::invalid_argument(fmt::format("{} given twice: give it once", option));
    }
    return option;
  };
  for (int i = 0; i < argc; ++i) {
    const std::string_view argument = argv[i];
    if (const auto ranks = value_of(argument, "--ranks=")) {
      g_ranks = whole_number(once("--ranks"), *ranks, 1, kMaxSimRanks);
    } else if (const auto iterations = value_of(argument, "--iterations=")) {
      g_iterations = whole_number(once("--iterations"), *iterations, 1, 1'000'000);
    } else if (const auto microseconds = value_of(argument, "--progress-us=")) {
      g_progress_seconds = positive_number(once("--progress-us"), *microseconds) * 1e-6;
    } else if (argument.starts_with("--cfg=") || argument.starts_with("--log=")) {
      g_simgrid_args.emplace_back(argument);
    } else {
      rest.push_back(argv[i]);
    }
  }
  return rest;
}

}  // namespace
}  // namespace collbench

int main(int argc, char** argv) {
  collbench::cli::fail_on_unwritten_standard_output("collbench-sim-speed");
  std::vector<char*> rest;
  try {
    rest = collbench::take_own_arguments(argc, argv);
  } catch (const collbench::AskedForHelp&) {
    std::fputs(collbench::kUsage, stdout);
    std::fflush(stdout);
    benchmark::PrintDefaultHelp();
    return 0;
  } catch (const std::invalid_argument& refusal) {
    std::fprintf(stderr, "collbench-sim-speed: %s\n", refusal.what());
    return 2;
  }
  int rest_count = static_cast<int>(rest.size());
  benchmark::Initialize(&rest_count, rest.data());
  // Anything Google Benchmark did not take either was a typo, or our flag
  // without its '=' (--ranks 4): running the default p instead would hide it.
  if (rest_count > 1) {
    std::fprintf(stderr,
                 "collbench-sim-speed: unknown argument '%s'; accepted: --ranks=N, "
                 "--iterations=N, --progress-us=T, --cfg=..., --log=... and Google Benchmark's "
                 "--benchmark_* flags (see --help)\n",
                 rest[1]);
    return 2;
  }
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
