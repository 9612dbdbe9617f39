// libFuzzer target: the --workload parser. Malformed specs must give
// std::invalid_argument; a parsed model workload must carry the model's
// whole gradient in its per-iteration sequence, whatever the bucketing.
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "collbench/catalog/catalog.h"
#include "collbench/catalog/workload.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size > 256) return 0;  // specs are short; long inputs only slow the search
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    for (const collbench::Workload& workload : collbench::parse_workloads(text, 4)) {
      if (workload.sequence.empty()) __builtin_trap();
      if (workload.model.empty()) continue;
      std::uint64_t total = 0;
      for (const collbench::Message& message : workload.sequence) total += message.bytes;
      const auto parameters = collbench::find_model(workload.model).parameters();
      if (total != static_cast<std::uint64_t>(parameters) * 4) __builtin_trap();
    }
  } catch (const std::invalid_argument&) {
  }
  return 0;
}
