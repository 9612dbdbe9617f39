// Input data and result checks for --check (nccl-tests' -c).
//
// Every rank's input is distinct per rank and per element, and made of the
// integers -1, 0 and 1, so that any partial sum of p ranks is an integer of
// magnitude <= p: exact in f64 and f32, and in f16 (p <= 2048) and bf16
// (p <= 256) — every summation order then gives the same bits, and the
// expected result has a closed form that does not depend on the algorithm.
// Beyond those rank counts the sums round, and the check allows the rounding
// error bound of p - 1 additions instead of demanding equality.
//
// Outputs are filled with all-ones bytes before the checked call: that is a
// NaN in every dtype, so an element the algorithm never wrote is counted as
// wrong rather than passing by accident.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

#include "collbench/dtype.h"

namespace collbench::harness {

// Input element `index` of `rank`: one of -1, 0, 1.
double input_value(int rank, std::size_t index);

// Writes input_value(rank, i) to every element of `buffer` (whose size must be
// a multiple of the element size).
void fill_input(DType dtype, std::span<std::byte> buffer, int rank);

// Fills `buffer` with all-ones bytes: NaN in every dtype.
void poison(std::span<std::byte> buffer);

struct CheckResult {
  std::uint64_t checked = 0;  // elements (or bytes) compared
  std::uint64_t wrong = 0;    // of which differed from the expected value
  // "element 12: got 3, expected 2" for the first wrong one; empty when none.
  std::string first_mismatch;
};

// Compares `output` with the allreduce of fill_input() over `ranks` ranks.
CheckResult check_allreduce(DType dtype, ReduceOp op, int ranks, std::span<const std::byte> output);

// Compares `output` with op(input_value(0, i), input_value(1, i)) as one call
// of reduce_inplace computes it (avg combines like sum, see reduce.h).
CheckResult check_local_reduce(DType dtype, ReduceOp op, std::span<const std::byte> output);

// Byte pattern for point-to-point and memcpy checks: distinct per `seed`
// (the sending rank) and position.
void fill_bytes(std::span<std::byte> buffer, int seed);
CheckResult check_bytes(std::span<const std::byte> buffer, int seed);

}  // namespace collbench::harness
