// Every algorithm that runs without MPI, on the in-process transport, for
// every rank count 1..16 of interest, awkward counts, every dtype, sum and
// max (min and avg on a smaller grid), out-of-place and in place.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <tuple>

#include "collbench/algorithm.h"
#include "collbench/check.h"
#include "collbench/inproc_transport.h"

namespace collbench {
namespace {

// Runs two allreduce calls of one built algorithm on `ranks` threads, the
// second on new inputs (another generation) and without clearing the output,
// so that anything left over from the first call is wrong; returns the wrong
// elements summed over ranks and calls.
std::size_t run_case(const AlgorithmInfo& algorithm, int ranks, std::size_t count, DType dtype,
                     ReduceOp op, bool in_place, std::size_t segment_bytes = 0) {
  std::atomic<std::size_t> wrong{0};
  run_in_process(ranks, [&](Transport& transport) {
    std::vector<std::byte> in(count * dtype_size(dtype));
    std::vector<std::byte> out(in.size());
    poison(out);
    AllreduceSpec spec{dtype, op, count, segment_bytes};
    std::span<std::byte> in_span(in);
    auto allreduce = algorithm.build(transport, spec, in_span, in_place ? in_span : out);
    for (const std::uint64_t generation : {1, 2}) {
      const CheckPattern pattern(ranks, generation);
      pattern.fill(dtype, transport.rank(), 0, in);
      allreduce->run();
      wrong += pattern.check_reduced(dtype, op, 0, in_place ? in : out).wrong;
    }
  });
  return wrong;
}

class AllreduceInProcess : public ::testing::TestWithParam<std::tuple<std::string, int>> {
 protected:
  const AlgorithmInfo& algorithm() const { return *find_algorithm(std::get<0>(GetParam())); }
  int ranks() const { return std::get<1>(GetParam()); }
};

TEST_P(AllreduceInProcess, SumAndMaxEveryDtypeAndCount) {
  const int p = ranks();
  // The sanitizer run (scripts/test.sh --sanitize) sets COLLBENCH_QUICK_TESTS:
  // under ASan the million-element case costs minutes and adds no code path
  // that the smaller counts and the tiny-segment test do not already take.
  const bool quick = std::getenv("COLLBENCH_QUICK_TESTS") != nullptr;
  std::vector<std::size_t> counts = {0,
                                           1,
                                           static_cast<std::size_t>(p - 1),
                                           static_cast<std::size_t>(p),
                                           static_cast<std::size_t>(p + 1),
                                           4099,
                                           1048579};
  if (quick) counts.pop_back();
  for (std::size_t count : counts) {
    for (DType dtype : kAllDTypes) {
      for (ReduceOp op : {ReduceOp::sum, ReduceOp::max}) {
        // The million-element case runs out-of-place only, twice; it is the
        // one that exercises many segments and uneven blocks at scale.
        EXPECT_EQ(run_case(algorithm(), p, count, dtype, op, false), 0u) << fmt::format(
            "{} p={} count={} {} {}", algorithm().name, p, count, to_string(dtype), to_string(op));
      }
    }
  }
}

TEST_P(AllreduceInProcess, MinAvgAndInPlace) {
  const int p = ranks();
  for (std::size_t count : {std::size_t{1}, static_cast<std::size_t>(p + 1), std::size_t{4099}}) {
    for (DType dtype : kAllDTypes) {
      for (ReduceOp op : kAllReduceOps) {
        EXPECT_EQ(run_case(algorithm(), p, count, dtype, op, true), 0u)
            << fmt::format("in place: {} p={} count={} {} {}", algorithm().name, p, count,
                           to_string(dtype), to_string(op));
        if (op == ReduceOp::min || op == ReduceOp::avg) {
          EXPECT_EQ(run_case(algorithm(), p, count, dtype, op, false), 0u)
              << fmt::format("{} p={} count={} {} {}", algorithm().name, p, count, to_string(dtype),
                             to_string(op));
        }
      }
    }
  }
}

std::vector<std::string> inproc_algorithms() {
  std::vector<std::string> names;
  for (const AlgorithmInfo& info : algorithms()) {
    if (info.unsupported_reason("inproc", 2, 1).empty()) names.emplace_back(info.name);
  }
  return names;
}

INSTANTIATE_TEST_SUITE_P(
    AllAlgorithms, AllreduceInProcess,
    ::testing::Combine(::testing::ValuesIn(inproc_algorithms()),
                       ::testing::Values(1, 2, 3, 4, 5, 6, 7, 8, 9, 13, 16)),
    [](const ::testing::TestParamInfo<AllreduceInProcess::ParamType>& param_info) {
      return fmt::format("{}_p{}", std::get<0>(param_info.param), std::get<1>(param_info.param));
    });

TEST(RingAllreduce, TinySegmentsPipelineManySteps) {
  // 3-element segments force many in-flight segments per step and segments
  // that straddle uneven chunk ends.
  const AlgorithmInfo& ring = *find_algorithm("ring");
  for (int p : {2, 3, 5, 8}) {
    for (std::size_t count : {std::size_t{1}, std::size_t{17}, std::size_t{1001}}) {
      EXPECT_EQ(run_case(ring, p, count, DType::f32, ReduceOp::sum, false, 12), 0u)
          << "p=" << p << " count=" << count;
      EXPECT_EQ(run_case(ring, p, count, DType::bf16, ReduceOp::sum, true, 6), 0u)
          << "p=" << p << " count=" << count;
    }
  }
}

TEST(Registry, NamesAndCosts) {
  EXPECT_EQ(algorithm_names(),
            "ring, tree, recursive_doubling, rabenseifner, ps_central, "
            "ps_sharded, mpi");
  EXPECT_EQ(find_algorithm("nope"), nullptr);
  EXPECT_FALSE(find_algorithm("mpi")->unsupported_reason("inproc", 4, 10).empty());
  // Spot values of the cost formulas in the algorithms' header comments.
  const CostTerms ring = find_algorithm("ring")->cost(4, 1000);
  EXPECT_DOUBLE_EQ(ring.messages, 6);
  EXPECT_DOUBLE_EQ(ring.bytes, 1500);
  EXPECT_DOUBLE_EQ(ring.reduce_bytes, 750);
  const CostTerms tree = find_algorithm("tree")->cost(5, 1000);
  EXPECT_DOUBLE_EQ(tree.messages, 6);
  EXPECT_DOUBLE_EQ(tree.bytes, 6000);
  const CostTerms rd = find_algorithm("recursive_doubling")->cost(6, 1000);
  EXPECT_DOUBLE_EQ(rd.messages, 4);  // 2 rounds + fold + unfold
  EXPECT_DOUBLE_EQ(rd.reduce_bytes, 3000);
  const CostTerms rab = find_algorithm("rabenseifner")->cost(8, 800);
  EXPECT_DOUBLE_EQ(rab.messages, 6);
  EXPECT_DOUBLE_EQ(rab.bytes, 1400);
  const CostTerms ps = find_algorithm("ps_central")->cost(4, 1000);
  EXPECT_DOUBLE_EQ(ps.bytes, 6000);
  EXPECT_EQ(ceil_log2(1), 0);
  EXPECT_EQ(ceil_log2(5), 3);
  EXPECT_EQ(floor_log2(5), 2);
  EXPECT_EQ(floor_log2(16), 4);
}

TEST(BytesSent, RingAndShardedMoveTheirModelBytes) {
  // The transport counts what really left each rank: for the bandwidth-
  // optimal algorithms that is 2(p−1)/p·n per rank, as their cost says.
  for (const char* name : {"ring", "ps_sharded", "rabenseifner"}) {
    const AlgorithmInfo& algorithm = *find_algorithm(name);
    const int p = 4;
    const std::size_t count = 4096;
    std::atomic<std::uint64_t> max_sent{0};
    run_in_process(p, [&](Transport& transport) {
      std::vector<std::byte> in(count * sizeof(float));
      CheckPattern(p, 0).fill(DType::f32, transport.rank(), 0, in);
      std::vector<std::byte> out(in.size());
      auto allreduce = algorithm.build(transport, {DType::f32, ReduceOp::sum, count, 0}, in, out);
      transport.reset_counters();
      allreduce->run();
      std::uint64_t seen = max_sent.load();
      while (transport.bytes_sent() > seen &&
             !max_sent.compare_exchange_weak(seen, transport.bytes_sent())) {
      }
    });
    EXPECT_DOUBLE_EQ(static_cast<double>(max_sent.load()), algorithm.cost(p, count * 4.0).bytes)
        << name;
  }
}

}  // namespace
}  // namespace collbench
