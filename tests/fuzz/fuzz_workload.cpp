// libFuzzer target: the --workload parser. Malformed specs must give
// std::invalid_argument; a parsed model workload must carry the model's
// whole gradient once: allreduced by the data-parallel kinds, reduce-
// scattered by fsdp and zero2 (tp's and moe's activations are not the
// gradient: their messages are allreduces, or alltoallvs, of one size).
// `distinct` must hold the sequence's messages, per collective.
#include <cstddef>
#include <cstdint>
#include <map>
#include <stdexcept>
#include <string>

#include "collbench/catalog/catalog.h"
#include "collbench/catalog/workload.h"

namespace {

void check_distinct(const collbench::Workload& workload) {
  std::map<std::string, std::uint64_t> sequence_bytes;
  std::map<std::string, std::uint64_t> distinct_bytes;
  for (const collbench::Message& message : workload.sequence) {
    if (message.multiplicity != 1) __builtin_trap();
    sequence_bytes[message.collective] += message.bytes;
  }
  for (const collbench::Message& message : workload.distinct) {
    distinct_bytes[message.collective] +=
        message.bytes * static_cast<std::uint64_t>(message.multiplicity);
  }
  if (sequence_bytes != distinct_bytes) __builtin_trap();
}

void check_gradient(const collbench::Workload& workload) {
  const auto parameters =
      static_cast<std::uint64_t>(collbench::find_model(workload.model).parameters());
  std::uint64_t gradient = 0;
  for (const collbench::Message& message : workload.sequence) {
    if (message.bytes != message.elements * workload.element_bytes) __builtin_trap();
    switch (workload.kind) {
      case collbench::WorkloadKind::fsdp:
      case collbench::WorkloadKind::zero2:
        if (message.collective == collbench::kReduceScatter) gradient += message.elements;
        break;
      case collbench::WorkloadKind::tp:
        if (message.collective != collbench::kAllreduce ||
            message.bytes != workload.sequence.front().bytes) {
          __builtin_trap();
        }
        break;
      case collbench::WorkloadKind::moe:
        if (message.collective != collbench::kAlltoallv ||
            message.bytes != workload.sequence.front().bytes ||
            message.routing_skew != workload.routing_skew) {
          __builtin_trap();
        }
        break;
      default:
        if (message.collective != collbench::kAllreduce) __builtin_trap();
        gradient += message.elements;
    }
  }
  const bool activations =
      workload.kind == collbench::WorkloadKind::tp || workload.kind == collbench::WorkloadKind::moe;
  if (!activations && gradient != parameters) __builtin_trap();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size > 256) return 0;  // specs are short; long inputs only slow the search
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    for (const collbench::Workload& workload : collbench::parse_workloads(text, 4)) {
      if (workload.sequence.empty()) __builtin_trap();
      check_distinct(workload);
      if (!workload.model.empty()) check_gradient(workload);
    }
  } catch (const std::invalid_argument&) {
  }
  return 0;
}
