// Google Benchmark's flags, checked before it sees them; see options.h.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <initializer_list>

#include "options.h"

namespace collbench::harness {
namespace {

// The Google Benchmark (1.7.1) flags collbench passes on, and what each
// value must be. Google Benchmark itself answers a bad value with its usage
// text and exit(0) (a job that "succeeds" without MPI_Finalize), or leaves a
// malformed number for collbench to call an unknown argument, so every
// --benchmark_* argument is checked here before it sees any.
enum class FlagValue {
  boolean,
  repetitions,
  seconds,
  min_time,  // seconds, also written with an 's' suffix
  verbosity,
  text,
  format,
  color,
  time_unit,
  context
};

struct BenchmarkFlag {
  const char* name;
  FlagValue value;
  // Changes only how rank 0 displays or stores results, so it may differ
  // between ranks and is left out of the configuration digest.
  bool display_only;
};

constexpr BenchmarkFlag kBenchmarkFlags[] = {
    {"--benchmark_list_tests", FlagValue::boolean, false},
    {"--benchmark_filter", FlagValue::text, false},
    {"--benchmark_min_time", FlagValue::min_time, false},
    {"--benchmark_min_warmup_time", FlagValue::seconds, false},
    {"--benchmark_repetitions", FlagValue::repetitions, false},
    {"--benchmark_enable_random_interleaving", FlagValue::boolean, false},
    {"--benchmark_report_aggregates_only", FlagValue::boolean, true},
    {"--benchmark_display_aggregates_only", FlagValue::boolean, true},
    {"--benchmark_format", FlagValue::format, true},
    {"--benchmark_out", FlagValue::text, true},
    {"--benchmark_out_format", FlagValue::format, true},
    {"--benchmark_color", FlagValue::color, true},
    {"--benchmark_counters_tabular", FlagValue::boolean, true},
    {"--benchmark_perf_counters", FlagValue::text, false},
    {"--benchmark_context", FlagValue::context, true},
    {"--benchmark_time_unit", FlagValue::time_unit, false},
    {"--v", FlagValue::verbosity, false},
};

// A day: a longer --benchmark_min_time per benchmark is a typo (ms for s).
constexpr double kMaxBenchmarkSeconds = 24.0 * 3600;
// Google Benchmark keeps every repetition's result in memory, and
// --interleave registers every benchmark once per repetition.
constexpr int kMaxRepetitions = 100000;

bool is_one_of(const std::string& value, std::initializer_list<const char*> accepted) {
  return std::any_of(accepted.begin(), accepted.end(),
                     [&](const char* word) { return value == word; });
}

std::string lower(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return text;
}

// The spellings of true and false this accepts; Google Benchmark reads
// anything else as true, which would hide a typo.
bool is_boolean_word(const std::string& value) {
  return is_one_of(lower(value),
                   {"", "1", "t", "true", "y", "yes", "on", "0", "f", "false", "n", "no", "off"});
}

std::string number_problem(const std::string& value, bool whole, const char* unit, double lowest,
                           double highest) {
  double number = 0;
  const char* end = value.data() + value.size();
  const auto [ptr, ec] = std::from_chars(value.data(), end, number);
  const bool digits_only = value.find_first_not_of("0123456789") == std::string::npos;
  const bool ok = !value.empty() && ec == std::errc() && ptr == end && std::isfinite(number) &&
                  number >= lowest && number <= highest && (!whole || digits_only);
  if (ok) return {};
  return fmt::format("expected a {} of {} from {} to {}{}", whole ? "whole number" : "number", unit,
                     lowest, highest, whole ? "" : ", e.g. 0.5 (no unit suffix)");
}

// Google Benchmark 1.8 and later write --benchmark_min_time in seconds as
// "0.5s" (the form their docs show); 1.7.1, which collbench builds with,
// reads a bare number only. The suffix is accepted and dropped before Google
// Benchmark sees the value.
std::string without_seconds_suffix(const std::string& value) {
  if (value.size() < 2 || value.back() != 's') return value;
  const char before = value[value.size() - 2];
  return (before >= '0' && before <= '9') || before == '.' ? value.substr(0, value.size() - 1)
                                                           : value;
}

// What is wrong with `value` for `flag`, or empty.
std::string benchmark_value_problem(const BenchmarkFlag& flag, const std::string& value) {
  switch (flag.value) {
    case FlagValue::boolean:
      return is_boolean_word(value) ? "" : "expected true or false";
    case FlagValue::repetitions:
      return number_problem(value, true, "repetitions", 1, kMaxRepetitions);
    case FlagValue::seconds:
      return number_problem(value, false, "seconds", 0, kMaxBenchmarkSeconds);
    case FlagValue::min_time: {
      const std::string seconds = without_seconds_suffix(value);
      if (number_problem(seconds, false, "seconds", 0, kMaxBenchmarkSeconds).empty()) return {};
      return fmt::format("expected a number of seconds from 0 to {}, e.g. 0.5 or 0.5s",
                         kMaxBenchmarkSeconds);
    }
    case FlagValue::verbosity:
      return number_problem(value, true, "log levels", 0, std::numeric_limits<int>::max());
    case FlagValue::text:
      return {};
    case FlagValue::format:
      // Google Benchmark's CSV reporter aborts the job when a row lacks a
      // counter an earlier row had, and collbench's rows differ by family
      // (a ping-pong has no slowest_rank) and by run (core_handoff_ns).
      if (value == "csv") {
        return "Google Benchmark's csv format is not accepted: it needs every row to have the "
               "same counters, and collbench's differ by family; use --csv PATH, collbench's own "
               "CSV, with every column in every row";
      }
      return is_one_of(value, {"console", "json"}) ? "" : "accepted formats are console and json";
    case FlagValue::color:
      return value == "auto" || (!value.empty() && is_boolean_word(value))
                 ? ""
                 : "expected auto, true or false";
    case FlagValue::time_unit:
      return is_one_of(value, {"ns", "us", "ms", "s"}) ? "" : "accepted units are ns, us, ms and s";
    case FlagValue::context: {
      for (const std::string& pair : split_list(value)) {
        if (pair.find('=') == std::string::npos || pair.front() == '=') {
          return "expected KEY=VALUE pairs separated by commas";
        }
      }
      return {};
    }
  }
  return {};
}

const BenchmarkFlag* find_benchmark_flag(const std::string& name) {
  for (const BenchmarkFlag& flag : kBenchmarkFlags) {
    if (name == flag.name) return &flag;
  }
  return nullptr;
}

std::string benchmark_flag_names() {
  std::vector<std::string> names;
  for (const BenchmarkFlag& flag : kBenchmarkFlags) names.emplace_back(flag.name);
  return fmt::format("{}", fmt::join(names, ", "));
}

}  // namespace

std::string google_benchmark_argument(const std::string& arg) {
  constexpr std::string_view kMinTime = "--benchmark_min_time=";
  if (!arg.starts_with(kMinTime)) return arg;
  return std::string(kMinTime) + without_seconds_suffix(arg.substr(kMinTime.size()));
}

bool flag_is_true(std::string value) {
  // Google Benchmark's IsTruthyFlagValue: these spellings are false, anything
  // else (including an empty value, i.e. a bare flag) is true.
  std::transform(value.begin(), value.end(), value.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return !(value == "0" || value == "f" || value == "false" || value == "n" || value == "no" ||
           value == "off");
}

std::vector<std::pair<std::string, std::string>> benchmark_run_flags(
    const std::vector<std::string>& args) {
  std::vector<std::pair<std::string, std::string>> flags;
  for (const std::string& arg : args) {
    if (arg.rfind("--benchmark_", 0) != 0 && arg != "--v" && arg.rfind("--v=", 0) != 0) continue;
    const auto equals = arg.find('=');
    std::string name = arg.substr(0, equals);
    std::string value = equals == std::string::npos ? "" : arg.substr(equals + 1);
    const BenchmarkFlag* flag = find_benchmark_flag(name);
    if (flag == nullptr) {
      throw UsageError(fmt::format("unknown Google Benchmark flag {}; accepted: {}", name,
                                   benchmark_flag_names()));
    }
    if (equals == std::string::npos && flag->value != FlagValue::boolean) {
      throw UsageError(fmt::format(
          "{} needs a value, written {}=VALUE (Google Benchmark flags take '=', not a space)", name,
          name));
    }
    if (const std::string problem = benchmark_value_problem(*flag, value); !problem.empty()) {
      throw UsageError(fmt::format("{}={}: {}", name, value, problem));
    }
    if (name == "--benchmark_enable_random_interleaving" && flag_is_true(value)) {
      throw UsageError(
          "--benchmark_enable_random_interleaving cannot be used: it shuffles the benchmark "
          "order differently on every rank, and ranks must run the same sequence");
    }
    if (flag->value == FlagValue::min_time) value = without_seconds_suffix(value);
    if (!flag->display_only) flags.emplace_back(std::move(name), std::move(value));
  }
  return flags;
}

int benchmark_repetitions(const std::vector<std::pair<std::string, std::string>>& flags) {
  int repetitions = 1;
  for (const auto& [name, value] : flags) {
    // benchmark_run_flags has checked that it is a whole number from 1 to
    // kMaxRepetitions, written in digits.
    if (name == "--benchmark_repetitions") repetitions = std::stoi(value);
  }
  return repetitions;
}

}  // namespace collbench::harness
