// collbench's own flags converted and validated, the timeouts, and the
// configuration every rank compares; see options.h.
#include "options.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <set>

#include "cli_checks.h"
#include "collbench/catalog/catalog.h"
#include "collbench/catalog/sizes.h"
#include "collbench/collectives/algorithm.h"
#include "collbench/collectives/collective.h"
#include "collbench/collectives/mpich_tuned.h"
#include "collbench/collectives/ompi_tuned.h"
#include "collbench/core/columns.h"
#include "collbench/core/csv.h"
#include "collbench/transport/transport_factory.h"
#include "family_registry.h"
#include "options_cli.h"
#include "single_process.h"

namespace collbench::harness {

std::string_view to_string(SyncMode mode) {
  switch (mode) {
    case SyncMode::barrier:
      return "barrier";
    case SyncMode::none:
      return "none";
    case SyncMode::window:
      return "window";
  }
  return "unknown";
}
namespace {

// --bootstrap, --rank and --ranks, which go together: the file bootstrap
// serves the libfabric transport's address exchange.
void validate_bootstrap(const Options& options) {
  if (options.bootstrap == "mpi") {
    if (options.rank >= 0) {
      throw UsageError(
          fmt::format("--rank {} goes with --bootstrap {}DIR; under mpirun the "
                      "launcher numbers the ranks",
                      options.rank, kFileBootstrapPrefix));
    }
    return;
  }
  if (options.bootstrap_folder().empty()) {
    throw UsageError(fmt::format("unknown --bootstrap '{}'; accepted: mpi, {}DIR",
                                 options.bootstrap, kFileBootstrapPrefix));
  }
  if (options.transport != "ofi") {
    throw UsageError(
        fmt::format("--bootstrap {} exchanges the addresses of --transport ofi; --transport {} {}",
                    options.bootstrap, options.transport,
                    options.transport == "mpi" ? "starts under mpirun" : "needs no bootstrap"));
  }
  if (options.rank < 0 || options.ranks == 0) {
    throw UsageError(fmt::format(
        "--bootstrap {} needs --rank R and --ranks N: one process per rank, started alike",
        options.bootstrap));
  }
  if (options.rank >= options.ranks) {
    throw UsageError(fmt::format("--rank {}: the job has --ranks {}; accepted: 0 to {}",
                                 options.rank, options.ranks, options.ranks - 1));
  }
}

void validate_algorithms(const RawOptions& raw, Options& options) {
  const std::vector<std::string> names = split_list(raw.algorithms);
  if (names.empty()) {
    throw UsageError(fmt::format("--algorithms is empty; accepted: all, or a list of {}",
                                 algorithms_by_collective()));
  }
  options.all_algorithms = names.size() == 1 && names[0] == "all";
  if (options.all_algorithms) return;
  std::set<std::string> seen;
  for (const std::string& name : names) {
    if (!any_collective_has(name)) {
      throw UsageError(fmt::format("unknown algorithm '{}' in --algorithms; accepted: all, or {}",
                                   name, algorithms_by_collective()));
    }
    if (seen.insert(name).second) options.algorithms.push_back(name);
  }
}

void validate_sizes(const RawOptions& raw, Options& options) {
  options.sizes_given = raw.sizes_given;
  if (options.sizes_given && raw.sizes.find_first_not_of(" \t,") == std::string::npos) {
    throw UsageError(
        "--sizes is empty; accepted: comma-separated sizes and ranges, e.g. 8B:64MiB or "
        "4KiB,1MiB (see collbench --help)");
  }
  if (options.sizes_given) options.sizes_text = raw.sizes;
  try {
    options.sizes = parse_size_list(options.sizes_text);
  } catch (const std::invalid_argument& error) {
    throw UsageError(fmt::format("--sizes: {}", error.what()));
  }
  const std::size_t element_bytes = dtype_size(options.dtype);
  for (const std::uint64_t size : options.sizes) {
    if (size % element_bytes != 0) {
      throw UsageError(fmt::format(
          "--sizes: {} bytes is not a whole number of {} elements ({} bytes each); use sizes "
          "that are multiples of {}",
          size, to_string(options.dtype), element_bytes, element_bytes));
    }
  }
}

void validate_segment(const RawOptions& raw, Options& options) {
  if (raw.segment.empty()) return;
  try {
    options.segment_bytes = parse_byte_size(raw.segment);
  } catch (const std::invalid_argument& error) {
    throw UsageError(fmt::format("--segment: {}", error.what()));
  }
  const std::size_t element_bytes = dtype_size(options.dtype);
  if (options.segment_bytes % element_bytes != 0) {
    throw UsageError(fmt::format(
        "--segment: {} bytes is not a whole number of {} elements ({} bytes each); use a "
        "multiple of {}",
        options.segment_bytes, to_string(options.dtype), element_bytes, element_bytes));
  }
}

int parse_gemm_batch(const std::string& text) {
  int batch = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), batch);
  if (error != std::errc() || end != text.data() + text.size() || batch < 1 ||
      batch > kMaxGemmBatch) {
    throw UsageError(fmt::format(
        "--gemm-batches: '{}' is not a batch; accepted: whole numbers from 1 to {}, comma-"
        "separated, or {} (e.g. 1:256)",
        text, kMaxGemmBatch, kGemmBatchRange));
  }
  return batch;
}

// --gemm-batches: "1,3,8" as given, "A:B" as kGemmBatchRange says.
void validate_gemm(const RawOptions& raw, Options& options) {
  for (const std::string& item : split_list(raw.gemm_batches)) {
    const std::size_t colon = item.find(':');
    if (colon == std::string::npos) {
      options.gemm_batches.push_back(parse_gemm_batch(item));
      continue;
    }
    const int first = parse_gemm_batch(item.substr(0, colon));
    const int last = parse_gemm_batch(item.substr(colon + 1));
    if (last < first) {
      throw UsageError(fmt::format("--gemm-batches: range {} ends below its start", item));
    }
    for (int batch = first; batch <= last; batch *= 2) options.gemm_batches.push_back(batch);
  }
  if (options.gemm_batches.empty()) {
    throw UsageError("--gemm-batches is empty; accepted: e.g. 1:256 or 1,4,32");
  }
  std::sort(options.gemm_batches.begin(), options.gemm_batches.end());
  options.gemm_batches.erase(std::unique(options.gemm_batches.begin(), options.gemm_batches.end()),
                             options.gemm_batches.end());
  if (raw.gemm_models_given && split_list(raw.gemm_models).empty()) {
    throw UsageError(fmt::format(
        "--gemm-models is empty; accepted: comma-separated catalog models, e.g. {} (leave it out "
        "for the --workload models, else those)",
        fmt::join(kDefaultGemmModels, ",")));
  }
  for (const std::string& name : split_list(raw.gemm_models)) {
    try {
      static_cast<void>(find_model(name));
    } catch (const std::invalid_argument& error) {
      throw UsageError(fmt::format("--gemm-models: {}", error.what()));
    }
    if (std::find(options.gemm_models.begin(), options.gemm_models.end(), name) ==
        options.gemm_models.end()) {
      options.gemm_models.push_back(name);
    }
  }
  const bool gemm_options =
      raw.gemm_models_given || raw.gemm_batches != kDefaultGemmBatches || options.blas_threads != 1;
  if (gemm_options && !options.has_family("gemm")) {
    throw UsageError(
        "--gemm-models, --gemm-batches and --blas-threads only act on --families gemm; add gemm "
        "to --families");
  }
}

void validate_train(Options& options) {
  if (!(options.compute_scale > 0 && options.compute_scale <= 1)) {
    throw UsageError(
        fmt::format("--compute-scale {} is not a fraction of the compute; accepted: 0 < X <= 1",
                    options.compute_scale));
  }
  const bool train_options = options.train_batch != kDefaultTrainBatch ||
                             options.compute_scale != 1 || !options.timeline_path.empty();
  if (train_options && !options.has_family("train")) {
    throw UsageError(
        "--train-batch, --compute-scale and --timeline only act on --families train; add train "
        "to --families");
  }
  if (options.has_family("train") && options.workloads.empty()) {
    throw UsageError(
        "--families train needs a --workload whose gradients it exchanges, e.g. resnet50:ddp");
  }
}

void validate_families(const RawOptions& raw, Options& options) {
  options.families = select_families(split_list(raw.families));
}

}  // namespace

void validate_run_id(const std::string& run_id) {
  const bool valid = std::all_of(run_id.begin(), run_id.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '.' || c == '_' || c == '-';
  });
  if (!valid) {
    throw UsageError(fmt::format(
        "--run-id '{}' has characters other than letters, digits, '.', '_' and '-'", run_id));
  }
}

std::chrono::milliseconds timeout_milliseconds(double seconds) {
  // Never to 0 from above 0: 0 ms means "wait forever" to the transports.
  const std::int64_t milliseconds = std::llround(seconds * 1000.0);
  return std::chrono::milliseconds(seconds > 0 ? std::max<std::int64_t>(milliseconds, 1) : 0);
}

double default_timeout_seconds(std::uint64_t bytes, int ranks) {
  constexpr double kSlowestBytesPerSecond = 10e6;
  const double seconds =
      60.0 + 2.0 * std::max(ranks - 1, 1) * static_cast<double>(bytes) / kSlowestBytesPerSecond;
  return std::min(seconds, cli::kMaxTimeoutSeconds);
}

std::chrono::milliseconds start_up_timeout(const Options& options, int ranks) {
  return timeout_milliseconds(options.timeout_seconds < 0 ? default_timeout_seconds(0, ranks)
                                                          : options.timeout_seconds);
}

std::string Options::bootstrap_folder() const {
  return bootstrap.starts_with(kFileBootstrapPrefix)
             ? bootstrap.substr(std::string_view(kFileBootstrapPrefix).size())
             : std::string();
}

bool Options::has_family(const std::string& family) const {
  return std::find(families.begin(), families.end(), family) != families.end();
}

std::vector<std::string> split_list(const std::string& text) {
  std::vector<std::string> items;
  std::size_t start = 0;
  while (start <= text.size()) {
    std::size_t end = text.find(',', start);
    if (end == std::string::npos) end = text.size();
    std::string item = text.substr(start, end - start);
    const auto first = item.find_first_not_of(" \t");
    const auto last = item.find_last_not_of(" \t");
    if (first != std::string::npos) items.push_back(item.substr(first, last - first + 1));
    start = end + 1;
  }
  return items;
}

namespace {

// --csv names the run's CSV file; bare, it asks --list-algorithms for CSV.
void validate_listing(bool csv_given, Options& options) {
  const bool bare_csv = csv_given && options.csv_path.empty();
  if (!options.list_algorithms) {
    if (bare_csv) {
      throw UsageError("--csv needs a PATH (a bare --csv only goes with --list-algorithms)");
    }
    return;
  }
  if (!options.csv_path.empty()) {
    throw UsageError(fmt::format(
        "--list-algorithms prints to stdout: give --csv without a PATH for its CSV form and "
        "redirect it, instead of --csv {}",
        options.csv_path));
  }
  options.list_algorithms_csv = bare_csv;
}

}  // namespace

Options parse_options(const std::vector<std::string>& args) {
  App app;
  // CLI11 parses a reversed vector (it pops arguments from the back).
  std::vector<std::string> reversed(args.rbegin(), args.rend());
  try {
    app.app.parse(reversed);
  } catch (const CLI::ParseError& error) {
    throw UsageError(fmt::format("{} (see collbench --help)", error.what()));
  }
  Options& options = app.options;
  app.raw.sizes_given = app.app.count("--sizes") > 0;
  options.families_given = app.app.count("--families") > 0;
  app.raw.gemm_models_given = app.app.count("--gemm-models") > 0;
  validate_listing(app.app.count("--csv") > 0, options);
  const RawOptions& raw = app.raw;

  const auto dtype = parse_dtype(raw.dtype);
  if (!dtype) {
    throw UsageError(fmt::format("unknown --dtype '{}'; accepted: {}", raw.dtype, dtype_names()));
  }
  options.dtype = *dtype;
  const auto op = parse_reduce_op(raw.op);
  if (!op) {
    throw UsageError(fmt::format("unknown --op '{}'; accepted: {}", raw.op, reduce_op_names()));
  }
  options.op = *op;
  const auto sync = std::find_if(std::begin(kSyncModes), std::end(kSyncModes),
                                 [&](SyncMode mode) { return to_string(mode) == raw.sync; });
  if (sync == std::end(kSyncModes)) {
    std::vector<std::string_view> names;
    for (const SyncMode mode : kSyncModes) names.push_back(to_string(mode));
    throw UsageError(
        fmt::format("unknown --sync '{}'; accepted: {}", raw.sync, fmt::join(names, ", ")));
  }
  options.sync = *sync;
  // A simulated rank's clock is the simulation's, one for every rank, and
  // a busy wait for a start time would never let it advance.
  if (options.sync == SyncMode::window && options.transport == "sim") {
    throw UsageError(
        "--sync window cannot be used with --transport sim: the simulated ranks share one "
        "clock and start every call together already");
  }
  const std::vector<std::string> kinds = accepted_transports();
  if (std::find(kinds.begin(), kinds.end(), options.transport) == kinds.end()) {
    throw UsageError(fmt::format("unknown --transport '{}'; accepted by this build: {}{}",
                                 options.transport, fmt::join(kinds, ", "),
                                 options.transport == "ofi" ? " (built without libfabric)" : ""));
  }
  if (!options.ofi_provider.empty() && options.transport != "ofi") {
    throw UsageError(fmt::format("--ofi-provider '{}' needs --transport ofi (got --transport {})",
                                 options.ofi_provider, options.transport));
  }
  validate_bootstrap(options);
  validate_algorithms(raw, options);
  validate_sizes(raw, options);
  validate_segment(raw, options);
  validate_families(raw, options);
  validate_gemm(raw, options);
  validate_train(options);
  validate_run_id(options.run_id);
  for (const char* flag : kSamplingFlags) {
    if (app.app.get_option_no_throw(flag) != nullptr && app.app.count(flag) > 0) {
      options.sampling_flags_given.emplace_back(flag);
    }
  }
  if (options.debug_slow_us > 0 && options.debug_slow_rank < 0) {
    throw UsageError("--debug-slow-us needs --debug-slow-rank R to say which rank is slow");
  }
  if (options.debug_late_rank >= 0 && options.sync != SyncMode::window) {
    throw UsageError("--debug-late-rank acts on --sync window's start times; add --sync window");
  }
  if (options.debug_fault_after > 0 && options.debug_stuck_rank < 0 &&
      options.debug_crash_rank < 0) {
    throw UsageError(
        "--debug-fault-after needs --debug-stuck-rank R or --debug-crash-rank R to say which rank "
        "fails");
  }
  if (options.debug_stuck_rank >= 0 && options.timeout_seconds == 0) {
    throw UsageError(
        "--debug-stuck-rank with --timeout 0 would hang for ever (nothing ends the other ranks' "
        "wait); give a --timeout in seconds, or leave it out for the default");
  }
  if (options.debug_corrupt_elements > 0 && !options.check) {
    throw UsageError("--debug-corrupt-elements only acts on the --check calls; add --check");
  }
  // --force also overwrites an existing --benchmark_out, which main() sees
  // (Google Benchmark takes that flag out of these arguments).
  if (options.append && options.csv_path.empty()) throw UsageError("--append needs --csv PATH");
  return options;
}

void validate_for_ranks(const Options& options, int ranks) {
  if (options.debug_stuck_rank >= 0 && ranks < 2) {
    throw UsageError(
        "--debug-stuck-rank needs a job of 2 ranks or more: the other ranks are the ones that "
        "time out and name it, and on 1 rank the stuck rank would hang for ever");
  }
  const std::pair<const char*, int> named[] = {{"--debug-slow-rank", options.debug_slow_rank},
                                               {"--debug-stuck-rank", options.debug_stuck_rank},
                                               {"--debug-late-rank", options.debug_late_rank},
                                               {"--debug-crash-rank", options.debug_crash_rank}};
  for (const auto& [flag, rank] : named) {
    if (rank >= ranks) {
      throw UsageError(fmt::format("{} {}: the job has {} rank{}; accepted: 0 to {}", flag, rank,
                                   ranks, ranks == 1 ? "" : "s", ranks - 1));
    }
  }
}

std::vector<std::pair<std::string, std::string>> configuration_fields(
    const Options& options,
    const std::vector<std::pair<std::string, std::string>>& benchmark_flags) {
  std::vector<std::pair<std::string, std::string>> fields = {
      {"--algorithms",
       options.all_algorithms ? "all" : fmt::format("{}", fmt::join(options.algorithms, ","))},
      {"--library-algorithms", options.library_algorithms ? "yes" : "no"},
      {"--sizes", fmt::format("{}", fmt::join(options.sizes, ","))},
      {"--segment", std::to_string(options.segment_bytes)},
      {"--dtype", std::string(to_string(options.dtype))},
      {"--op", std::string(to_string(options.op))},
      {"--families", fmt::format("{}", fmt::join(options.families, ","))},
      {"--workload", fmt::format("{}", fmt::join(options.workloads, " "))},
      {"--gemm-models", fmt::format("{}", fmt::join(options.gemm_models, ","))},
      {"--gemm-batches", fmt::format("{}", fmt::join(options.gemm_batches, ","))},
      {"--blas-threads", std::to_string(options.blas_threads)},
      {"--train-batch", std::to_string(options.train_batch)},
      {"--compute-scale", fmt::format("{}", options.compute_scale)},
      {"--timeline", options.timeline_path},
      {"--transport", options.transport},
      {"--ranks", std::to_string(options.ranks)},
      {"--bootstrap", options.bootstrap},
      {"--ofi-provider", options.ofi_provider},
      {"--list-providers", options.list_providers ? "yes" : "no"},
      {"--list-algorithms",
       options.list_algorithms ? (options.list_algorithms_csv ? "csv" : "yes") : "no"},
      {"--check", options.check ? "yes" : "no"},
      {"--warmup", std::to_string(options.warmup)},
      {"--min-samples", std::to_string(options.min_samples)},
      {"--samples", std::to_string(options.samples)},
      {"--sync", std::string(to_string(options.sync))},
      {"--interleave", options.interleave ? "yes" : "no"},
      {"--timeout", options.timeout_seconds < 0 ? std::string("default")
                                                : fmt::format("{}", options.timeout_seconds)},
      {"--debug-slow-rank", std::to_string(options.debug_slow_rank)},
      {"--debug-slow-us", fmt::format("{}", options.debug_slow_us)},
      {"--debug-late-rank", std::to_string(options.debug_late_rank)},
      {"--debug-corrupt-elements", std::to_string(options.debug_corrupt_elements)},
      {"--debug-share-messages-from", std::to_string(options.debug_share_messages_from)},
      {"--debug-skip-connection-warmup", options.debug_skip_connection_warmup ? "yes" : "no"},
      {"--debug-stuck-rank", std::to_string(options.debug_stuck_rank)},
      {"--debug-crash-rank", std::to_string(options.debug_crash_rank)},
      {"--debug-fault-after", std::to_string(options.debug_fault_after)},
  };
  // Each Google Benchmark flag is a field of its own; main treats a flag
  // given on one rank only as a difference too.
  for (const auto& flag : benchmark_flags) fields.push_back(flag);
  return fields;
}

}  // namespace collbench::harness
