// Null and rank-0 reporters and the CSV row; see reporter.h.
#include "reporter.h"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

#include "collbench/core/columns.h"
#include "collbench/core/dtype.h"
#include "gemm_family.h"
#include "train_family.h"

namespace collbench::harness {
namespace {

std::string counter(const benchmark::BenchmarkReporter::Run& run, const std::string& name,
                    const char* format) {
  const auto found = run.counters.find(name);
  if (found == run.counters.end()) return "";
  return fmt::format(fmt::runtime(format), found->second.value);
}

// The rank_median_us column: the run's label without its kRankMedianLabel
// prefix; empty for a run without one (ping-pong, local on rank 0).
std::string rank_medians(const benchmark::BenchmarkReporter::Run& run) {
  const std::string_view label(run.report_label);
  if (!label.starts_with(kRankMedianLabel)) return "";
  return std::string(label.substr(kRankMedianLabel.size()));
}

// The loaded column: empty where the run has no load counters (load_watch.h).
std::string loaded(const benchmark::BenchmarkReporter::Run& run) {
  const auto found = run.counters.find("loaded");
  if (run.error_occurred || found == run.counters.end()) return "";
  return found->second.value > 0 ? "yes" : "no";
}

}  // namespace

NullReporter::NullReporter() {
  SetOutputStream(&sink_);
  SetErrorStream(&sink_);
}

// Returning false would skip the run on this rank alone and break lock-step.
bool NullReporter::ReportContext(const Context& context) {
  (void)context;
  return true;
}

void NullReporter::ReportRuns(const std::vector<Run>& runs) { (void)runs; }

const std::vector<std::string>& csv_columns() {
  static const std::vector<std::string> header = columns::names(columns::kCollbench);
  return header;
}

double EarlierRows::median(const std::string& name) const {
  const auto found = median_us.find(name);
  return found == median_us.end() ? 0 : found->second;
}

std::optional<TrainShares> train_shares(const BenchmarkCase& benchmark_case, double iteration_us,
                                        const EarlierRows& earlier) {
  if (benchmark_case.family != &train_family() || benchmark_case.compute_only) return std::nullopt;
  TrainShares shares;
  shares.compute_us =
      earlier.median(fmt::format("train/{}/{}", kComputeOnlyAlgorithm, benchmark_case.workload));
  shares.communication_us = earlier.median(
      fmt::format("exchange/{}/{}", benchmark_case.algorithm->name, benchmark_case.workload));
  if (shares.compute_us <= 0 || shares.communication_us <= 0) return std::nullopt;
  shares.exposed_us = iteration_us - shares.compute_us;
  shares.overlap = 1 - shares.exposed_us / shares.communication_us;
  return shares;
}

double gemm_gflops(const BenchmarkCase& benchmark_case,
                   const benchmark::BenchmarkReporter::Run& run) {
  const auto median = run.counters.find("median_us");
  if (median == run.counters.end() || median->second.value <= 0) return 0;
  return benchmark_case.flops() / (median->second.value * 1e3);
}

std::vector<std::string> csv_row(const BenchmarkCase& benchmark_case,
                                 const benchmark::BenchmarkReporter::Run& run,
                                 const RowContext& context, const std::string& utc_time,
                                 const EarlierRows& earlier) {
  const Options& options = *context.options;
  const RunMetadata& metadata = *context.metadata;
  const FamilyRunner& family = *benchmark_case.family;
  const bool collective = benchmark_case.collective != nullptr;
  const bool has_dtype = family.has_dtype();
  const bool local = !family.through_transport();
  // The op column is empty where nothing is reduced (p2p, memcpy, allgather).
  const bool reduces = has_dtype && (!collective || benchmark_case.reduces());
  const bool gemm = &family == &local_gemm_family();

  const std::uint64_t bytes = benchmark_case.bytes();
  std::string check = "skipped";
  std::string wrong;
  if (benchmark_case.checked) {
    check = benchmark_case.wrong_elements == 0 ? "ok" : "wrong";
    wrong = std::to_string(benchmark_case.wrong_elements);
  }
  const bool timed = !run.error_occurred;
  auto timing = [&](const std::string& name, const char* format) {
    return timed ? counter(run, name, format) : std::string();
  };
  const double gflops = gemm && timed ? gemm_gflops(benchmark_case, run) : 0;
  const double peak_gflops = earlier.peak_gflops;
  const std::optional<TrainShares> shares =
      timed ? train_shares(benchmark_case, run.counters.at("median_us").value, earlier)
            : std::nullopt;
  const auto share = [&](double TrainShares::*field, const char* format) {
    return shares ? fmt::format(fmt::runtime(format), (*shares).*field) : std::string();
  };

  std::vector<std::string> row = {
      benchmark_case.name,
      benchmark_case.family_column(),
      collective ? benchmark_case.collective_column() : "",
      local ? "local" : context.transport,
      local ? "" : context.provider,
      benchmark_case.algorithm_column(),
      std::to_string(metadata.ranks),
      std::to_string(metadata.ranks_per_node),
      std::to_string(metadata.nodes),
      metadata.map_by(),
      gemm        ? "f32"
      : has_dtype ? std::string(to_string(options.dtype))
                  : "",
      reduces ? std::string(to_string(options.op)) : "",
      std::to_string(bytes),
      gemm        ? std::to_string(bytes / sizeof(float))
      : has_dtype ? std::to_string(bytes / dtype_size(options.dtype))
                  : "",
      collective
          ? std::to_string(options.segment_bytes > 0 ? options.segment_bytes : kDefaultSegmentBytes)
          : "",
      benchmark_case.peer >= 0 ? std::to_string(benchmark_case.peer) : "",
      family.placement(benchmark_case, metadata),
      benchmark_case.workload,
      benchmark_case.model,
      benchmark_case.item,
      benchmark_case.multiplicity > 0 ? std::to_string(benchmark_case.multiplicity) : "",
      benchmark_case.batch > 0 ? std::to_string(benchmark_case.batch) : "",
      benchmark_case.pass,
      std::string(to_string(options.sync)),
      std::to_string(std::max<std::int64_t>(run.repetition_index, 0)),
      timed ? std::to_string(run.iterations) : "",
      timing("calls_per_sample", "{:.0f}"),
      timing("samples", "{:.0f}"),
      std::to_string(options.sample_floor()),
      timing("min_us", "{:.9g}"),
      timing("median_us", "{:.9g}"),
      timing("mean_us", "{:.9g}"),
      timing("p99_us", "{:.9g}"),
      timing("max_us", "{:.9g}"),
      timing("slowest_rank", "{:.0f}"),
      timing("slowest_rank_share", "{:.4g}"),
      timed ? rank_medians(run) : std::string(),
      timing("osu_avg_us", "{:.9g}"),
      timing("nccl_avg_us", "{:.9g}"),
      timing("window_us", "{:.6g}"),
      timing("clock_error_us", "{:.4g}"),
      timing("late_starts", "{:.0f}"),
      timing("algbw_GBps", "{:.6g}"),
      timing("busbw_GBps", "{:.6g}"),
      timing("sent_bytes_per_rank", "{:.0f}"),
      gemm ? fmt::format("{:.0f}", benchmark_case.flops()) : "",
      gemm && timed ? fmt::format("{:.6g}", gflops) : "",
      gemm && timed && peak_gflops > 0 ? fmt::format("{:.4g}", gflops / peak_gflops) : "",
      benchmark_case.compute_only && timed ? timing("median_us", "{:.9g}")
                                           : share(&TrainShares::compute_us, "{:.9g}"),
      share(&TrainShares::communication_us, "{:.9g}"),
      share(&TrainShares::exposed_us, "{:.9g}"),
      share(&TrainShares::overlap, "{:.4g}"),
      check,
      wrong,
      (local && !gemm) || collective ? context.reduce_kernel : "",
      gemm ? context.blas : "",
      timing("core_handoff_ns", "{:.1f}"),
      timing("load_seconds", "{:.2f}"),
      timing("other_cores", "{:.3f}"),
      timing("steal_cores", "{:.3f}"),
      timing("context_switches_per_s", "{:.0f}"),
      loaded(run),
      metadata.run_id,
      metadata.launch,
      utc_time,
      metadata.git_revision,
      metadata.hosts,
      metadata.mpi_library,
      metadata.libfabric_version,
      metadata.mpi_mca,
      metadata.simulation.platform,
      metadata.simulation.network,
      metadata.simulation.payload,
      metadata.simulation.alpha_us,
      metadata.simulation.beta_GBps,
      metadata.simulation.gamma_GBps,
      metadata.simulation.overhead_us,
      metadata.simulation.calibration,
      simulated_compute_source(benchmark_case)};
  if (row.size() != csv_columns().size()) {
    throw std::logic_error(
        fmt::format("CSV row has {} fields for {} columns", row.size(), csv_columns().size()));
  }
  return row;
}

RankZeroReporter::RankZeroReporter(benchmark::BenchmarkReporter* display, CsvWriter* csv,
                                   std::map<std::string, const BenchmarkCase*> cases,
                                   RowContext context, Progress& progress,
                                   bool display_aggregates_only)
    : display_(display),
      csv_(csv),
      cases_(std::move(cases)),
      context_(std::move(context)),
      progress_(progress),
      display_aggregates_only_(display_aggregates_only) {}

bool RankZeroReporter::ReportContext(const Context& context) {
  // Whatever the display reporter thinks, every rank must run: ranks other
  // than 0 have no way to learn that rank 0 skipped.
  display_->ReportContext(context);
  return true;
}

void RankZeroReporter::display(const std::vector<Run>& runs) {
  if (!display_aggregates_only_) {
    display_->ReportRuns(runs);
    return;
  }
  const bool aggregates = std::any_of(
      runs.begin(), runs.end(), [](const Run& run) { return run.run_type == Run::RT_Aggregate; });
  if (aggregates) {
    held_runs_.clear();
    display_->ReportRuns(runs);
    return;
  }
  display_held_runs();  // the previous benchmark had no aggregates
  held_runs_ = runs;
}

void RankZeroReporter::display_held_runs() {
  if (held_runs_.empty()) return;
  display_->ReportRuns(held_runs_);
  held_runs_.clear();
}

void RankZeroReporter::ReportRuns(const std::vector<Run>& runs) {
  progress_.clear();
  display(runs);
  if (csv_ == nullptr) return;
  for (const Run& run : runs) {
    if (run.run_type != Run::RT_Iteration) continue;
    const auto found = cases_.find(run.run_name.function_name);
    if (found == cases_.end()) {
      throw std::logic_error("no benchmark case named '" + run.run_name.function_name + "'");
    }
    Run row = run;
    if (context_.options != nullptr && context_.options->interleave) {
      row.repetition_index = rounds_reported_[run.run_name.function_name]++;
    }
    const BenchmarkCase& benchmark_case = *found->second;
    if (!run.error_occurred) {
      if (benchmark_case.pass == kGemmPeak) earlier_.peak_gflops = gemm_gflops(benchmark_case, run);
      const auto median = run.counters.find("median_us");
      if (median != run.counters.end()) {
        earlier_.median_us[benchmark_case.name] = median->second.value;
      }
    }
    csv_->write_row(csv_row(benchmark_case, row, context_, utc_now_iso8601(), earlier_));
    ++rows_written_;
  }
}

void RankZeroReporter::Finalize() {
  progress_.clear();
  display_held_runs();
  display_->Finalize();
}

}  // namespace collbench::harness
