// collbench-core-latency: one-way cache-line handoff latency between cores.
//
// Two threads, pinned to cores a and b, pass a counter back and forth in one
// cache line: a writes an odd value and waits for the next even one, b
// answers. Each handoff moves the line from one core's cache to the other's,
// so half a round trip is the core-to-core latency of a modified line (the
// method of Intel's Memory Latency Checker c2c mode and of core-to-core
// latency maps). Cores that share a last-level cache answer in tens of ns;
// cores on different dies or sockets in one to a few hundred.
//
// Why collbench has it: over shared memory an allreduce moves data that one
// rank has just written and another reads, and writes lines another rank has
// just read, so its time depends on this latency, while a ping-pong or
// sendrecv of an unchanging buffer barely does. On a virtual machine the
// host may move the vCPUs between dies while the guest runs (lscpu inside
// the guest cannot tell); scripts/perf.sh runs this before and after each
// sweep to record which case it measured.
//
// Prints one line per pair: cpu_a cpu_b median_ns min_ns max_ns, the
// statistics over --repetitions of --round-trips each. Exit status: 0 measured,
// 1 a thread could not be pinned, 2 bad arguments.
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <pthread.h>
#include <sched.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <new>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "cli_checks.h"
#include "standard_output.h"

namespace {

constexpr int kUsageStatus = 2;

struct Options {
  std::string cpus_text;
  int round_trips = 100000;
  int repetitions = 5;
};

// The CPUs this process may run on (its affinity mask, as taskset or
// mpirun --bind-to set it).
std::vector<int> allowed_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) != 0) {
    throw std::runtime_error("sched_getaffinity failed");
  }
  std::vector<int> cpus;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (CPU_ISSET(cpu, &set)) cpus.push_back(cpu);
  }
  return cpus;
}

// "0,1,4" -> {0, 1, 4}; each must be an allowed CPU, listed once.
std::vector<int> parse_cpus(const std::string& text, const std::vector<int>& allowed) {
  std::vector<int> cpus;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t end = std::min(text.find(',', start), text.size());
    const std::string item = text.substr(start, end - start);
    int cpu = -1;
    std::size_t used = 0;
    try {
      cpu = std::stoi(item, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (item.empty() || used != item.size() || cpu < 0) {
      throw std::invalid_argument(
          fmt::format("--cpus {}: '{}' is not a CPU number (expected e.g. 0,1)", text, item));
    }
    if (std::find(allowed.begin(), allowed.end(), cpu) == allowed.end()) {
      throw std::invalid_argument(
          fmt::format("--cpus {}: CPU {} is not one this process may run on (allowed: {})", text,
                      cpu, fmt::join(allowed, ",")));
    }
    if (std::find(cpus.begin(), cpus.end(), cpu) != cpus.end()) {
      throw std::invalid_argument(fmt::format("--cpus {}: CPU {} is listed twice", text, cpu));
    }
    cpus.push_back(cpu);
    start = end + 1;
  }
  return cpus;
}

void pin_this_thread(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  if (const int rc = pthread_setaffinity_np(pthread_self(), sizeof(set), &set); rc != 0) {
    throw std::runtime_error(fmt::format("could not pin a thread to CPU {} (error {})", cpu, rc));
  }
}

// One-way handoff latency in ns between `a` and `b`: `round_trips` round
// trips of one cache line, halved.
double handoff_ns(int a, int b, int round_trips) {
  // Alone in its cache line, so only the handoff moves it.
  struct alignas(std::hardware_destructive_interference_size) Line {
    std::atomic<long> value{0};
  };
  Line line;
  std::string answerer_error;
  // Pinned before the answerer starts, so a failure here leaves no thread
  // to join.
  pin_this_thread(a);
  std::thread answerer([&] {
    try {
      pin_this_thread(b);
    } catch (const std::exception& error) {
      answerer_error = error.what();
      line.value.store(-1, std::memory_order_release);
      return;
    }
    for (long i = 0; i < round_trips; ++i) {
      while (line.value.load(std::memory_order_acquire) != 2 * i + 1) {
      }
      line.value.store(2 * i + 2, std::memory_order_release);
    }
  });
  // The answerer signals a failed pin with -1 before its first answer, so the
  // first request must not overwrite that -1 (a compare-exchange from 0);
  // once it has answered it can no longer fail, and plain stores follow.
  const auto start = std::chrono::steady_clock::now();
  for (long i = 0; i < round_trips; ++i) {
    if (i == 0) {
      long expected = 0;
      if (!line.value.compare_exchange_strong(expected, 1, std::memory_order_acq_rel)) break;
    } else {
      line.value.store(2 * i + 1, std::memory_order_release);
    }
    long seen = 0;
    while ((seen = line.value.load(std::memory_order_acquire)) != 2 * i + 2 && seen != -1) {
    }
    if (seen == -1) break;
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  answerer.join();
  if (!answerer_error.empty()) throw std::runtime_error(answerer_error);
  return seconds / round_trips / 2 * 1e9;
}

}  // namespace

int main(int argc, char** argv) {
  collbench::cli::fail_on_unwritten_standard_output("collbench-core-latency");
  Options options;
  CLI::App app(
      "collbench-core-latency: one-way latency of handing a modified cache line from one core "
      "to another, for every pair of --cpus (two threads, no MPI). Prints per pair: cpu_a "
      "cpu_b median_ns min_ns max_ns over the repetitions.");
  app.add_option("--cpus", options.cpus_text,
                 "Comma-separated CPUs to pair up, at least two (default: every CPU this process "
                 "may run on)")
      ->type_name("LIST");
  app.add_option("--round-trips", options.round_trips,
                 "Round trips per repetition (default: 100000)")
      ->check(collbench::cli::whole_number(1, 100'000'000, "round trips"));
  app.add_option("--repetitions", options.repetitions, "Repetitions per pair (default: 5)")
      ->check(collbench::cli::whole_number(1, 1000, "repetitions"));

  std::vector<int> cpus;
  try {
    app.parse(argc, argv);
    const std::vector<int> allowed = allowed_cpus();
    cpus = app.count("--cpus") > 0 ? parse_cpus(options.cpus_text, allowed) : allowed;
    if (cpus.size() < 2) {
      throw std::invalid_argument(fmt::format(
          "needs at least two CPUs to pair up; {} (allowed here: {})",
          app.count("--cpus") > 0 ? fmt::format("--cpus {} names one", options.cpus_text)
                                  : "this process may run on one only",
          fmt::join(allowed, ",")));
    }
  } catch (const CLI::Success&) {
    std::fputs(app.help().c_str(), stdout);
    return 0;
  } catch (const std::exception& error) {  // CLI11's parse errors too
    fmt::print(stderr, "collbench-core-latency: {}\n", error.what());
    return kUsageStatus;
  }

  try {
    fmt::print("cpu_a cpu_b median_ns min_ns max_ns\n");
    for (std::size_t i = 0; i < cpus.size(); ++i) {
      for (std::size_t j = i + 1; j < cpus.size(); ++j) {
        std::vector<double> ns;
        for (int r = 0; r < options.repetitions; ++r) {
          ns.push_back(handoff_ns(cpus[i], cpus[j], options.round_trips));
        }
        std::sort(ns.begin(), ns.end());
        fmt::print("{} {} {:.1f} {:.1f} {:.1f}\n", cpus[i], cpus[j], ns[ns.size() / 2], ns.front(),
                   ns.back());
        std::fflush(stdout);
      }
    }
  } catch (const std::exception& error) {
    fmt::print(stderr, "collbench-core-latency: {}\n", error.what());
    return 1;
  }
  return 0;
}
