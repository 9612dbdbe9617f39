// collbench: the Google Benchmark harness for collective communication,
// launched under mpirun/srun on any number of ranks.
//
// Every rank parses the same arguments, checks that all ranks got the same
// configuration, registers the same benchmarks and runs them in lock-step;
// rank 0 reports (console or JSON, and the tidy CSV), the others use a null
// reporter. Bad input is one line on stderr from rank 0 and exit status 2,
// before any output file is created; a --check failure is exit status 1.
#include <benchmark/benchmark.h>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <mpi.h>
#include <regex.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <map>
#include <set>

#include "collbench/csv.h"
#include "collbench/mpi_transport.h"
#include "collbench/reduce.h"
#include "collbench/transport_factory.h"
#include "collbench/workload.h"
#include "families.h"
#include "metadata.h"
#include "options.h"
#include "process_signals.h"
#include "progress.h"
#include "reporter.h"
#ifdef COLLBENCH_HAVE_OFI
#include "collbench/ofi_transport.h"
#endif

namespace collbench::harness {
namespace {

constexpr int kUsageStatus = 2;
constexpr int kFailureStatus = 1;

// FNV-1a (64 bit) of this process's executable file, in hex; "unknown" when it
// cannot be read (no /proc). Cheap enough at start-up: a few MB read once.
std::string executable_digest() {
  std::FILE* file = std::fopen("/proc/self/exe", "rb");
  if (file == nullptr) return "unknown";
  std::uint64_t hash = 0xcbf29ce484222325ULL;
  std::array<unsigned char, 1 << 16> chunk{};
  std::size_t got = 0;
  while ((got = std::fread(chunk.data(), 1, chunk.size(), file)) > 0) {
    for (std::size_t i = 0; i < got; ++i) {
      hash = (hash ^ chunk[i]) * 0x100000001b3ULL;
    }
  }
  const bool failed = std::ferror(file) != 0;
  std::fclose(file);
  return failed ? "unknown" : fmt::format("{:016x}", hash);
}

struct World {
  MPI_Comm comm = MPI_COMM_NULL;  // the harness's own: barriers, timing, agreement
  int rank = 0;
  int size = 1;
};

// True when no rank reports an error. Otherwise the lowest rank that has one
// prints it; all ranks parse the same arguments, so that is rank 0 unless
// the ranks disagree.
bool all_ranks_ok(const World& world, const std::string& error) {
  int mine = error.empty() ? world.size : world.rank;
  int first = world.size;
  check_mpi(MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, world.comm), "MPI_Allreduce",
            "error agreement");
  if (first == world.size) return true;
  if (world.rank == first) {
    fmt::print(stderr, "collbench: {}\n", error);
    std::fflush(stderr);
  }
  return false;
}

// Gathers every rank's configuration on rank 0 and compares it with rank
// 0's; the first difference is reported with the option's name and both
// values.
std::string compare_configurations(const World& world,
                                   const std::vector<std::pair<std::string, std::string>>& fields) {
  // Unit and record separators cannot appear in command-line text.
  std::string serialized;
  for (const auto& [name, value] : fields) serialized += name + '\x1f' + value + '\x1e';
  int length = static_cast<int>(serialized.size());
  std::vector<int> lengths(static_cast<std::size_t>(world.size));
  check_mpi(MPI_Gather(&length, 1, MPI_INT, lengths.data(), 1, MPI_INT, 0, world.comm),
            "MPI_Gather", "configuration lengths");
  std::vector<int> offsets(static_cast<std::size_t>(world.size), 0);
  for (std::size_t r = 1; r < offsets.size(); ++r) offsets[r] = offsets[r - 1] + lengths[r - 1];
  std::string all(world.rank == 0 ? static_cast<std::size_t>(offsets.back() + lengths.back()) : 0,
                  '\0');
  check_mpi(MPI_Gatherv(serialized.data(), length, MPI_CHAR, all.data(), lengths.data(),
                        offsets.data(), MPI_CHAR, 0, world.comm),
            "MPI_Gatherv", "configurations");
  std::string difference;
  if (world.rank == 0) {
    auto parse = [](std::string_view text) {
      std::map<std::string, std::string> map;
      while (!text.empty()) {
        const auto end = text.find('\x1e');
        const std::string_view record = text.substr(0, end);
        const auto separator = record.find('\x1f');
        map[std::string(record.substr(0, separator))] = std::string(record.substr(separator + 1));
        text.remove_prefix(end + 1);
      }
      return map;
    };
    const auto reference = parse(serialized);
    for (int r = 1; r < world.size && difference.empty(); ++r) {
      const auto theirs = parse(std::string_view(all).substr(
          static_cast<std::size_t>(offsets[static_cast<std::size_t>(r)]),
          static_cast<std::size_t>(lengths[static_cast<std::size_t>(r)])));
      std::set<std::string> names;
      for (const auto& entry : reference) names.insert(entry.first);
      for (const auto& entry : theirs) names.insert(entry.first);
      for (const std::string& name : names) {
        const auto ours = reference.find(name);
        const auto other = theirs.find(name);
        const std::string a = ours == reference.end() ? "(not given)" : '"' + ours->second + '"';
        const std::string b = other == theirs.end() ? "(not given)" : '"' + other->second + '"';
        if (a != b) {
          const bool build = name.starts_with("collbench ");
          difference = fmt::format(
              "ranks were started with different {}: {} is {} on rank 0 but {} on rank {}; "
              "every rank must {}",
              build ? "builds" : "options", name, a, b, r,
              build ? "run the same collbench executable" : "get the same arguments");
          break;
        }
      }
    }
  }
  return difference;
}

// How many registered benchmarks --benchmark_filter selects, for the
// progress line and the "selects nothing" error. Matched as Google Benchmark
// matches it: a POSIX extended regex (regcomp, as its re.h) searched in the
// full name, the case name followed by `name_suffix` ("/manual_time", or
// "/repeats:1/manual_time" under --interleave); a leading '-' negates.
std::size_t count_selected(const CasePlan& plan, const std::string& name_suffix) {
  std::string filter = benchmark::GetBenchmarkFilter();
  if (filter.empty() || filter == "all") filter = ".";
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
    const std::string full_name = entry.name + name_suffix;
    const bool matches = regexec(&pattern, full_name.c_str(), 0, nullptr, 0) == 0;
    if (matches != negative) ++selected;
  }
  regfree(&pattern);
  return selected;
}

std::uint64_t agreed_memory_limit(const World& world, const RunMetadata& metadata) {
  // 90%: the MPI library, the page cache it may need and the OS keep some.
  const std::uint64_t available = node_available_memory();
  unsigned long long mine =
      available == 0 ? ULLONG_MAX
                     : available / static_cast<std::uint64_t>(metadata.ranks_on_my_node) / 10 * 9;
  unsigned long long limit = 0;
  check_mpi(MPI_Allreduce(&mine, &limit, 1, MPI_UNSIGNED_LONG_LONG, MPI_MIN, world.comm),
            "MPI_Allreduce", "memory limit");
  return limit == ULLONG_MAX ? 0 : limit;
}

std::string csv_path_problem(const Options& options) {
  namespace fs = std::filesystem;
  const fs::path path(options.csv_path);
  const fs::path directory = path.has_parent_path() ? path.parent_path() : fs::path(".");
  if (!fs::is_directory(directory)) {
    return fmt::format("--csv {}: the folder {} does not exist", options.csv_path,
                       directory.string());
  }
  return {};
}

// --benchmark_out is written by Google Benchmark itself on rank 0, so its
// path is checked here as --csv's is: a folder, device or pipe is refused,
// and an existing file is kept unless --force (Google Benchmark cannot append
// a JSON document, so --append does not cover it).
std::string benchmark_out_problem(const std::vector<std::string>& args, const Options& options) {
  namespace fs = std::filesystem;
  bool given = false;
  for (const std::string& arg : args) {
    if (arg.rfind("--benchmark_out=", 0) != 0) continue;
    given = true;
    const fs::path path(arg.substr(16));
    const fs::path directory = path.has_parent_path() ? path.parent_path() : fs::path(".");
    if (path.empty() || !fs::is_directory(directory) || access(directory.c_str(), W_OK) != 0) {
      return fmt::format("{}: cannot write a file there (folder missing or not writable)", arg);
    }
    std::error_code status_error;
    const fs::file_status status = fs::status(path, status_error);
    if (!fs::exists(status)) continue;
    if (!fs::is_regular_file(status)) {
      return fmt::format("{}: {} is not a regular file (a device, pipe or folder); name a file",
                         arg, path.string());
    }
    if (options.append) {
      return fmt::format(
          "{}: {} already exists and Google Benchmark cannot append to it; name another path, "
          "or drop --append and pass --force to overwrite it",
          arg, path.string());
    }
    if (!options.force) {
      return fmt::format("{}: {} already exists; choose another path, or pass --force", arg,
                         path.string());
    }
  }
  if (options.force && !given && options.csv_path.empty()) {
    return "--force needs --csv PATH or --benchmark_out=PATH";
  }
  return {};
}

// The --benchmark_out path Google Benchmark will write (the last one given,
// as it reads them), or empty.
std::string benchmark_out_path(const std::vector<std::string>& args) {
  std::string path;
  for (const std::string& arg : args) {
    if (arg.rfind("--benchmark_out=", 0) == 0) path = arg.substr(16);
  }
  return path;
}

// The --benchmark_out file is written to a temporary path in the same
// folder and renamed over the target only once complete: Google Benchmark
// does not report a write that a full disk or `ulimit -f` cut short.
std::string partial_benchmark_out(const std::string& path) {
  return fmt::format("{}.collbench-partial-{}", path, ::getpid());
}

// Whether the file Google Benchmark wrote is whole: a JSON report ends with
// its closing brace and a newline, the console and CSV formats with a
// newline (a cheap check; a stream cut short stops mid-line at a block
// boundary).
bool benchmark_out_complete(const std::string& path, const std::string& format) {
  std::FILE* file = std::fopen(path.c_str(), "rb");
  if (file == nullptr) return false;
  std::array<char, 2> tail{};
  const bool read = std::fseek(file, -2, SEEK_END) == 0 && std::fread(tail.data(), 1, 2, file) == 2;
  std::fclose(file);
  if (!read || tail[1] != '\n') return false;
  return format != "json" || tail[0] == '}';
}

// After benchmark::Shutdown(): the temporary file renamed over the target
// when whole, else deleted; an error (naming the file) or empty.
std::string finish_benchmark_out(const std::string& target, const std::string& format) {
  const std::string partial = partial_benchmark_out(target);
  if (!std::filesystem::exists(partial)) return {};
  if (!benchmark_out_complete(partial, format)) {
    std::remove(partial.c_str());
    return fmt::format(
        "--benchmark_out={}: the report was cut short (the file system is full, or the file "
        "reached the size limit of ulimit -f); no file written",
        target);
  }
  if (std::rename(partial.c_str(), target.c_str()) != 0) {
    const std::string reason = std::strerror(errno);
    std::remove(partial.c_str());
    return fmt::format("--benchmark_out={}: cannot rename the finished report into place: {}",
                       target, reason);
  }
  return {};
}

// Whether the Google Benchmark boolean flag `name` is set in `args` (the
// last one given wins, as Google Benchmark reads them).
bool benchmark_flag_set(const std::vector<std::string>& args, const std::string& name) {
  bool set = false;
  for (const std::string& arg : args) {
    if (arg == name) set = true;
    if (arg.rfind(name + "=", 0) == 0) set = flag_is_true(arg.substr(name.size() + 1));
  }
  return set;
}

// Two outputs on one path would overwrite each other, or interleave a JSON
// document with CSV rows.
std::string shared_output_problem(const Options& options, const std::vector<std::string>& args) {
  const std::string benchmark_out = benchmark_out_path(args);
  if (options.csv_path.empty() || benchmark_out.empty()) return {};
  if (!names_same_file(options.csv_path, benchmark_out)) return {};
  return fmt::format(
      "--csv {} and --benchmark_out={} name the same file; each output needs its own path",
      options.csv_path, benchmark_out);
}

void print_help() {
  std::fputs(help_text().c_str(), stdout);
  std::fputs(
      "\nGoogle Benchmark flags (each checked before the run: an unknown flag or bad value is "
      "refused with status 2; --benchmark_enable_random_interleaving is refused because ranks "
      "must run in the same order; with --benchmark_report_aggregates_only or "
      "--benchmark_display_aggregates_only the --csv still gets every repetition's row):\n",
      stdout);
  std::fflush(stdout);
  benchmark::PrintDefaultHelp();
  std::fflush(stdout);
}

int run(const World& world, int argc, char** argv) {
  const std::vector<std::string> args(argv + 1, argv + argc);
  if (asks_for_help(args)) {
    if (world.rank == 0) print_help();
    return 0;
  }

  std::string error;
  std::vector<std::pair<std::string, std::string>> benchmark_flags;
  try {
    benchmark_flags = benchmark_run_flags(args);
  } catch (const UsageError& usage) {
    error = usage.what();
  }
  // Only rank 0 writes --benchmark_out: Google Benchmark opens (truncates) the
  // file on every rank that sees the flag, and a late rank would erase what
  // rank 0 already wrote.
  const std::string benchmark_out = benchmark_out_path(args);
  std::string benchmark_out_format = "json";
  for (const std::string& arg : args) {
    if (arg.rfind("--benchmark_out_format=", 0) == 0) benchmark_out_format = arg.substr(23);
  }
  std::string partial_out_flag = "--benchmark_out=" + partial_benchmark_out(benchmark_out);
  if (world.rank == 0 && !benchmark_out.empty()) {
    remove_if_ended_abnormally(partial_benchmark_out(benchmark_out));
  }
  std::vector<char*> benchmark_argv = {argv[0]};
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg(argv[i]);
    const bool path_flag = arg.rfind("--benchmark_out=", 0) == 0;
    const bool out_flag = path_flag || arg.rfind("--benchmark_out_format=", 0) == 0;
    if (world.rank != 0 && out_flag) continue;
    benchmark_argv.push_back(path_flag ? partial_out_flag.data() : argv[i]);
  }
  // --samples N fixes the count: Google Benchmark must take the first call
  // (N samples) as the run, which it does once their time reaches a
  // min_time of 0. Appended last, so it wins over a --benchmark_min_time
  // given (scripts/run.sh puts one before the user's flags). Spotted in argv
  // as CLI11 will read it (an option token, "--samples" or "--samples=N").
  char fixed_count_min_time[] = "--benchmark_min_time=0";
  if (std::any_of(args.begin(), args.end(), [](const std::string& arg) {
        return arg == "--samples" || arg.starts_with("--samples=");
      })) {
    benchmark_argv.push_back(fixed_count_min_time);
  }
  int benchmark_argc = static_cast<int>(benchmark_argv.size());
  if (error.empty()) benchmark::Initialize(&benchmark_argc, benchmark_argv.data());
  const std::vector<std::string> remaining(benchmark_argv.begin() + 1,
                                           benchmark_argv.begin() + benchmark_argc);

  Options options;
  // --interleave: each benchmark is registered once per round, with one
  // repetition (Google Benchmark runs a benchmark's repetitions back to back).
  int rounds = 1;
  if (error.empty()) {
    try {
      options = parse_options(remaining);
      validate_for_ranks(options, world.size);
      if (world.rank == 0) error = shared_output_problem(options, args);
      if (world.rank == 0 && error.empty()) error = benchmark_out_problem(args, options);
      rounds = options.interleave ? benchmark_repetitions(benchmark_flags) : 1;
    } catch (const UsageError& usage) {
      error = usage.what();
    }
  }
  if (!all_ranks_ok(world, error)) return kUsageStatus;
  auto fields = configuration_fields(options, benchmark_flags);
  // Ranks launched from different builds would register different lists. The
  // git revision names the source; the executable's digest tells apart two
  // builds of one uncommitted ("-dirty") tree.
  fields.emplace_back("collbench build (git revision)", build_git_revision());
  fields.emplace_back("collbench executable (FNV-1a of /proc/self/exe)", executable_digest());
  if (!all_ranks_ok(world, compare_configurations(world, fields))) return kUsageStatus;

  if (options.list_providers) {
    if (world.rank == 0) {
#ifdef COLLBENCH_HAVE_OFI
      std::fputs(ofi_list_providers().c_str(), stdout);
#else
      std::puts(
          "libfabric is absent from this build: collbench was built without the OFI "
          "transport (install libfabric-dev and reconfigure with -DCOLLBENCH_WITH_OFI=ON)");
#endif
    }
    return 0;
  }
  if (options.list_algorithms) {
    if (world.rank == 0) std::fputs(algorithm_listing(options.list_algorithms_csv).c_str(), stdout);
    return 0;
  }

  std::vector<Workload> workloads;
  std::set<std::string> workload_specs;
  try {
    for (const std::string& spec : options.workloads) {
      for (Workload& workload : parse_workloads(spec, dtype_size(options.dtype))) {
        if (workload_specs.insert(workload.spec).second) workloads.push_back(std::move(workload));
      }
    }
  } catch (const std::invalid_argument& invalid) {
    error = fmt::format("--workload: {}", invalid.what());
  }
  if (error.empty() && options.families == std::vector<std::string>{"exchange"} &&
      workloads.empty()) {
    error = "--families exchange registers nothing without --workload SPEC";
  }
  if (!all_ranks_ok(world, error)) return kUsageStatus;

  std::unique_ptr<Transport> transport;
  try {
    transport = make_transport({options.transport, options.ofi_provider, MPI_COMM_WORLD});
    // Without --timeout, the start-up exchanges get the default of a
    // benchmark of no bytes; the Runner sets each benchmark's own.
    const double timeout_seconds = options.timeout_seconds < 0
                                       ? default_timeout_seconds(0, world.size)
                                       : options.timeout_seconds;
    transport->set_timeout(timeout_milliseconds(timeout_seconds));
  } catch (const std::exception& failure) {
    error =
        fmt::format("--transport {}{}: {}", options.transport,
                    options.ofi_provider.empty() ? "" : " --ofi-provider " + options.ofi_provider,
                    failure.what());
  }
  if (!all_ranks_ok(world, error)) return kUsageStatus;

  const RunMetadata metadata =
      gather_metadata(world.comm, options.run_id, options.transport == "ofi");
  CasePlan plan;
  try {
    plan = plan_cases(options, workloads, transport->kind(), world.size,
                      agreed_memory_limit(world, metadata));
  } catch (const UsageError& usage) {
    error = usage.what();
  }
  // What Google Benchmark appends to each registered name: an explicit
  // Repetitions(1) (--interleave) shows as "repeats:1".
  const std::string name_suffix = options.interleave ? "/repeats:1/manual_time" : "/manual_time";
  std::size_t selected = 0;
  if (error.empty()) {
    try {
      selected = count_selected(plan, name_suffix);
      if (plan.cases.empty()) {
        error = "nothing to run: no family and algorithm of this configuration can run here" +
                (plan.notes.empty() ? std::string()
                                    : " (" + fmt::format("{}", fmt::join(plan.notes, "; ")) + ")");
      } else if (selected == 0) {
        error = fmt::format(
            "--benchmark_filter={} selects none of the {} benchmarks (names look like "
            "{}{})",
            benchmark::GetBenchmarkFilter(), plan.cases.size(), plan.cases.front().name,
            name_suffix);
      }
    } catch (const UsageError& usage) {
      error = usage.what();
    }
  }
  if (!all_ranks_ok(world, error)) return kUsageStatus;
  if (world.rank == 0) {
    for (const std::string& note : plan.notes) fmt::print(stderr, "collbench: note: {}\n", note);
    std::fflush(stderr);
  }

  // --benchmark_list_tests only prints the names: no CSV is created (a dry
  // run, as scripts/run.sh makes one to check its flags), but the path is
  // checked as for a run.
  const bool list_only =
      std::any_of(benchmark_flags.begin(), benchmark_flags.end(), [](const auto& flag) {
        return flag.first == "--benchmark_list_tests" && flag_is_true(flag.second);
      });
  std::unique_ptr<CsvWriter> csv;
  if (world.rank == 0 && !options.csv_path.empty()) {
    error = csv_path_problem(options);
    if (error.empty() && list_only) {
      if (std::filesystem::exists(options.csv_path) && !options.append && !options.force) {
        error = fmt::format(
            "--csv: {} already exists; choose another path, or pass --append or "
            "--force",
            options.csv_path);
      }
    } else if (error.empty()) {
      try {
        const ExistingFile policy = options.append  ? ExistingFile::append
                                    : options.force ? ExistingFile::overwrite
                                                    : ExistingFile::refuse;
        csv = std::make_unique<CsvWriter>(options.csv_path, csv_columns(), policy);
      } catch (const std::exception& failure) {
        error = fmt::format("--csv: {}{}", failure.what(),
                            options.append || options.force ? "" : " (use --append or --force)");
      }
    }
  }
  if (!all_ranks_ok(world, error)) return kUsageStatus;

  const bool show_progress = !options.quiet && (options.progress || isatty(STDERR_FILENO) != 0);
  Progress progress(world.rank == 0 && show_progress, selected * static_cast<std::size_t>(rounds));
  Runner runner(options, *transport, world.comm, progress);
  std::map<std::string, const BenchmarkCase*> cases_by_name;
  for (BenchmarkCase& entry : plan.cases) cases_by_name.emplace(entry.name, &entry);
  // The aggregates-only flags would keep every repetition's run from the
  // reporter, and so from the CSV. Each benchmark is registered to hand rank
  // 0's reporter every run instead; the reporter shows only the aggregates on
  // the console itself, and --benchmark_out keeps what the flags ask for.
  const bool report_aggregates_only =
      benchmark_flag_set(args, "--benchmark_report_aggregates_only");
  const bool display_aggregates_only =
      report_aggregates_only || benchmark_flag_set(args, "--benchmark_display_aggregates_only");
  for (int round = 0; round < rounds; ++round) {
    for (BenchmarkCase& entry : plan.cases) {
      benchmark::internal::Benchmark* registered = benchmark::RegisterBenchmark(
          entry.name.c_str(),
          [&runner, &entry, round](benchmark::State& state) { runner.run(state, entry, round); });
      registered->UseManualTime()->Unit(benchmark::kMicrosecond);
      registered->ReportAggregatesOnly(report_aggregates_only)->DisplayAggregatesOnly(false);
      if (options.interleave) registered->Repetitions(1);
    }
  }

  benchmark::AddCustomContext("collbench_run_id", metadata.run_id);
  benchmark::AddCustomContext("collbench_git_revision", metadata.git_revision);
  benchmark::AddCustomContext("collbench_ranks", std::to_string(metadata.ranks));
  benchmark::AddCustomContext("collbench_hosts", metadata.hosts);
  benchmark::AddCustomContext("collbench_mpi_library", metadata.mpi_library);
  benchmark::AddCustomContext("collbench_transport", std::string(transport->kind()));
  if (world.rank == 0) {
    RowContext context;
    context.transport = std::string(transport->kind());
    context.provider = transport->provider();
    context.reduce_kernel = std::string(active_reduce_variant());
    context.options = &options;
    context.metadata = &metadata;
    // Google Benchmark's console reporter prints the run's context (CPU,
    // caches, collbench_* metadata) on stderr; it belongs with the table, and
    // stderr is kept for notes, progress and errors.
    benchmark::BenchmarkReporter* display = benchmark::CreateDefaultDisplayReporter();
    display->SetErrorStream(&std::cout);
    RankZeroReporter reporter(display, csv.get(), std::move(cases_by_name), context, progress,
                              display_aggregates_only);
    benchmark::RunSpecifiedBenchmarks(&reporter);
  } else {
    NullReporter null_reporter;
    benchmark::RunSpecifiedBenchmarks(&null_reporter);
  }
  runner.release();
  benchmark::Shutdown();
  if (world.rank == 0 && list_only) {
    // Google Benchmark opens the file even for a list of names, and writes
    // nothing into it: a dry run leaves no file.
    std::remove(partial_benchmark_out(benchmark_out).c_str());
    keep_file_of_normal_end();
  } else if (world.rank == 0 && !benchmark_out.empty()) {
    const std::string out_error = finish_benchmark_out(benchmark_out, benchmark_out_format);
    keep_file_of_normal_end();
    if (!out_error.empty()) {
      fmt::print(stderr, "collbench: {}\n", out_error);
      return kFailureStatus;
    }
  }

  std::vector<std::string> failed;
  for (const BenchmarkCase& entry : plan.cases) {
    if (entry.wrong_elements_all_rounds > 0) {
      failed.push_back(fmt::format("{} ({} wrong)", entry.name, entry.wrong_elements_all_rounds));
    }
  }
  if (!failed.empty()) {
    if (world.rank == 0) {
      fmt::print(stderr, "collbench: --check found wrong results in {} benchmark{}: {}\n",
                 failed.size(), failed.size() == 1 ? "" : "s", fmt::join(failed, ", "));
    }
    return kFailureStatus;
  }
  return 0;
}

}  // namespace
}  // namespace collbench::harness

int main(int argc, char** argv) {
  collbench::harness::set_process_signals();
  collbench::harness::World world;
  if (MPI_Init(&argc, &argv) != MPI_SUCCESS) {
    std::fputs("collbench: MPI_Init failed\n", stderr);
    return 1;
  }
  int status = 0;
  try {
    MPI_Comm_dup(MPI_COMM_WORLD, &world.comm);
    MPI_Comm_rank(world.comm, &world.rank);
    MPI_Comm_size(world.comm, &world.size);
    status = collbench::harness::run(world, argc, argv);
  } catch (const std::exception& failure) {
    // Past the agreement points, an error on one rank cannot be agreed on
    // without risking a hang: say what failed and take the job down.
    fmt::print(stderr, "collbench: rank {}: {}\n", world.rank, failure.what());
    std::fflush(stderr);
    collbench::harness::abort_job();
  }
  if (world.comm != MPI_COMM_NULL) MPI_Comm_free(&world.comm);
  MPI_Finalize();
  return status;
}
