// The Planner and plan_cases; see planner.h.
#include "planner.h"

#include <fmt/format.h>

#include <algorithm>

#include "collbench/catalog/sizes.h"

namespace collbench::harness {
namespace {

std::string size_range(const std::vector<std::uint64_t>& sizes) {
  if (sizes.size() == 1) return format_bytes(sizes.front());
  return fmt::format("{} sizes, {}..{}", sizes.size(),
                     format_bytes(*std::min_element(sizes.begin(), sizes.end())),
                     format_bytes(*std::max_element(sizes.begin(), sizes.end())));
}

}  // namespace

Planner::Planner(const Options& options, std::string_view transport_kind, int ranks,
                 std::vector<int> rank_nodes)
    : options_(options),
      transport_kind_(transport_kind),
      ranks_(ranks),
      rank_nodes_(std::move(rank_nodes)),
      element_bytes_(dtype_size(options.dtype)),
      dtype_name_(to_string(options.dtype)) {}

std::vector<const AlgorithmInfo*> Planner::selected(const CollectiveInfo& collective) {
  std::vector<const AlgorithmInfo*> algorithms;
  const bool first_time = selected_for_.insert(&collective).second;
  if (options_.all_algorithms) {
    for (const AlgorithmInfo& info : collective.algorithms) {
      if (!info.forced_library_algorithm) algorithms.push_back(&info);
    }
  } else {
    for (const std::string& name : options_.algorithms) {
      if (const AlgorithmInfo* info = collective.find_algorithm(name)) {
        algorithms.push_back(info);
      } else if (first_time) {
        note(fmt::format("skipping {}/{}: {} has no algorithm '{}' (it has {})", collective.name,
                         name, collective.name, name, collective.algorithm_names()));
      }
    }
  }
  if (options_.library_algorithms) {
    for (const AlgorithmInfo& info : collective.algorithms) {
      if (info.forced_library_algorithm &&
          std::find(algorithms.begin(), algorithms.end(), &info) == algorithms.end()) {
        algorithms.push_back(&info);
      }
    }
  }
  return algorithms;
}

bool Planner::runnable(const CollectiveInfo& collective, const AlgorithmInfo& algorithm,
                       std::uint64_t bytes, TokenRouting routing) {
  // The elements of the largest buffer any rank holds: the count, or an
  // alltoallv's expert side of p shares, whose offsets MPI counts in ints too.
  CollectiveSpec spec;
  spec.count = bytes / element_bytes_;
  spec.routing = routing;
  std::string reason = algorithm.unsupported_reason(
      transport_kind_, ranks_, largest_buffer_elements(collective, spec, ranks_));
  if (reason.empty() && algorithm.needs_equal_ranks_per_node && !rank_nodes_.empty()) {
    reason = uneven_nodes_reason(rank_nodes_);
  }
  if (reason.empty()) return true;
  const std::string name = fmt::format("{}/{}", collective.name, algorithm.name);
  // Named in --algorithms: an error; otherwise (all, --library-algorithms) a note.
  const bool named =
      !options_.all_algorithms && std::find(options_.algorithms.begin(), options_.algorithms.end(),
                                            algorithm.name) != options_.algorithms.end();
  if (named) {
    throw UsageError(
        fmt::format("algorithm '{}' cannot run {} of {} on {} ranks over the {} "
                    "transport: {}",
                    name, format_bytes(bytes), dtype_name_, ranks_, transport_kind_, reason));
  }
  skip(name, reason, bytes);
  return false;
}

CasePlan Planner::finish(std::uint64_t memory_limit_per_rank) {
  for (const auto& [key, skipped_sizes] : skipped_) {
    note(fmt::format("skipping {} on {} ranks ({}): {}", key.first, ranks_,
                     size_range(skipped_sizes), key.second));
  }
  for (const BenchmarkCase& entry : plan_.cases) check_memory(entry, memory_limit_per_rank);
  return std::move(plan_);
}

void Planner::check_memory(const BenchmarkCase& entry, std::uint64_t memory_limit_per_rank) const {
  const std::uint64_t needed = entry.memory_bytes(ranks_);
  std::string hint(entry.family->smaller_hint());
  if (transport_kind_ == "sim" && !options_.sim.no_payload) {
    hint = "use --no-payload (size-only: no buffer filled) or " + hint;
  }
  // Refused even when MemAvailable is unknown (limit 0).
  if (needed == kSaturatedBytes) {
    throw UsageError(fmt::format(
        "{} needs more than {} per rank (buffers and workspace), beyond any machine's memory; "
        "{}",
        entry.name, format_bytes(kSaturatedBytes), hint));
  }
  // Size-only simulation touches neither its messages' buffers nor the
  // algorithms' workspaces (SimulatedCompute::size_only): no memory to check.
  if (options_.sim.no_payload) return;
  if (memory_limit_per_rank > 0 && needed > memory_limit_per_rank) {
    throw UsageError(fmt::format(
        "{} needs {} per rank (buffers and workspace) but only {} per rank is available "
        "(MemAvailable shared by the ranks of a node, 90% of it); {} or fewer ranks per node",
        entry.name, format_bytes(needed), format_bytes(memory_limit_per_rank), hint));
  }
}

CasePlan plan_cases(const Options& options, const std::vector<Workload>& workloads,
                    std::string_view transport_kind, int ranks, std::uint64_t memory_limit_per_rank,
                    std::vector<int> rank_nodes) {
  Planner planner(options, transport_kind, ranks, std::move(rank_nodes));
  // --sizes applies unless only workloads were asked for.
  const bool use_sizes = options.sizes_given || workloads.empty();
  const std::vector<std::uint64_t> no_sizes;
  const std::vector<std::uint64_t>& sizes = use_sizes ? options.sizes : no_sizes;
  const PlanInputs inputs{sizes, workloads};
  for (const FamilyEntry* family : family_entries()) family->plan(planner, inputs);
  return planner.finish(memory_limit_per_rank);
}

}  // namespace collbench::harness
