// Byte patterns for the --check of point-to-point and memcpy benchmarks.
// Collectives and local/reduce are checked with the library's CheckPattern
// (collbench/core/check.h), whose inputs and expected values are the same as the
// tests'.
#pragma once

#include <span>

#include "collbench/core/check.h"

namespace collbench::harness {

// Byte pattern for point-to-point and memcpy checks: a hash of (position,
// seed) with no period, so misplaced chunks are caught; distinct per `seed`
// (the sending rank).
void fill_bytes(std::span<std::byte> buffer, int seed);
CheckResult check_bytes(std::span<const std::byte> buffer, int seed);

}  // namespace collbench::harness
