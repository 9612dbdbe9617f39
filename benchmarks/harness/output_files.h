// The run's output files other than the CSV's rows: --csv's path,
// --benchmark_out (Google Benchmark's report, written to a temporary file and
// renamed into place once whole) and --timeline, each checked before
// anything runs and finished after the benchmarks.
#pragma once

#include <string>
#include <vector>

#include "options.h"

namespace collbench::harness {

// The report Google Benchmark writes to --benchmark_out: on rank 0 only,
// into partial_benchmark_out(target) until it is whole.
struct BenchmarkOut {
  std::string target;           // the --benchmark_out path (the last given), or empty
  std::string format = "json";  // --benchmark_out_format (the last given)
};

std::string csv_path_problem(const Options& options);

// --benchmark_out is written by Google Benchmark itself on rank 0, so its
// path is checked here as --csv's is: a folder, device or pipe is refused,
// and an existing file is kept unless --force (Google Benchmark cannot append
// a JSON document, so --append does not cover it).
std::string benchmark_out_problem(const std::vector<std::string>& args, const Options& options);

// The --benchmark_out path Google Benchmark will write (the last one given,
// as it reads them), or empty.
std::string benchmark_out_path(const std::vector<std::string>& args);

// The --benchmark_out file is written to a temporary path in the same
// folder and renamed over the target only once complete: Google Benchmark
// does not report a write that a full disk or `ulimit -f` cut short.
std::string partial_benchmark_out(const std::string& path);

// Whether the file Google Benchmark wrote is whole: a JSON report ends with
// its closing brace and a newline, the console and CSV formats with a
// newline (a cheap check; a stream cut short stops mid-line at a block
// boundary).
bool benchmark_out_complete(const std::string& path, const std::string& format);

// After benchmark::Shutdown(): the temporary file renamed over the target
// when whole, else deleted; an error (naming the file) or empty.
std::string finish_benchmark_out(const std::string& target, const std::string& format);

// --timeline is checked before anything runs, as --csv is: its folder must
// exist and be writable, and an existing file is kept unless --force.
std::string timeline_problem(const Options& options);

// After the benchmarks, on rank 0: every train benchmark's timeline,
// written to a temporary file and renamed over --timeline once whole.
std::string write_timeline(const Options& options);

// Two outputs on one path would overwrite each other, or interleave a JSON
// document with CSV rows: every pair of the run's output files is compared
// (through links and other spellings of one path).
std::string shared_output_problem(const Options& options, const std::vector<std::string>& args);

BenchmarkOut benchmark_out_of(const std::vector<std::string>& args);

}  // namespace collbench::harness
