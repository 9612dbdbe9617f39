// collbench's flags as CLI11 defines them (options_cli.cpp), shared with
// their validation (options.cpp): the raw strings CLI11 fills, the App that
// holds them, and the lists both name in their messages.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "family_registry.h"
#include "options.h"

namespace collbench::harness {

// What --gemm-batches A:B runs, for its help and its errors: A doubled
// until B, so 3:12 is 3, 6, 12 (powers of two only when A is one).
constexpr std::string_view kGemmBatchRange = "A:B for A, 2A, 4A, ... up to B";

// The raw strings CLI11 fills; converted and validated by parse_options.
struct RawOptions {
  std::string algorithms = "all";
  std::string sizes;
  bool sizes_given = false;  // --sizes appeared, even with an empty value
  std::string segment;       // --segment, empty for the algorithms' default
  std::string dtype = "f32";
  std::string op = "sum";
  std::string sync = "barrier";
  std::string families = default_families();
  std::string gemm_models;
  std::string gemm_batches = kDefaultGemmBatches;
  bool gemm_models_given = false;  // --gemm-models appeared, even with an empty value
};

struct App {
  CLI::App app{
      "collbench: collective-communication microbenchmarks (Google Benchmark under MPI).\n"
      "Launch with mpirun/srun on any number of ranks; rank 0 reports. Or, without mpirun\n"
      "and without MPI, every rank in this process: --transport inproc --ranks N; or one\n"
      "process per rank over libfabric: --transport ofi --bootstrap file:DIR --rank R --ranks N.",
      "collbench"};
  RawOptions raw;
  Options options;

  App();
};

// --transport's kinds: those mpirun starts (this build's), then those whose
// ranks all run in this process.
std::vector<std::string> accepted_transports();
// Every collective's algorithms, one line each, for --algorithms' errors.
std::string algorithms_by_collective();
bool any_collective_has(std::string_view algorithm);

}  // namespace collbench::harness
