// What a benchmark is (BenchmarkCase): its columns, bytes and memory; see
// families.h.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "collbench/catalog/sizes.h"
#include "families.h"

namespace collbench::harness {

std::string BenchmarkCase::family_column() const { return family->family_column(*this); }

std::string BenchmarkCase::algorithm_column() const { return family->algorithm_column(*this); }

std::vector<std::size_t> BenchmarkCase::message_slots() const {
  std::vector<std::size_t> slots;
  for (std::size_t k = 0; k < message_bytes.size(); ++k) {
    std::size_t slot = k;
    if (message_bytes[k] >= shared_message_bytes) {
      for (std::size_t earlier = 0; earlier < k; ++earlier) {
        if (message_bytes[earlier] == message_bytes[k] &&
            &collective_of(earlier) == &collective_of(k) && routing_of(earlier) == routing_of(k)) {
          slot = earlier;
          break;
        }
      }
    }
    slots.push_back(slot);
  }
  return slots;
}

const CollectiveInfo& BenchmarkCase::collective_of(std::size_t index) const {
  return message_collectives.empty() ? *collective : *message_collectives[index];
}

TokenRouting BenchmarkCase::routing_of(std::size_t index) const {
  return message_routings.empty() ? TokenRouting{} : message_routings[index];
}

const AlgorithmInfo& BenchmarkCase::algorithm_of(std::size_t index) const {
  if (message_collectives.empty()) return *algorithm;
  // The planner only pairs an algorithm name with collectives that have it.
  return *collective_of(index).find_algorithm(algorithm->name);
}

std::string BenchmarkCase::collective_column() const {
  if (collective == nullptr) return "";
  std::vector<std::string_view> names = {collective->name};
  for (const CollectiveInfo* other : message_collectives) {
    if (std::find(names.begin(), names.end(), other->name) == names.end()) {
      names.push_back(other->name);
    }
  }
  return fmt::format("{}", fmt::join(names, "+"));
}

bool BenchmarkCase::reduces() const {
  if (collective == nullptr) return false;
  return collective->reduces ||
         std::any_of(message_collectives.begin(), message_collectives.end(),
                     [](const CollectiveInfo* other) { return other->reduces; });
}

double BenchmarkCase::bus_bandwidth_factor(int ranks) const {
  if (collective == nullptr) return 1.0;
  if (message_collectives.empty()) return collective->bus_bandwidth_factor(ranks);
  double weighted = 0;
  double total = 0;
  for (std::size_t k = 0; k < message_bytes.size(); ++k) {
    const auto bytes = static_cast<double>(message_bytes[k]);
    weighted += bytes * collective_of(k).bus_bandwidth_factor(ranks);
    total += bytes;
  }
  return total > 0 ? weighted / total : 1.0;
}

std::uint64_t BenchmarkCase::bytes() const {
  std::uint64_t total = 0;
  for (const std::uint64_t message : message_bytes) total = saturating_add(total, message);
  return total;
}

// Bytes a message's input and output take beyond twice the message, on the
// rank with the most (an alltoallv's expert side holds p shares: a skewed
// routing gives rank 0 up to p·n), the layout priced in bytes as elements.
namespace {

std::uint64_t routed_share_bytes(const BenchmarkCase& benchmark_case, std::size_t index,
                                 int ranks) {
  const CollectiveInfo& message_collective = benchmark_case.collective_of(index);
  CollectiveSpec spec;
  spec.count = benchmark_case.message_bytes[index];
  spec.routing = benchmark_case.routing_of(index);
  std::uint64_t most = 0;
  for (int rank = 0; rank < ranks; ++rank) {
    const Block input = message_collective.input_block(spec, ranks, rank);
    const Block output = message_collective.output_block(spec, ranks, rank);
    most = std::max<std::uint64_t>(most, input.count + output.count);
  }
  return most > 2 * spec.count ? most - 2 * spec.count : 0;
}

}  // namespace

std::uint64_t BenchmarkCase::memory_bytes(int ranks) const {
  // A gemm case's one message is its operand buffers.
  if (family == &local_gemm_family()) return bytes();
  std::uint64_t total = compute_bytes;
  const std::vector<std::size_t> slots = message_slots();
  for (std::size_t k = 0; k < message_bytes.size(); ++k) {
    if (slots[k] != k) continue;  // on an earlier message's buffers
    const std::uint64_t message = message_bytes[k];
    // input and output (p2p: send and receive; local: dst and src); for
    // the collectives whose input or output is a block or empty (reduce_scatter,
    // allgather, broadcast, reduce), counted whole.
    total = saturating_add(total, saturating_multiply(2, message));
    if (algorithm == nullptr) continue;
    total = saturating_add(total, routed_share_bytes(*this, k, ranks));
    // The algorithms' workspace formulas (at most about message x ranks)
    // are unchecked; a message this large cannot be allocated anyway.
    const auto ranks_and_margin = static_cast<std::uint64_t>(std::max(ranks, 1)) + 2;
    if (saturating_multiply(message, ranks_and_margin) == kSaturatedBytes) return kSaturatedBytes;
    total = saturating_add(total, algorithm_of(k).workspace_bytes(ranks, message));
  }
  return total;
}

}  // namespace collbench::harness
