// libFuzzer target: the byte-size and size-list parsers (--sizes, CAPs).
// Malformed text must give std::invalid_argument and nothing else; what
// parses must format (for tables, rounded) into text the parser accepts.
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "collbench/catalog/sizes.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    const std::uint64_t bytes = collbench::parse_byte_size(text);
    (void)collbench::parse_byte_size(collbench::format_bytes(bytes));  // throws if unreadable
  } catch (const std::invalid_argument&) {
  }
  try {
    const auto sizes = collbench::parse_size_list(text);
    if (sizes.empty()) __builtin_trap();
  } catch (const std::invalid_argument&) {
  }
  return 0;
}
