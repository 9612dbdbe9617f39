// What main.cpp hands Google Benchmark; see google_benchmark_setup.h.
#include "google_benchmark_setup.h"

#include <benchmark/benchmark.h>
#include <fmt/format.h>
#include <regex.h>

#include <algorithm>
#include <array>
#include <string_view>

#include "process_signals.h"
#include "single_process.h"

namespace collbench::harness {

std::vector<std::string> initialize_google_benchmark(const World& world, int argc, char** argv,
                                                     const std::vector<std::string>& args,
                                                     const BenchmarkOut& out, bool initialize) {
  // Only rank 0 writes --benchmark_out: Google Benchmark opens (truncates) the
  // file on every rank that sees the flag, and a late rank would erase what
  // rank 0 already wrote.
  std::string partial_out_flag = "--benchmark_out=" + partial_benchmark_out(out.target);
  if (world.rank == 0 && !out.target.empty()) {
    remove_if_ended_abnormally(partial_benchmark_out(out.target));
  }
  std::vector<char*> benchmark_argv = {argv[0]};
  std::vector<std::string> rewritten;                 // arguments given in another spelling
  rewritten.reserve(static_cast<std::size_t>(argc));  // no reallocation: argv points into it
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg(argv[i]);
    const bool path_flag = arg.rfind("--benchmark_out=", 0) == 0;
    const bool out_flag = path_flag || arg.rfind("--benchmark_out_format=", 0) == 0;
    if (world.rank != 0 && out_flag) continue;
    if (path_flag) {
      benchmark_argv.push_back(partial_out_flag.data());
    } else if (std::string plain = google_benchmark_argument(argv[i]); plain != arg) {
      benchmark_argv.push_back(rewritten.emplace_back(std::move(plain)).data());
    } else {
      benchmark_argv.push_back(argv[i]);
    }
  }
  // --samples N fixes the count: Google Benchmark must take the first call
  // (N samples) as the run, which it does once their time reaches a
  // min_time of 0. Appended last, so it wins over a --benchmark_min_time
  // given (scripts/run.sh puts one before the user's flags). Spotted in argv
  // as CLI11 will read it (an option token, "--samples" or "--samples=N").
  // A simulated case runs once too (its transport is deterministic).
  char fixed_count_min_time[] = "--benchmark_min_time=0";
  const SingleProcessTransport* single =
      find_single_process_transport(requested(argc, argv, "--transport"));
  if ((single != nullptr && single->deterministic) ||
      std::any_of(args.begin(), args.end(), [](const std::string& arg) {
        return arg == "--samples" || arg.starts_with("--samples=");
      })) {
    benchmark_argv.push_back(fixed_count_min_time);
  }
  int benchmark_argc = static_cast<int>(benchmark_argv.size());
  if (initialize) benchmark::Initialize(&benchmark_argc, benchmark_argv.data());
  return std::vector<std::string>(benchmark_argv.begin() + 1,
                                  benchmark_argv.begin() + benchmark_argc);
}

std::size_t count_selected(const CasePlan& plan, const std::string& name_suffix,
                           const FamilyRunner* family) {
  std::string filter = benchmark::GetBenchmarkFilter();
  // Not `filter = "."`: GCC 12's -Wrestrict misfires on it at -O3 once
  // CLI11's headers no longer come in (sim_options.h) to change the inlining.
  if (filter.empty() || filter == "all") filter.assign(1, '.');
  bool negative = false;
  if (filter.front() == '-') {
    negative = true;
    filter.erase(0, 1);
  }
  regex_t pattern;
  if (const int status = regcomp(&pattern, filter.c_str(), REG_EXTENDED | REG_NOSUB); status != 0) {
    std::array<char, 256> reason{};
    regerror(status, &pattern, reason.data(), reason.size());
    throw UsageError(fmt::format("--benchmark_filter={} is not a POSIX extended regex: {}",
                                 benchmark::GetBenchmarkFilter(), reason.data()));
  }
  std::size_t selected = 0;
  for (const BenchmarkCase& entry : plan.cases) {
    if (family != nullptr && entry.family != family) continue;
    const std::string full_name = entry.name + name_suffix;
    const bool matches = regexec(&pattern, full_name.c_str(), 0, nullptr, 0) == 0;
    if (matches != negative) ++selected;
  }
  regfree(&pattern);
  return selected;
}

bool benchmark_flag_set(const std::vector<std::string>& args, const std::string& name) {
  bool set = false;
  for (const std::string& arg : args) {
    if (arg == name) set = true;
    if (arg.rfind(name + "=", 0) == 0) set = flag_is_true(arg.substr(name.size() + 1));
  }
  return set;
}

bool lists_tests_only(const std::vector<std::pair<std::string, std::string>>& benchmark_flags) {
  return std::any_of(benchmark_flags.begin(), benchmark_flags.end(), [](const auto& flag) {
    return flag.first == "--benchmark_list_tests" && flag_is_true(flag.second);
  });
}

}  // namespace collbench::harness
