// One correctness case of a collective, shared by the in-process and MPI
// suites: buffers laid out as the collective says (in place: the smaller
// buffer at its block's place in the larger), two calls of one built
// algorithm, the second on another generation's inputs and over the first's
// output, so that anything left over from the first call is wrong.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "collbench/collectives/collective.h"
#include "collbench/core/check.h"

namespace collbench::testing {

// Wrong elements of this rank's output, summed over both calls.
inline std::uint64_t run_checked_calls(Transport& transport, const CollectiveInfo& collective,
                                       const AlgorithmInfo& algorithm, std::size_t count,
                                       DType dtype, ReduceOp op, bool in_place,
                                       std::size_t segment_bytes = 0, TokenRouting routing = {}) {
  const int rank = transport.rank();
  const int ranks = transport.size();
  const std::size_t element_bytes = dtype_size(dtype);
  const CollectiveSpec spec{dtype, op, count, segment_bytes, routing};
  const Block in_block = collective.input_block(spec, ranks, rank);
  const Block out_block = collective.output_block(spec, ranks, rank);
  // In place: one buffer of the whole vector (or of alltoallv's p shares,
  // when larger); the input or the output (the one that is a block) lies at
  // its block's place in it.
  std::vector<std::byte> whole(
      std::max({count, in_block.offset + in_block.count, out_block.offset + out_block.count}) *
      element_bytes);
  std::vector<std::byte> in_storage(in_place ? 0 : in_block.count * element_bytes);
  std::vector<std::byte> out_storage(in_place ? 0 : out_block.count * element_bytes);
  const auto part = [&](Block block) {
    return std::span<std::byte>(whole).subspan(block.offset * element_bytes,
                                               block.count * element_bytes);
  };
  const std::span<std::byte> in = in_place ? part(in_block) : std::span<std::byte>(in_storage);
  const std::span<std::byte> out = in_place ? part(out_block) : std::span<std::byte>(out_storage);
  poison(out);
  auto call = algorithm.build(transport, spec, in, out);
  std::uint64_t wrong = 0;
  for (const std::uint64_t generation : {1, 2}) {
    const CheckPattern pattern(ranks, generation);
    fill_input(collective, pattern, spec, rank, 0, in);
    call->run();
    wrong += collective.check_output(pattern, spec, rank, 0, out).wrong;
  }
  return wrong;
}

}  // namespace collbench::testing
