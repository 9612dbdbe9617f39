// Inputs and exact expected results for checking a collective's output: the
// one check of the harness's --check and of every correctness test.
//
// A CheckPattern is the data of one checked call: `ranks` ranks, and a
// `generation` that changes from call to call, so that a result left over
// from an earlier call (a stale buffer) is wrong for this one. It gives the
// input of (rank, global element index), the exact result of reducing all
// ranks' inputs at a global index, and compares an output span against
// either for any range of global indices — so that an allreduce checks its
// whole vector, a reduce_scatter rank its own block, an allgather or a
// broadcast the inputs of the rank each block came from.
//
// The values, per element i (h = a 64-bit hash of i and the generation):
//   - the max owner a(i) = (i + o) mod p holds +M(i), M(i) in {2, 3, 4};
//   - the min owner b(i) = (a(i) + 1 + d) mod p (≠ a(i)) holds −m(i),
//     m(i) in {2, 3, 4};
//   - every other rank r holds T[(r + s(i)) mod 128], one of −1 and +1, from
//     a fixed table T of 128 signs;
//   with o, d drawn from the generation and M, m, s from h.
// Why each property holds:
//   - Nonzero, so a missing rank or an extra copy of one changes every
//     element's sum (by its nonzero value). And every element's sum is
//     nonzero too: where the hash's M would make it 0, M is the next of
//     2, 3, 4 (4 wraps to 2; one M at most gives 0), so an output of zeros is
//     wrong at every element for sum and avg, even in a reduce_scatter block
//     of a few elements.
//   - Small: |every partial sum| ≤ 4 + 4 + (p − 2) = p + 6, so sums are exact
//     integers in f64, f32, f16 (p ≤ 2042) and bf16 (8 significant bits, ≤ 256:
//     p ≤ 250): every summation order gives the same bits, and the expected
//     value is exact. avg is the correctly rounded quotient sum/p (what
//     scale_for_average computes), compared exactly as well; a sum that differs
//     by an integer δ ≠ 0 gives a quotient at least 1/p away, more than one ulp
//     of any |avg| ≤ (p + 6)/p in bf16 for p ≤ 127, so it rounds differently.
//   - Distinct per rank: two ranks' non-owner values are two positions of T
//     apart; T is chosen so that every cyclic shift of it differs from it in
//     at least a third of its positions (tested), and s(i) is a hash of i,
//     so one rank's data in place of another's changes about half the sums.
//   - Distinct per element and per generation: s, M and m come from a hash of
//     (i, generation), with no period, so a chunk placed k elements off, or the
//     previous call's result, differs from the expected one at most elements.
//   - min and max are unique and carried by one rank each: the owners' ±M, ±m
//     exceed every other |value| ≤ 1, and ownership goes round the ranks, so
//     every p consecutive elements have each rank as max owner once and as
//     min owner once. A missing rank therefore changes min and max wherever it
//     owns the extreme: in every range of ≥ p elements. M and m vary with i,
//     so a misplaced chunk changes min and max where M (m) differs between the
//     two positions, about two thirds of the elements. (Contributions that are
//     not the extreme are invisible to min and max by nature: a check of
//     min/max can only catch a missing rank where it owns the result.)
//   - One rank's input as the result is wrong wherever the rank is not an
//     owner; all zeros is wrong everywhere.
// Cost: one multiply–xorshift hash per element and table look-ups, no
// division in the loops; the sum over ranks of T's values is a window sum
// precomputed for all 128 window starts, so filling and checking are O(n)
// whatever p.
//
// Beyond the exact rank counts (bf16 over 250 ranks, f16 over 2042) sums
// round, and the check allows the rounding error bound of p − 1 additions
// instead of demanding equality.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "collbench/core/dtype.h"

namespace collbench {

// splitmix64's finalizer: a bijection whose every output bit depends on every
// input bit, at two multiplies. The hash behind every check pattern.
constexpr std::uint64_t mix64(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ULL;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
  return x ^ (x >> 31);
}

struct CheckResult {
  std::uint64_t checked = 0;  // elements compared
  std::uint64_t wrong = 0;    // of which differed from the expected value
  // "element 12: got 3, expected 2" (global index) for the first wrong one;
  // empty when none.
  std::string first_mismatch;
};

class CheckPattern {
 public:
  // Size of the table of signs that non-owner ranks read from.
  static constexpr int kTableSize = 128;

  CheckPattern(int ranks, std::uint64_t generation);

  int ranks() const { return ranks_; }
  std::uint64_t generation() const { return generation_; }

  // Input element `index` of `rank`: an integer in [−4, 4], never 0.
  int input(int rank, std::uint64_t index) const;
  // op over all ranks' inputs at `index`, exact, as stored in `dtype` (avg: the
  // correctly rounded quotient; the sum itself where not exact, see above).
  double expected(DType dtype, ReduceOp op, std::uint64_t index) const;

  // Writes input(rank, first + k) to element k of `buffer` (whose size must be
  // a whole number of elements).
  void fill(DType dtype, int rank, std::uint64_t first, std::span<std::byte> buffer) const;
  // Compares element k of `output` with expected(dtype, op, first + k).
  CheckResult check_reduced(DType dtype, ReduceOp op, std::uint64_t first,
                            std::span<const std::byte> output) const;
  // Compares element k of `output` with input(rank, first + k): what a
  // broadcast or an allgather must deliver.
  CheckResult check_input(DType dtype, int rank, std::uint64_t first,
                          std::span<const std::byte> output) const;

  // The sign table T (for its tests).
  static const std::array<int, kTableSize>& table();

 private:
  template <typename Key>
  CheckResult compare(DType dtype, std::uint64_t first, std::span<const std::byte> output,
                      const std::vector<double>& values, int bias, double tolerance, Key key) const;

  int ranks_;
  std::uint64_t generation_;
  std::uint64_t salt_;
  int max_owner_offset_;  // o: the max owner of element 0
  int min_owner_step_;    // 1 + d: how far after the max owner the min owner is
  // Sum of T over the window [s, s + ranks) (mod kTableSize), for every s.
  std::array<int, kTableSize> window_sum_{};
};

// Fills `buffer` with all-ones bytes: NaN in every dtype, so an element a
// collective never wrote is counted as wrong rather than passing by accident.
void poison(std::span<std::byte> buffer);

}  // namespace collbench
