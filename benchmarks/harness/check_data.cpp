// Byte patterns for --check of p2p and memcpy; see check_data.h.
#include "check_data.h"

#include <fmt/format.h>

#include <cstdint>

namespace collbench::harness {
namespace {
// One 64-bit hash per 8-byte word of (word index, seed): the pattern has no
// period, so a block that is swapped, repeated or shifted within a message
// is caught, and the seed (the sending rank) separates the two directions of
// a ping-pong. A multiply-xorshift finalizer (splitmix64) is a few
// instructions per word, so 64 MiB fill and check in well under a second.
std::uint64_t pattern_word(std::uint64_t word_index, int seed) {
  std::uint64_t hash = word_index * 0x9E3779B97F4A7C15ull +
                       (static_cast<std::uint64_t>(static_cast<std::uint32_t>(seed)) << 32) +
                       0x632BE59BD9B4E019ull;
  hash = (hash ^ (hash >> 30)) * 0xBF58476D1CE4E5B9ull;
  hash = (hash ^ (hash >> 27)) * 0x94D049BB133111EBull;
  return hash ^ (hash >> 31);
}

std::byte pattern_byte(std::size_t position, int seed) {
  const std::uint64_t word = pattern_word(position / 8, seed);
  return static_cast<std::byte>((word >> (8 * (position % 8))) & 0xFF);
}
}  // namespace

void fill_bytes(std::span<std::byte> buffer, int seed) {
  const std::size_t whole_words = buffer.size() / 8;
  for (std::size_t word_index = 0; word_index < whole_words; ++word_index) {
    const std::uint64_t word = pattern_word(word_index, seed);
    for (std::size_t byte = 0; byte < 8; ++byte) {
      buffer[word_index * 8 + byte] = static_cast<std::byte>((word >> (8 * byte)) & 0xFF);
    }
  }
  for (std::size_t i = whole_words * 8; i < buffer.size(); ++i) buffer[i] = pattern_byte(i, seed);
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
