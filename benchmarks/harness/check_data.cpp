// Byte patterns for --check of p2p and memcpy; see check_data.h.
#include "check_data.h"

#include <fmt/format.h>

namespace collbench::harness {
namespace {
std::byte pattern_byte(std::size_t position, int seed) {
  // A multiplier coprime to 256 makes consecutive bytes differ, so a shifted
  // or truncated copy is caught, and the seed separates the two directions
  // of a ping-pong.
  return static_cast<std::byte>((position * 167 + static_cast<std::size_t>(seed) * 29 + 11) & 0xFF);
}
}  // namespace

void fill_bytes(std::span<std::byte> buffer, int seed) {
  for (std::size_t i = 0; i < buffer.size(); ++i) buffer[i] = pattern_byte(i, seed);
}

CheckResult check_bytes(std::span<const std::byte> buffer, int seed) {
  CheckResult result;
  result.checked = buffer.size();
  for (std::size_t i = 0; i < buffer.size(); ++i) {
    const std::byte expected = pattern_byte(i, seed);
    if (buffer[i] != expected) {
      if (result.wrong == 0) {
        result.first_mismatch =
            fmt::format("byte {}: got {:#04x}, expected {:#04x}", i,
                        std::to_integer<unsigned>(buffer[i]), std::to_integer<unsigned>(expected));
      }
      ++result.wrong;
    }
  }
  return result;
}

}  // namespace collbench::harness
