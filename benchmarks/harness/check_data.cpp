// Byte patterns for --check of p2p and memcpy; see check_data.h.
#include "check_data.h"

#include <fmt/format.h>

#include <cstdint>

#include "collbench/core/check.h"

namespace collbench::harness {
namespace {
// One 64-bit hash per 8-byte word of (word index, seed): the pattern has no
// period, so a block that is swapped, repeated or shifted within a message
// is caught, and the seed (the sending rank) separates the two directions of
// a ping-pong. A multiply-xorshift finalizer (splitmix64) is a few
// instructions per word, so 64 MiB fill and check in well under a second.
std::uint64_t pattern_word(std::uint64_t word_index, int seed) {
  return mix64(word_index ^ (static_cast<std::uint64_t>(static_cast<std::uint32_t>(seed)) << 40) ^
               0x632BE59BD9B4E019ull);
}

// Calls visit(position, pattern byte) for each of `size` bytes, one hash per
// word.
template <typename Visit>
void for_each_pattern_byte(std::size_t size, int seed, Visit&& visit) {
  std::uint64_t word = 0;
  for (std::size_t i = 0; i < size; ++i) {
    if (i % 8 == 0) word = pattern_word(i / 8, seed);
    visit(i, static_cast<std::byte>((word >> (8 * (i % 8))) & 0xFF));
  }
}
}  // namespace

void fill_bytes(std::span<std::byte> buffer, int seed) {
  for_each_pattern_byte(buffer.size(), seed,
                        [&](std::size_t i, std::byte expected) { buffer[i] = expected; });
}

CheckResult check_bytes(std::span<const std::byte> buffer, int seed) {
  CheckResult result;
  result.checked = buffer.size();
  for_each_pattern_byte(buffer.size(), seed, [&](std::size_t i, std::byte expected) {
    if (buffer[i] == expected) return;
    if (result.wrong == 0) {
      result.first_mismatch =
          fmt::format("byte {}: got {:#04x}, expected {:#04x}", i,
                      std::to_integer<unsigned>(buffer[i]), std::to_integer<unsigned>(expected));
    }
    ++result.wrong;
  });
  return result;
}

}  // namespace collbench::harness
