// Planning (plan_cases, families.h): which benchmarks a configuration
// registers. The Planner holds what every family's planning shares (the
// --algorithms selection, the can-it-run check and its notes, the memory
// check); each family file plans its own benchmarks with it (its
// FamilyEntry::plan), and plan_cases runs them in the registry's order
// (family_registry.h).
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "collbench/catalog/workload.h"
#include "families.h"
#include "family_registry.h"

namespace collbench::harness {

class Planner {
 public:
  // `rank_nodes`: each rank's node (RunMetadata::rank_nodes); empty = one
  // node per rank.
  Planner(const Options& options, std::string_view transport_kind, int ranks,
          std::vector<int> rank_nodes = {});

  const Options& options() const { return options_; }
  std::string_view transport_kind() const { return transport_kind_; }
  int ranks() const { return ranks_; }
  const std::string& dtype_name() const { return dtype_name_; }

  // The algorithms of `collective` that --algorithms selects, in the
  // collective's order (all of them) or the order given; the first time a
  // collective lacks a name given, a note says so.
  std::vector<const AlgorithmInfo*> selected(const CollectiveInfo& collective);
  // Whether `algorithm` can run `bytes` here (an alltoallv message routed
  // by `routing`); an `all` sweep leaves it out with a note, an algorithm
  // named in --algorithms is an error.
  bool runnable(const CollectiveInfo& collective, const AlgorithmInfo& algorithm,
                std::uint64_t bytes, TokenRouting routing = {});

  // Leaves `bytes` of `name` out, for one note per (name, reason).
  void skip(const std::string& name, const std::string& reason, std::uint64_t bytes) {
    skipped_[{name, reason}].push_back(bytes);
  }
  std::size_t element_bytes() const { return element_bytes_; }

  void add(BenchmarkCase entry) { plan_.cases.push_back(std::move(entry)); }
  void note(std::string text) { plan_.notes.push_back(std::move(text)); }

  // The notes of what was left out, then the memory check of every case.
  CasePlan finish(std::uint64_t memory_limit_per_rank);

 private:
  void check_memory(const BenchmarkCase& entry, std::uint64_t memory_limit_per_rank) const;

  const Options& options_;
  const std::string_view transport_kind_;
  const int ranks_;
  const std::vector<int> rank_nodes_;
  const std::size_t element_bytes_;
  const std::string dtype_name_;
  CasePlan plan_;
  std::set<const CollectiveInfo*> selected_for_;  // noted the names it lacks
  // Sizes an algorithm cannot run, grouped by reason for one note each.
  std::map<std::pair<std::string, std::string>, std::vector<std::uint64_t>> skipped_;
};

// The selected algorithms of the first of `used` whose name every other
// collective has selected too: an exchange or a train iteration runs one
// algorithm name on every message (ring: reduce_scatter's and allgather's
// ring for FSDP).
std::vector<const AlgorithmInfo*> common_algorithms(Planner& planner,
                                                    const std::vector<const CollectiveInfo*>& used);

}  // namespace collbench::harness
