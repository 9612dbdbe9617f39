// Byte sizes as people type them on a command line ("64MiB", "8:1GiB:x4")
// and as tables print them ("64 MiB").
//
// Units, case-sensitive:
//   B                      bytes (also the meaning of a bare number)
//   KiB MiB GiB TiB        powers of 1024 (IEC 80000-13)
//   kB/KB MB GB TB         powers of 1000 (SI), as IEC 80000-13 defines them
// A bare "K", "M", "G" or "T" is rejected: nccl-tests reads "128M" as 2^27
// while SI reads it as 10^8, and a benchmark that silently picks one measures
// the wrong size. A decimal fraction is accepted when it names a whole
// number of bytes ("1.5KiB" is 1536, "1.3B" is an error), so that every
// string format_bytes() prints exactly can be read back.
//
// Errors are std::invalid_argument whose message quotes the offending text
// and says what is accepted.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace collbench {

enum class ZeroSize : bool { reject, allow };

// One size: digits, an optional ".digits" fraction, optional spaces, an
// optional unit. Surrounding whitespace is ignored. Zero is an error unless
// `zero` is allow; negative numbers, unknown units and values above
// 2^64 - 1 bytes are errors.
std::uint64_t parse_byte_size(std::string_view text, ZeroSize zero = ZeroSize::reject);

// A list of sizes, comma-separated items, each one of
//   SIZE                 one size
//   MIN:MAX              MIN, 2·MIN, 4·MIN, ... while <= MAX (as nccl-tests
//                        steps -b/-e/-f: MAX is included only when the
//                        steps land on it)
//   MIN:MAX:xF, :*F      the same with an integer step factor F >= 2
// Every size must be at least 1 byte, and MIN <= MAX. The result keeps the
// order written; a size produced twice is kept once (its first place).
std::vector<std::uint64_t> parse_size_list(std::string_view text);

// Byte arithmetic that cannot wrap: the result, or kSaturatedBytes (2^64 - 1)
// when it does not fit in 64 bits. Every sum or product of sizes that come
// from the command line goes through these, so that a huge --sizes is
// refused as too large instead of wrapping to a small number; any check
// against a real limit then fails on the saturated value.
inline constexpr std::uint64_t kSaturatedBytes = ~std::uint64_t{0};
constexpr std::uint64_t saturating_add(std::uint64_t a, std::uint64_t b) {
  std::uint64_t sum = 0;
  return __builtin_add_overflow(a, b, &sum) ? kSaturatedBytes : sum;
}
constexpr std::uint64_t saturating_multiply(std::uint64_t a, std::uint64_t b) {
  std::uint64_t product = 0;
  return __builtin_mul_overflow(a, b, &product) ? kSaturatedBytes : product;
}

// The largest binary unit that keeps the number >= 1, at most two decimals,
// trailing zeros dropped: 8 -> "8 B", 1536 -> "1.5 KiB", 2^26 -> "64 MiB".
// Values that are not exact at two decimals are rounded to nearest.
std::string format_bytes(std::uint64_t bytes);

}  // namespace collbench
