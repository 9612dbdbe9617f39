// The registry of benchmark families: one table (family_registry.cpp) of one
// entry per family file, each defined in that file with designated
// initializers. An entry says which --families names select it, whether
// each is in the default list, which single-process transports cannot run
// it and why, how it expands into benchmark cases, and the lines of --help
// that name its benchmarks. options.cpp and options_cli.cpp (--families, --help), the planner
// and single_process.cpp read it; none of them names a family.
//
// Adding a family: a file with its FamilyRunner (family.h), its planning and
// its `extern const FamilyEntry`, then one line in family_registry.cpp's
// table and its file in CMakeLists.txt (benchmarks/harness/README.md shows
// the diff of barrier_family.cpp's commit).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "collbench/catalog/workload.h"

namespace collbench::harness {

class Planner;
struct Options;
struct SingleProcessTransport;

// One --families NAME.
struct FamilyName {
  std::string_view name;
  bool in_default_list = false;
  // When it registers anything, for --families' help ("only with --workload").
  std::string_view condition = {};
  // Why `transport` (one whose ranks all run in this process) cannot run
  // it, one sentence for the error; empty: it can. Null: every one can.
  std::string_view (*refusal)(const SingleProcessTransport& transport) = nullptr;
};

// What a family's planning expands into cases: the sizes (empty when only
// workloads were asked for) and the workloads.
struct PlanInputs {
  const std::vector<std::uint64_t>& sizes;
  const std::vector<Workload>& workloads;
};

struct FamilyEntry {
  // Its --families names; a function because the collective family's are
  // those of the collective table.
  std::vector<FamilyName> (*names)();
  // Adds the cases of those of its names that options().families holds to
  // the planner, each with its FamilyRunner (BenchmarkCase::family).
  void (*plan)(Planner& planner, const PlanInputs& inputs);
  // --help: its benchmark names, each followed by what one call does, in
  // the footer's two columns.
  std::string_view help;
  // Its calls make MPI calls from a thread of their own (train's
  // communication thread), so MPI must grant MPI_THREAD_SERIALIZED. Every
  // other family runs at MPI_THREAD_SINGLE, because a higher level costs
  // every call of the MPI library (main.cpp).
  bool calls_mpi_off_the_main_thread = false;
};

// The registry, in registration order (the order of the cases and of the
// names in messages).
std::span<const FamilyEntry* const> family_entries();

// Every --families name, in registry order.
std::vector<FamilyName> family_names();
// Null when `name` is none.
const FamilyName* find_family_name(std::string_view name);
// --families' name for every collective of the table at once.
inline constexpr std::string_view kAllCollectivesFamily = "collectives";
// "allreduce, reduce_scatter, ..., barrier, collectives": what --families accepts.
std::string accepted_family_names();
// The default list, comma-separated ("allreduce,exchange,p2p,local").
std::string default_families();
// --families LIST as the names it selects, each once, in the order given
// ("collectives" expanded); throws UsageError naming a bad one.
std::vector<std::string> select_families(const std::vector<std::string>& listed);
// True when `listed` (--families' names) selects a family that calls MPI
// off the main thread; false for a list select_families refuses (the
// options' parse names the error).
bool selects_mpi_off_the_main_thread(const std::vector<std::string>& listed);
// The --help of --families: the default list and the other names.
std::string families_flag_help();
// The footer's part that names the benchmarks: every entry's help.
std::string benchmark_names_help();

}  // namespace collbench::harness
