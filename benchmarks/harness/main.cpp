// collbench: the Google Benchmark harness for collective communication,
// launched under mpirun/srun on any number of ranks, or, with a transport
// whose ranks all run in one process (`--transport inproc --ranks N`,
// single_process.h), started alone: then MPI is never initialized, and this
// process is every rank (the Runner drives them, families.h).
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
#include <optional>
#include <set>

#include "collbench/catalog/workload.h"
#include "collbench/collectives/mpi_library.h"
#include "collbench/core/csv.h"
#include "collbench/core/reduce.h"
#include "collbench/transport/bootstrap.h"
#include "collbench/transport/mpi_transport.h"
#include "collbench/transport/transport_factory.h"
#include "families.h"
#include "gemm_family.h"
#include "metadata.h"
#include "options.h"
#include "process_signals.h"
#include "progress.h"
#include "reporter.h"
#include "single_process.h"
#include "train_family.h"
#ifdef COLLBENCH_HAVE_OFI
#include "collbench/transport/ofi_transport.h"
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

// What a launcher (Open MPI's mpirun, a PMIx one such as srun, MPICH's
// hydra) sets in each process it starts: the process's rank in the job.
constexpr const char* kLauncherRankVariables[] = {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK"};

struct World {
  // False: every rank runs in this process, and MPI is not initialized;
  // `size` is then --ranks, known once the options are parsed.
  bool mpi = true;
  MPI_Comm comm = MPI_COMM_NULL;  // the harness's own: barriers, timing, agreement
  int rank = 0;
  int size = 1;
  // What MPI_Init_thread provided: the train family's communication thread
  // needs MPI_THREAD_SERIALIZED (train_family.cpp).
  int thread_level = MPI_THREAD_SINGLE;
  // Without MPI, one rank per process (--bootstrap file:DIR): how the ranks
  // agree, once the options have said how to find each other.
  std::unique_ptr<Bootstrap> bootstrap;
};

// True when no rank reports an error. Otherwise the lowest rank that has one
// prints it; all ranks parse the same arguments, so that is rank 0 unless
// the ranks disagree.
bool all_ranks_ok(const World& world, const std::string& error) {
  if (world.bootstrap) {
    const std::vector<std::string> errors = world.bootstrap->allgather(error);
    const auto first =
        std::find_if(errors.begin(), errors.end(), [](const auto& e) { return !e.empty(); });
    if (first == errors.end()) return true;
    if (first - errors.begin() == world.rank) fmt::print(stderr, "collbench: {}\n", error);
    return false;
  }
  if (!world.mpi) {
    if (!error.empty() && world.rank == 0) fmt::print(stderr, "collbench: {}\n", error);
    return error.empty();
  }
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

std::string configuration_difference(const std::string& serialized,
                                     const std::vector<std::string>& by_rank, const World& world);

// Gathers every rank's configuration on rank 0 and compares it with rank
// 0's; the first difference is reported with the option's name and both
// values.
std::string compare_configurations(const World& world,
                                   const std::vector<std::pair<std::string, std::string>>& fields) {
  // Unit and record separators cannot appear in command-line text.
  std::string serialized;
  for (const auto& [name, value] : fields) serialized += name + '\x1f' + value + '\x1e';
  if (world.bootstrap) {
    return configuration_difference(serialized, world.bootstrap->allgather(serialized), world);
  }
  if (!world.mpi) return {};  // one process: one configuration
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
  std::vector<std::string> by_rank;
  for (std::size_t r = 0; world.rank == 0 && r < offsets.size(); ++r) {
    by_rank.push_back(
        all.substr(static_cast<std::size_t>(offsets[r]), static_cast<std::size_t>(lengths[r])));
  }
  return configuration_difference(serialized, by_rank, world);
}

// On rank 0: the first difference between its configuration and another
// rank's (`by_rank`, serialized as compare_configurations does); empty
// elsewhere or when they all agree.
std::string configuration_difference(const std::string& serialized,
                                     const std::vector<std::string>& by_rank, const World& world) {
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
      const auto theirs = parse(by_rank[static_cast<std::size_t>(r)]);
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
// With `family`, only the benchmarks of that family are counted.
std::size_t count_selected(const CasePlan& plan, const std::string& name_suffix,
                           const FamilyRunner* family = nullptr) {
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
    if (family != nullptr && entry.family != family) continue;
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
  unsigned long long limit = mine;
  if (world.bootstrap) {
    for (const std::string& theirs : world.bootstrap->allgather(std::to_string(mine))) {
      limit = std::min(limit, std::stoull(theirs));
    }
  } else if (world.mpi) {
    check_mpi(MPI_Allreduce(&mine, &limit, 1, MPI_UNSIGNED_LONG_LONG, MPI_MIN, world.comm),
              "MPI_Allreduce", "memory limit");
  }
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
  if (fs::is_directory(path)) {
    return fmt::format("--csv {}: is a folder; name a file (e.g. {})", options.csv_path,
                       (path / "run.csv").string());
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
  if (options.force && !given && options.csv_path.empty() && options.timeline_path.empty()) {
    return "--force needs --csv PATH, --benchmark_out=PATH or --timeline PATH";
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

// --timeline is checked before anything runs, as --csv is: its folder must
// exist and be writable, and an existing file is kept unless --force.
std::string timeline_problem(const Options& options) {
  namespace fs = std::filesystem;
  if (options.timeline_path.empty()) return {};
  const fs::path path(options.timeline_path);
  const fs::path directory = path.has_parent_path() ? path.parent_path() : fs::path(".");
  if (!fs::is_directory(directory) || access(directory.c_str(), W_OK) != 0) {
    return fmt::format("--timeline {}: cannot write a file there (folder missing or not writable)",
                       options.timeline_path);
  }
  std::error_code status_error;
  const fs::file_status status = fs::status(path, status_error);
  if (!fs::exists(status)) return {};
  if (!fs::is_regular_file(status)) {
    return fmt::format("--timeline {}: not a regular file (a device, pipe or folder); name a file",
                       options.timeline_path);
  }
  if (!options.force) {
    return fmt::format("--timeline {}: already exists; choose another path, or pass --force",
                       options.timeline_path);
  }
  return {};
}

// After the benchmarks, on rank 0: every train benchmark's timeline,
// written to a temporary file and renamed over --timeline once whole.
std::string write_timeline(const Options& options) {
  if (options.timeline_path.empty()) return {};
  const std::string json = chrome_trace_json(take_train_timelines());
  const std::string partial =
      fmt::format("{}.collbench-partial-{}", options.timeline_path, ::getpid());
  std::FILE* file = std::fopen(partial.c_str(), "wb");
  const bool written =
      file != nullptr && std::fwrite(json.data(), 1, json.size(), file) == json.size();
  const bool closed = file != nullptr && std::fclose(file) == 0;
  if (!written || !closed || std::rename(partial.c_str(), options.timeline_path.c_str()) != 0) {
    const std::string reason = std::strerror(errno);
    std::remove(partial.c_str());
    return fmt::format("--timeline {}: cannot write the timeline ({}); no file written",
                       options.timeline_path, reason);
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
// document with CSV rows: every pair of the run's output files is compared
// (through links and other spellings of one path).
std::string shared_output_problem(const Options& options, const std::vector<std::string>& args) {
  const std::pair<std::string, std::string> outputs[] = {
      {"--csv " + options.csv_path, options.csv_path},
      {"--benchmark_out=" + benchmark_out_path(args), benchmark_out_path(args)},
      {"--timeline " + options.timeline_path, options.timeline_path}};
  for (auto a = std::begin(outputs); a != std::end(outputs); ++a) {
    for (auto b = a + 1; b != std::end(outputs); ++b) {
      if (a->second.empty() || b->second.empty() || !names_same_file(a->second, b->second)) {
        continue;
      }
      return fmt::format("{} and {} name the same file; each output needs its own path", a->first,
                         b->first);
    }
  }
  return {};
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

// The report Google Benchmark writes to --benchmark_out: on rank 0 only,
// into partial_benchmark_out(target) until it is whole.
struct BenchmarkOut {
  std::string target;           // the --benchmark_out path (the last given), or empty
  std::string format = "json";  // --benchmark_out_format (the last given)
};

BenchmarkOut benchmark_out_of(const std::vector<std::string>& args) {
  BenchmarkOut out;
  out.target = benchmark_out_path(args);
  for (const std::string& arg : args) {
    if (arg.rfind("--benchmark_out_format=", 0) == 0) out.format = arg.substr(23);
  }
  return out;
}

// What every rank has agreed on and prepared before the first benchmark.
struct RunSetup {
  std::vector<std::pair<std::string, std::string>> benchmark_flags;
  BenchmarkOut out;
  Options options;
  // --interleave: each benchmark is registered once per round, with one
  // repetition (Google Benchmark runs a benchmark's repetitions back to back).
  int rounds = 1;
  std::vector<Workload> workloads;
  std::unique_ptr<InstrumentedTransport> transport;  // under MPI: this process's rank's
  std::unique_ptr<RankGroup> group;                  // without: every rank, in this process
  RunMetadata metadata;
  CasePlan plan;
  std::size_t selected = 0;        // of plan.cases, by --benchmark_filter
  bool list_only = false;          // --benchmark_list_tests
  std::unique_ptr<CsvWriter> csv;  // rank 0's --csv, when given and not list_only
};

std::string read_benchmark_flags(const std::vector<std::string>& args, RunSetup& setup) {
  try {
    setup.benchmark_flags = benchmark_run_flags(args);
  } catch (const UsageError& usage) {
    return usage.what();
  }
  return {};
}

// Hands Google Benchmark its flags (initializing it only when `initialize`)
// and returns the arguments it leaves, collbench's own.
std::string requested(int argc, char** argv, std::string_view option);

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

// Why a run started without MPI (`what` says how it starts its ranks)
// cannot start here: under a launcher (its variables, as rank 0 of the job
// sees them), or in an MPI process all the same (the argument scan of main
// missed it).
std::string launch_problem(const World& world, const std::string& what) {
  for (const char* variable : kLauncherRankVariables) {
    if (std::getenv(variable) == nullptr) continue;
    return fmt::format(
        "{} and cannot start under mpirun or srun ({} is set); start collbench "
        "without them",
        what, variable);
  }
  if (world.mpi) return fmt::format("{}: start collbench without mpirun and without MPI", what);
  return {};
}

// --bootstrap file:DIR: this process is --rank of --ranks, and meets the
// others in DIR (bounded by --timeout, or the default of a benchmark of no
// bytes). Throws UsageError naming what is wrong (DIR missing, left by
// another job, ranks that did not come).
void open_bootstrap(World& world, const Options& options) {
  try {
    world.bootstrap = make_file_bootstrap(options.bootstrap_folder(), options.rank, options.ranks,
                                          start_up_timeout(options, options.ranks));
  } catch (const std::exception& failure) {
    throw UsageError(fmt::format("--bootstrap {} (rank {} of {}): {}", options.bootstrap,
                                 options.rank, options.ranks, failure.what()));
  }
  world.rank = options.rank;
  world.size = options.ranks;
}

// collbench's options, checked against the rank count and, on rank 0, the
// output paths. Without MPI the rank count is --ranks. Returns the error,
// or empty.
std::string parse_and_check_options(World& world, const std::vector<std::string>& remaining,
                                    const std::vector<std::string>& args, RunSetup& setup) {
  Options& options = setup.options;
  std::string error;
  try {
    options = parse_options(remaining);
    validate_single_process(options, setup.benchmark_flags);
    if (find_single_process_transport(options.transport) != nullptr) {
      const std::string what = fmt::format(
          "--transport {} runs every rank in this one process (--ranks N)", options.transport);
      if (std::string problem = launch_problem(world, what); !problem.empty()) {
        throw UsageError(problem);
      }
      world.size = options.ranks;
    }
    if (!options.bootstrap_folder().empty()) {
      const std::string what = fmt::format(
          "--bootstrap {} meets ranks started one by one (--rank R)", options.bootstrap);
      if (std::string problem = launch_problem(world, what); !problem.empty()) {
        throw UsageError(problem);
      }
      open_bootstrap(world, options);
    }
    validate_for_ranks(options, world.size);
    configure_blas(options.blas_threads);
    if (world.rank == 0) error = shared_output_problem(options, args);
    if (world.rank == 0 && error.empty()) error = benchmark_out_problem(args, options);
    if (world.rank == 0 && error.empty()) error = timeline_problem(options);
    setup.rounds = options.interleave ? benchmark_repetitions(setup.benchmark_flags) : 1;
  } catch (const UsageError& usage) {
    error = usage.what();
  }
  return error;
}

std::string configuration_problem(const World& world, const RunSetup& setup) {
  auto fields = configuration_fields(setup.options, setup.benchmark_flags);
  // Ranks launched from different builds would register different lists. The
  // git revision names the source; the executable's digest tells apart two
  // builds of one uncommitted ("-dirty") tree.
  fields.emplace_back("collbench build (git revision)", build_git_revision());
  fields.emplace_back("collbench executable (FNV-1a of /proc/self/exe)", executable_digest());
  return compare_configurations(world, fields);
}

// --list-providers and --list-algorithms print on rank 0 and end the run
// (status 0); otherwise nothing.
std::optional<int> print_listing(const World& world, const Options& options) {
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
  return std::nullopt;
}

// The --workload specs expanded, each distinct workload once.
std::string read_workloads(RunSetup& setup) {
  const Options& options = setup.options;
  std::vector<Workload>& workloads = setup.workloads;
  std::set<std::string> workload_specs;
  try {
    for (const std::string& spec : options.workloads) {
      for (Workload& workload : parse_workloads(spec, dtype_size(options.dtype))) {
        if (workload_specs.insert(workload.spec).second) workloads.push_back(std::move(workload));
      }
    }
  } catch (const std::invalid_argument& invalid) {
    return fmt::format("--workload: {}", invalid.what());
  }
  if (options.families == std::vector<std::string>{"exchange"} && workloads.empty()) {
    return "--families exchange registers nothing without --workload SPEC";
  }
  return {};
}

// The CSV's transport column: the kind of the ranks' transport.
std::string transport_kind(const RunSetup& setup) {
  return std::string(setup.group ? setup.group->kind() : setup.transport->kind());
}

std::string open_transport(const World& world, RunSetup& setup) {
  const Options& options = setup.options;
  if (const SingleProcessTransport* single = find_single_process_transport(options.transport)) {
    try {
      setup.group = single->make_group(options);
    } catch (const std::exception& failure) {
      return fmt::format("--transport {} --ranks {}: {}", options.transport, options.ranks,
                         failure.what());
    }
    return {};
  }
  try {
#ifdef COLLBENCH_HAVE_OFI
    // The file bootstrap exchanges the libfabric transport's addresses.
    if (world.bootstrap) {
      setup.transport = std::make_unique<InstrumentedTransport>(
          std::make_unique<OfiTransport>(*world.bootstrap, options.ofi_provider));
    }
#endif
    if (!setup.transport) {
      setup.transport = make_transport({options.transport, options.ofi_provider, MPI_COMM_WORLD});
    }
    setup.transport->set_timeout(start_up_timeout(options, world.size));
  } catch (const std::exception& failure) {
    return fmt::format(
        "--transport {}{}: {}", options.transport,
        options.ofi_provider.empty() ? "" : " --ofi-provider " + options.ofi_provider,
        failure.what());
  }
  return {};
}

// What Google Benchmark appends to each registered name: an explicit
// Repetitions(1) (--interleave) shows as "repeats:1".
std::string registered_name_suffix(const Options& options) {
  return options.interleave ? "/repeats:1/manual_time" : "/manual_time";
}

// The benchmarks of this configuration, and how many of them
// --benchmark_filter selects: an error when there are none.
std::string plan_benchmarks(const World& world, RunSetup& setup) {
  const Options& options = setup.options;
  CasePlan& plan = setup.plan;
  try {
    plan = plan_cases(options, setup.workloads, transport_kind(setup), world.size,
                      agreed_memory_limit(world, setup.metadata), setup.metadata.rank_nodes);
  } catch (const UsageError& usage) {
    return usage.what();
  }
  const bool trains = std::any_of(plan.cases.begin(), plan.cases.end(), [](const auto& entry) {
    return entry.family == &train_family();
  });
  // Ranks of one process have no MPI (the sim transport's train runs in
  // one actor per rank, without a thread).
  if (trains && find_single_process_transport(options.transport) == nullptr &&
      world.thread_level < MPI_THREAD_SERIALIZED) {
    return fmt::format(
        "--families train runs each bucket's exchange on a thread of its own and needs "
        "MPI_THREAD_SERIALIZED; this MPI library provides thread level {} (0 single, 1 "
        "funneled, 2 serialized, 3 multiple)",
        world.thread_level);
  }
  const std::string name_suffix = registered_name_suffix(options);
  try {
    setup.selected = count_selected(plan, name_suffix);
    if (plan.cases.empty()) {
      return "nothing to run: no family and algorithm of this configuration can run here" +
             (plan.notes.empty() ? std::string()
                                 : " (" + fmt::format("{}", fmt::join(plan.notes, "; ")) + ")");
    }
    if (setup.selected == 0) {
      return fmt::format(
          "--benchmark_filter={} selects none of the {} benchmarks (names look like "
          "{}{})",
          benchmark::GetBenchmarkFilter(), plan.cases.size(), plan.cases.front().name, name_suffix);
    }
    // Written at the end: refused now rather than as an empty trace then.
    if (!options.timeline_path.empty() && count_selected(plan, name_suffix, &train_family()) == 0) {
      return fmt::format(
          "--timeline {}: --benchmark_filter={} selects no train benchmark, so the timeline would "
          "be empty; select a train/... benchmark or leave out --timeline",
          options.timeline_path, benchmark::GetBenchmarkFilter());
    }
  } catch (const UsageError& usage) {
    return usage.what();
  }
  return {};
}

void print_notes(const World& world, const CasePlan& plan) {
  if (world.rank == 0) {
    for (const std::string& note : plan.notes) fmt::print(stderr, "collbench: note: {}\n", note);
    std::fflush(stderr);
  }
}

// --benchmark_list_tests only prints the names: no CSV is created (a dry
// run, as scripts/run.sh makes one to check its flags), but the path is
// checked as for a run.
bool lists_tests_only(const std::vector<std::pair<std::string, std::string>>& benchmark_flags) {
  return std::any_of(benchmark_flags.begin(), benchmark_flags.end(), [](const auto& flag) {
    return flag.first == "--benchmark_list_tests" && flag_is_true(flag.second);
  });
}

// Rank 0's --csv, opened (or, for a dry run, only its path checked).
std::string open_csv(const World& world, RunSetup& setup) {
  const Options& options = setup.options;
  if (world.rank != 0 || options.csv_path.empty()) return {};
  if (std::string problem = csv_path_problem(options); !problem.empty()) return problem;
  if (setup.list_only) {
    if (std::filesystem::exists(options.csv_path) && !options.append && !options.force) {
      return fmt::format(
          "--csv: {} already exists; choose another path, or pass --append or "
          "--force",
          options.csv_path);
    }
    return {};
  }
  try {
    const ExistingFile policy = options.append  ? ExistingFile::append
                                : options.force ? ExistingFile::overwrite
                                                : ExistingFile::refuse;
    setup.csv = std::make_unique<CsvWriter>(options.csv_path, csv_columns(), policy);
  } catch (const std::exception& failure) {
    return fmt::format("--csv: {}{}", failure.what(),
                       options.append || options.force ? "" : " (use --append or --force)");
  }
  return {};
}

// Every step up to the first benchmark, each ending in an agreement: a bad
// input on any rank ends the run on all of them (status 2) before any
// benchmark runs. Returns the exit status when the run ends here, nothing
// when the benchmarks are to run.
std::optional<int> set_up(World& world, int argc, char** argv, const std::vector<std::string>& args,
                          RunSetup& setup) {
  std::string error = read_benchmark_flags(args, setup);
  setup.out = benchmark_out_of(args);
  const std::vector<std::string> remaining =
      initialize_google_benchmark(world, argc, argv, args, setup.out, error.empty());
  if (error.empty()) error = parse_and_check_options(world, remaining, args, setup);
  if (!all_ranks_ok(world, error)) return kUsageStatus;
  if (!all_ranks_ok(world, configuration_problem(world, setup))) return kUsageStatus;
  if (const std::optional<int> listed = print_listing(world, setup.options)) return listed;
  if (!all_ranks_ok(world, read_workloads(setup))) return kUsageStatus;
  if (!all_ranks_ok(world, open_transport(world, setup))) return kUsageStatus;
  if (world.mpi) {
    setup.metadata =
        gather_metadata(world.comm, setup.options.run_id, setup.options.transport == "ofi");
    setup.transport->set_nodes(setup.metadata.rank_nodes);
  } else if (world.bootstrap) {
    setup.metadata = bootstrap_metadata(*world.bootstrap, setup.options.run_id);
    setup.transport->set_nodes(setup.metadata.rank_nodes);
  } else {
    // The group's transports know their placement (one node for threads).
    setup.metadata = local_metadata(world.size, setup.options.run_id);
    describe_simulation(*setup.group, setup.options.sim, setup.metadata);
  }
  if (!all_ranks_ok(world, plan_benchmarks(world, setup))) return kUsageStatus;
  print_notes(world, setup.plan);
  setup.list_only = lists_tests_only(setup.benchmark_flags);
  if (!all_ranks_ok(world, open_csv(world, setup))) return kUsageStatus;
  return std::nullopt;
}

// Registers every case once per round (--interleave), timed by `runner`.
void register_benchmarks(CasePlan& plan, Runner& runner, int rounds, bool interleave,
                         bool report_aggregates_only) {
  for (int round = 0; round < rounds; ++round) {
    for (BenchmarkCase& entry : plan.cases) {
      benchmark::internal::Benchmark* registered = benchmark::RegisterBenchmark(
          entry.name.c_str(),
          [&runner, &entry, round](benchmark::State& state) { runner.run(state, entry, round); });
      registered->UseManualTime()->Unit(benchmark::kMicrosecond);
      registered->ReportAggregatesOnly(report_aggregates_only)->DisplayAggregatesOnly(false);
      if (interleave) registered->Repetitions(1);
    }
  }
}

void add_run_context(const RunMetadata& metadata, const std::string& transport) {
  benchmark::AddCustomContext("collbench_run_id", metadata.run_id);
  benchmark::AddCustomContext("collbench_git_revision", metadata.git_revision);
  benchmark::AddCustomContext("collbench_ranks", std::to_string(metadata.ranks));
  benchmark::AddCustomContext("collbench_hosts", metadata.hosts);
  benchmark::AddCustomContext("collbench_mpi_library", metadata.mpi_library);
  benchmark::AddCustomContext("collbench_transport", transport);
}

// Rank 0's run: Google Benchmark's display (console or JSON) and the CSV rows.
void run_reporting(RunSetup& setup, Progress& progress, bool display_aggregates_only) {
  std::map<std::string, const BenchmarkCase*> cases_by_name;
  for (BenchmarkCase& entry : setup.plan.cases) cases_by_name.emplace(entry.name, &entry);
  RowContext context;
  context.transport = transport_kind(setup);
  context.provider = setup.transport ? setup.transport->provider() : std::string();
  context.reduce_kernel = std::string(active_reduce_variant());
  if (setup.options.has_family("gemm")) context.blas = blas_description();
  context.options = &setup.options;
  context.metadata = &setup.metadata;
  // Google Benchmark's console reporter prints the run's context (CPU,
  // caches, collbench_* metadata) on stderr; it belongs with the table, and
  // stderr is kept for notes, progress and errors.
  benchmark::BenchmarkReporter* display = benchmark::CreateDefaultDisplayReporter();
  display->SetErrorStream(&std::cout);
  RankZeroReporter reporter(display, setup.csv.get(), std::move(cases_by_name), context, progress,
                            display_aggregates_only);
  benchmark::RunSpecifiedBenchmarks(&reporter);
}

// Registers the benchmarks and runs them in lock-step on every rank.
void run_benchmarks(const World& world, const std::vector<std::string>& args, RunSetup& setup) {
  const Options& options = setup.options;
  const bool show_progress =
      !options.quiet &&
      (options.progress || options.progress_lines_seconds > 0 || isatty(STDERR_FILENO) != 0);
  Progress progress(world.rank == 0 && show_progress,
                    setup.selected * static_cast<std::size_t>(setup.rounds),
                    options.progress_lines_seconds);
  std::optional<Runner> runner_storage;
  if (setup.group) {
    runner_storage.emplace(options, *setup.group, progress);
  } else if (!world.mpi) {
    runner_storage.emplace(options, *setup.transport, progress);
  } else {
    runner_storage.emplace(options, *setup.transport, world.comm, progress);
  }
  Runner& runner = *runner_storage;
  // A simulation's times are the model's, whatever else the machine runs.
  if (options.transport != "sim") runner.watch_load(setup.metadata.ranks_on_my_node);
  // The aggregates-only flags would keep every repetition's run from the
  // reporter, and so from the CSV. Each benchmark is registered to hand rank
  // 0's reporter every run instead; the reporter shows only the aggregates on
  // the console itself, and --benchmark_out keeps what the flags ask for.
  const bool report_aggregates_only =
      benchmark_flag_set(args, "--benchmark_report_aggregates_only");
  const bool display_aggregates_only =
      report_aggregates_only || benchmark_flag_set(args, "--benchmark_display_aggregates_only");
  register_benchmarks(setup.plan, runner, setup.rounds, options.interleave, report_aggregates_only);
  add_run_context(setup.metadata, transport_kind(setup));
  if (world.rank == 0) {
    run_reporting(setup, progress, display_aggregates_only);
  } else {
    NullReporter null_reporter;
    benchmark::RunSpecifiedBenchmarks(&null_reporter);
  }
  runner.release();
  benchmark::Shutdown();
}

// After benchmark::Shutdown(), on rank 0: the --benchmark_out file put in
// place. Returns the error, or empty.
std::string finish_outputs(const World& world, const RunSetup& setup) {
  if (world.rank != 0) return {};
  if (setup.list_only) {
    // Google Benchmark opens the file even for a list of names, and writes
    // nothing into it: a dry run leaves no file.
    std::remove(partial_benchmark_out(setup.out.target).c_str());
    keep_file_of_normal_end();
    return {};
  }
  if (const std::string timeline_error = write_timeline(setup.options); !timeline_error.empty()) {
    return timeline_error;
  }
  if (setup.out.target.empty()) return {};
  const std::string out_error = finish_benchmark_out(setup.out.target, setup.out.format);
  keep_file_of_normal_end();
  return out_error;
}

// --check's verdict, the same on every rank: status 1 when any benchmark
// had a wrong element in any round.
int check_status(const World& world, const CasePlan& plan) {
  std::vector<std::string> failed;
  for (const BenchmarkCase& entry : plan.cases) {
    if (entry.wrong_elements_all_rounds > 0) {
      failed.push_back(fmt::format("{} ({} wrong)", entry.name, entry.wrong_elements_all_rounds));
    }
  }
  if (failed.empty()) return 0;
  if (world.rank == 0) {
    fmt::print(stderr, "collbench: --check found wrong results in {} benchmark{}: {}\n",
               failed.size(), failed.size() == 1 ? "" : "s", fmt::join(failed, ", "));
  }
  return kFailureStatus;
}

int run(World& world, int argc, char** argv) {
  const std::vector<std::string> args(argv + 1, argv + argc);
  if (asks_for_help(args)) {
    if (world.rank == 0) print_help();
    return 0;
  }
  RunSetup setup;
  if (const std::optional<int> status = set_up(world, argc, argv, args, setup)) return *status;
  run_benchmarks(world, args, setup);
  if (const std::string out_error = finish_outputs(world, setup); !out_error.empty()) {
    fmt::print(stderr, "collbench: {}\n", out_error);
    return kFailureStatus;
  }
  return check_status(world, setup.plan);
}

}  // namespace
}  // namespace collbench::harness

namespace collbench::harness {
namespace {

// The value of `option` on the command line, read before anything else
// (CLI11 parses later, after MPI_Init when MPI is needed): the last one
// given, as CLI11 takes it; "mpi" when none is.
std::string requested(int argc, char** argv, std::string_view option) {
  std::string value = "mpi";
  const std::string with_equals = std::string(option) + "=";
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg(argv[i]);
    if (arg == option && i + 1 < argc) value = argv[++i];
    if (arg.starts_with(with_equals)) value = arg.substr(with_equals.size());
  }
  return value;
}

// MPI is initialized only when the transport or the bootstrap is MPI's.
bool needs_mpi(int argc, char** argv) {
  return find_single_process_transport(requested(argc, argv, "--transport")) == nullptr &&
         requested(argc, argv, "--bootstrap") == "mpi";
}

// Without MPI: every rank in this process, or this process one rank of a
// job that meets through --bootstrap. Under a launcher (refused) only the
// launcher's rank 0 speaks.
int run_without_mpi(int argc, char** argv) {
  World world;
  world.mpi = false;
  for (const char* variable : kLauncherRankVariables) {
    if (const char* rank = std::getenv(variable); rank != nullptr) world.rank = std::atoi(rank);
  }
  try {
    return run(world, argc, argv);
  } catch (const std::exception& failure) {
    fmt::print(stderr, "collbench: {}\n", failure.what());
    std::fflush(stderr);
    abort_job();
  }
}

}  // namespace
}  // namespace collbench::harness

int main(int argc, char** argv) {
  collbench::harness::set_process_signals();
  collbench::use_mpi_library_collectives();
  if (!collbench::harness::needs_mpi(argc, argv)) {
    return collbench::harness::run_without_mpi(argc, argv);
  }
  collbench::harness::World world;
  if (MPI_Init_thread(&argc, &argv, MPI_THREAD_SERIALIZED, &world.thread_level) != MPI_SUCCESS) {
    std::fputs("collbench: MPI_Init_thread failed\n", stderr);
    return 1;
  }
  int status = 0;
  try {
    collbench::hold_mpich_forced_algorithms();
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
