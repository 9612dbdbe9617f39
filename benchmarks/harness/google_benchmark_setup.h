// What main.cpp hands Google Benchmark and reads back from its flags: its
// initialization with collbench's own arguments left over, the benchmarks
// --benchmark_filter selects, its boolean flags.
#pragma once

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "families.h"
#include "output_files.h"
#include "world.h"

namespace collbench::harness {

// Hands Google Benchmark its flags (initializing it only when `initialize`)
// and returns the arguments it leaves, collbench's own.
std::vector<std::string> initialize_google_benchmark(const World& world, int argc, char** argv,
                                                     const std::vector<std::string>& args,
                                                     const BenchmarkOut& out, bool initialize);

// How many registered benchmarks --benchmark_filter selects, for the
// progress line and the "selects nothing" error. Matched as Google Benchmark
// matches it: a POSIX extended regex (regcomp, as its re.h) searched in the
// full name, the case name followed by `name_suffix` ("/manual_time", or
// "/repeats:1/manual_time" under --interleave); a leading '-' negates.
// With `family`, only the benchmarks of that family are counted.
std::size_t count_selected(const CasePlan& plan, const std::string& name_suffix,
                           const FamilyRunner* family = nullptr);

// Whether the Google Benchmark boolean flag `name` is set in `args` (the
// last one given wins, as Google Benchmark reads them).
bool benchmark_flag_set(const std::vector<std::string>& args, const std::string& name);

// --benchmark_list_tests only prints the names: no CSV is created (a dry
// run, as scripts/run.sh makes one to check its flags), but the path is
// checked as for a run.
bool lists_tests_only(const std::vector<std::pair<std::string, std::string>>& benchmark_flags);

}  // namespace collbench::harness
