// Uses the core library as a project outside collbench's tree does: every
// core header compiles with only collbench::collbench's usage requirements,
// and one ring allreduce runs on 1 and 2 in-process ranks.
#include <fmt/format.h>

#include <atomic>
#include <cstdio>
#include <span>
#include <vector>

#include "collbench/algorithm.h"
#include "collbench/check.h"
#include "collbench/collective.h"
#include "collbench/csv.h"
#include "collbench/dtype.h"
#include "collbench/inproc_transport.h"
#include "collbench/mpi_transport.h"
#include "collbench/reduce.h"
#include "collbench/transport.h"
#include "collbench/transport_factory.h"
#ifdef COLLBENCH_HAVE_OFI
#include "collbench/ofi_transport.h"
#endif

namespace {

// Each rank contributes rank + 1, so every element of the sum is p(p+1)/2.
bool ring_sum_is_right(const collbench::AlgorithmInfo& ring, int ranks) {
  constexpr std::size_t kCount = 7;  // odd: the two ranks get unequal blocks
  const float expected = static_cast<float>(ranks * (ranks + 1) / 2);
  std::atomic<int> wrong_elements{0};
  collbench::run_in_process(ranks, [&](collbench::Transport& transport) {
    std::vector<float> in(kCount, static_cast<float>(transport.rank() + 1));
    std::vector<float> out(kCount, 0.0f);
    const collbench::CollectiveSpec spec{
        .dtype = collbench::DType::f32, .op = collbench::ReduceOp::sum, .count = kCount};
    ring.build(transport, spec, std::as_bytes(std::span(in)),
               std::as_writable_bytes(std::span(out)))
        ->run();
    for (float value : out) {
      if (value != expected) ++wrong_elements;
    }
  });
  fmt::print("ring allreduce on {} in-process ranks: {} of {} elements wrong (expected {})\n",
             ranks, wrong_elements.load(), kCount * static_cast<std::size_t>(ranks), expected);
  return wrong_elements == 0;
}

}  // namespace

int main() {
  const collbench::CollectiveInfo* allreduce = collbench::find_collective("allreduce");
  if (allreduce == nullptr) {
    std::fputs("no allreduce collective\n", stderr);
    return 1;
  }
  fmt::print("collectives: {}\n", collbench::collective_names());
  fmt::print("algorithms: {}\n", allreduce->algorithm_names());
  const collbench::AlgorithmInfo* ring = allreduce->find_algorithm("ring");
  if (ring == nullptr) {
    std::fputs("no ring algorithm\n", stderr);
    return 1;
  }
  const bool right = ring_sum_is_right(*ring, 1) && ring_sum_is_right(*ring, 2);
  return right ? 0 : 1;
}
