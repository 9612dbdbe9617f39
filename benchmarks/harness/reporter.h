// Reporters: rank 0 shows Google Benchmark's usual output and writes one
// tidy CSV row per finished run; every other rank reports nothing.
//
// Rows come from the final Run objects Google Benchmark hands the reporter,
// never from inside a benchmark function: it calls the function several
// times while it settles the iteration count, and only the last call is the
// run. Aggregates (mean/median/stddev over repetitions) are left to Google
// Benchmark's own output; the CSV keeps one row per repetition.
#pragma once

#include <benchmark/benchmark.h>

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "collbench/core/csv.h"
#include "families.h"
#include "metadata.h"
#include "options.h"
#include "progress.h"

namespace collbench::harness {

// Prints nothing: the display and file reporter of ranks other than 0. Its
// streams discard too, so --benchmark_list_tests prints on rank 0 only.
class NullReporter final : public benchmark::BenchmarkReporter {
 public:
  NullReporter();
  bool ReportContext(const Context& context) override;
  void ReportRuns(const std::vector<Run>& runs) override;

 private:
  std::ostream sink_{nullptr};
};

// The CSV's columns, in order (documented in results/README.md).
const std::vector<std::string>& csv_columns();

// What every row repeats: the configuration and the run's metadata.
struct RowContext {
  std::string transport;  // transport kind
  std::string provider;   // libfabric provider, empty for MPI
  std::string reduce_kernel;
  std::string blas;  // gemm rows: blas_description()
  const Options* options = nullptr;
  const RunMetadata* metadata = nullptr;
};

// What rows of this run written before a row tell it: the rate of the
// latest local/gemm/peak row, which gemm rows' efficiency is against (0:
// none yet, the efficiency is left empty), and each benchmark's latest
// median, from which a train row takes its compute-only (train/none) and
// communication-only (exchange) times.
struct EarlierRows {
  double peak_gflops = 0;
  std::map<std::string, double> median_us;  // by benchmark name
  // The latest median of `name`; 0 when it has not run (or failed).
  double median(const std::string& name) const;
};

// A train row's shares: compute alone, communication alone (0: unknown),
// and what of the communication the iteration did not hide.
struct TrainShares {
  double compute_us = 0;
  double communication_us = 0;
  double exposed_us = 0;  // iteration − compute alone
  double overlap = 0;     // 1 − exposed / communication alone
};
// For a train row (not train/none) whose train/none and exchange rows ran
// earlier in the run; nothing otherwise.
std::optional<TrainShares> train_shares(const BenchmarkCase& benchmark_case, double iteration_us,
                                        const EarlierRows& earlier);

// One CSV row for one run of `benchmark_case`.
std::vector<std::string> csv_row(const BenchmarkCase& benchmark_case,
                                 const benchmark::BenchmarkReporter::Run& run,
                                 const RowContext& context, const std::string& utc_time,
                                 const EarlierRows& earlier = {});
// A gemm run's GFLOP/s at its median (0 without one).
double gemm_gflops(const BenchmarkCase& benchmark_case,
                   const benchmark::BenchmarkReporter::Run& run);

// Rank 0's display reporter: forwards everything to `display` (Google
// Benchmark's console or --benchmark_format reporter) and, when `csv` is
// set, writes a row per non-aggregate run as soon as it is reported. With
// `display_aggregates_only` (the --benchmark_*_aggregates_only flags, which
// main keeps from withholding runs from this reporter) `display` gets a
// benchmark's aggregates only, or its runs when it has none, as Google
// Benchmark itself would do.
class RankZeroReporter final : public benchmark::BenchmarkReporter {
 public:
  // `display` is not owned (Google Benchmark's CreateDefaultDisplayReporter
  // keeps the one it makes in a static).
  RankZeroReporter(benchmark::BenchmarkReporter* display, CsvWriter* csv,
                   std::map<std::string, const BenchmarkCase*> cases, RowContext context,
                   Progress& progress, bool display_aggregates_only = false);
  bool ReportContext(const Context& context) override;
  void ReportRuns(const std::vector<Run>& runs) override;
  void Finalize() override;

  std::size_t rows_written() const { return rows_written_; }

 private:
  void display(const std::vector<Run>& runs);
  void display_held_runs();

  benchmark::BenchmarkReporter* display_;
  CsvWriter* csv_;
  std::map<std::string, const BenchmarkCase*> cases_;
  RowContext context_;
  Progress& progress_;
  std::size_t rows_written_ = 0;
  // --interleave: rounds of each benchmark reported so far. Google Benchmark
  // numbers every round's single repetition 0; the CSV numbers the rounds.
  std::map<std::string, std::int64_t> rounds_reported_;
  bool display_aggregates_only_;
  // display_aggregates_only_: the last benchmark's runs, shown only if no
  // aggregates follow (Google Benchmark reports runs, then aggregates).
  std::vector<Run> held_runs_;
  EarlierRows earlier_;
};

}  // namespace collbench::harness
