// Every algorithm of every collective that runs without MPI, on the
// in-process transport, for every rank count 1..16 of interest, awkward
// counts (0, 1, p−1, p, p+1, odd, a million-odd), every dtype, sum and max
// (min and avg on a smaller grid), out of place and in place.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <set>
#include <tuple>

#include "collbench/collectives/collective.h"
#include "collbench/core/check.h"
#include "collbench/transport/forwarding_transport.h"
#include "collbench/transport/inproc_transport.h"
#include "collective_case.h"

namespace collbench {
namespace {

// Wrong elements over every rank of `ranks` threads (run_checked_calls).
std::size_t run_case(const CollectiveInfo& collective, const AlgorithmInfo& algorithm, int ranks,
                     std::size_t count, DType dtype, ReduceOp op, bool in_place,
                     std::size_t segment_bytes = 0) {
  std::atomic<std::size_t> wrong{0};
  run_in_process(ranks, [&](Transport& transport) {
    wrong += testing::run_checked_calls(transport, collective, algorithm, count, dtype, op,
                                        in_place, segment_bytes);
  });
  return wrong;
}

const CollectiveInfo& allreduce() { return *find_collective("allreduce"); }
const AlgorithmInfo& allreduce_algorithm(std::string_view name) {
  return *allreduce().find_algorithm(name);
}

// (collective, algorithm, ranks)
using Param = std::tuple<std::string, std::string, int>;

class CollectiveInProcess : public ::testing::TestWithParam<Param> {
 protected:
  const CollectiveInfo& collective() const { return *find_collective(std::get<0>(GetParam())); }
  const AlgorithmInfo& algorithm() const {
    return *collective().find_algorithm(std::get<1>(GetParam()));
  }
  int ranks() const { return std::get<2>(GetParam()); }
  std::string where(std::size_t count, DType dtype, ReduceOp op) const {
    return fmt::format("{} {} p={} count={} {} {}", collective().name, algorithm().name, ranks(),
                       count, to_string(dtype), to_string(op));
  }
};

TEST_P(CollectiveInProcess, SumAndMaxEveryDtypeAndCount) {
  const int p = ranks();
  for (std::size_t count :
       {std::size_t{0}, std::size_t{1}, static_cast<std::size_t>(p - 1),
        static_cast<std::size_t>(p), static_cast<std::size_t>(p + 1), std::size_t{4099}}) {
    for (DType dtype : kAllDTypes) {
      for (ReduceOp op : {ReduceOp::sum, ReduceOp::max}) {
        EXPECT_EQ(run_case(collective(), algorithm(), p, count, dtype, op, false), 0u)
            << where(count, dtype, op);
      }
    }
  }
}

TEST_P(CollectiveInProcess, MinAvgAndInPlace) {
  const int p = ranks();
  for (std::size_t count : {std::size_t{1}, static_cast<std::size_t>(p + 1), std::size_t{4099}}) {
    for (DType dtype : kAllDTypes) {
      for (ReduceOp op : kAllReduceOps) {
        EXPECT_EQ(run_case(collective(), algorithm(), p, count, dtype, op, true), 0u)
            << "in place: " << where(count, dtype, op);
        if (op == ReduceOp::min || op == ReduceOp::avg) {
          EXPECT_EQ(run_case(collective(), algorithm(), p, count, dtype, op, false), 0u)
              << where(count, dtype, op);
        }
      }
    }
  }
}

// A million-odd elements, out of place: many segments and uneven blocks at
// scale. It costs more than all the smaller counts together (~1.7 s of CPU
// per algorithm at p = 3), so it has its own rank counts.
class CollectiveInProcessMillion : public CollectiveInProcess {};

TEST_P(CollectiveInProcessMillion, SumAndMaxEveryDtype) {
  // The sanitizer run (scripts/test.sh --full) sets COLLBENCH_QUICK_TESTS:
  // under ASan this case costs minutes and adds no code path that the
  // smaller counts and the tiny-segment test do not already take.
  if (std::getenv("COLLBENCH_QUICK_TESTS") != nullptr) {
    GTEST_SKIP() << "COLLBENCH_QUICK_TESTS: the million-element case is left out";
  }
  constexpr std::size_t count = 1048579;
  for (DType dtype : kAllDTypes) {
    for (ReduceOp op : {ReduceOp::sum, ReduceOp::max}) {
      EXPECT_EQ(run_case(collective(), algorithm(), ranks(), count, dtype, op, false), 0u)
          << where(count, dtype, op);
    }
  }
}

// Every in-process algorithm of every collective at each rank count of
// interest that `keep` keeps.
std::vector<Param> inproc_cases(bool (*keep)(int ranks)) {
  std::vector<Param> cases;
  for (const CollectiveInfo& collective : collectives()) {
    for (const AlgorithmInfo& info : collective.algorithms) {
      if (!info.unsupported_reason("inproc", 2, 1).empty()) continue;
      for (int p : {1, 2, 3, 4, 5, 6, 7, 8, 9, 13, 16}) {
        if (keep(p)) cases.emplace_back(std::string(collective.name), std::string(info.name), p);
      }
    }
  }
  return cases;
}

std::string case_name(const ::testing::TestParamInfo<Param>& param_info) {
  return fmt::format("{}_{}_p{}", std::get<0>(param_info.param), std::get<1>(param_info.param),
                     std::get<2>(param_info.param));
}

// Instances named Full run only in scripts/test.sh --full (tests/CMakeLists.txt,
// COLLBENCH_FULL_GTESTS): the default tier keeps every algorithm at p <= 8
// (powers of two and not, odd and even) and the million elements at p = 3;
// the rest costs several times that on two cores.
bool small(int p) { return p <= 8; }
bool large(int p) { return !small(p); }
bool million_default(int p) { return p == 3; }
bool million_full(int p) { return !million_default(p); }
INSTANTIATE_TEST_SUITE_P(AllAlgorithms, CollectiveInProcess,
                         ::testing::ValuesIn(inproc_cases(small)), case_name);
INSTANTIATE_TEST_SUITE_P(Full, CollectiveInProcess, ::testing::ValuesIn(inproc_cases(large)),
                         case_name);
INSTANTIATE_TEST_SUITE_P(AllAlgorithms, CollectiveInProcessMillion,
                         ::testing::ValuesIn(inproc_cases(million_default)), case_name);
INSTANTIATE_TEST_SUITE_P(Full, CollectiveInProcessMillion,
                         ::testing::ValuesIn(inproc_cases(million_full)), case_name);

// The messages one rank of `algorithm` sends in one call of `count` f32
// elements in segments of `segment_bytes`, at `ranks` ranks.
std::uint64_t messages_of_rank_0(std::string_view collective_name, std::string_view algorithm_name,
                                 int ranks, std::size_t count, std::size_t segment_bytes) {
  const CollectiveInfo& collective = *find_collective(collective_name);
  const AlgorithmInfo& algorithm = *collective.find_algorithm(algorithm_name);
  std::atomic<std::uint64_t> messages{0};
  run_in_process(ranks, [&](InstrumentedTransport& transport) {
    const int rank = transport.rank();
    const CollectiveSpec spec{DType::f32, ReduceOp::sum, count, segment_bytes, {}};
    std::vector<std::byte> in(collective.input_block(spec, ranks, rank).count * 4);
    std::vector<std::byte> out(collective.output_block(spec, ranks, rank).count * 4);
    const auto built = algorithm.build(transport, spec, in, out);
    transport.reset_counters();
    built->run();
    if (rank == 0) messages = transport.messages_sent();
  });
  return messages;
}

TEST(Segments, ARelayWithNothingToPipelineSendsItsBlockWhole) {
  // 64 elements in 16-byte segments: a block of 32 would be 8 segments.
  // allgather's ring at 2 ranks: one step, its arrival neither forwarded nor
  // reduced, so one message. At 3 ranks the first step's arrival is
  // forwarded: segmented (2 steps, blocks of 21 elements in 6 segments). reduce_scatter's
  // one step at 2 ranks reduces each segment as the next arrives: segmented.
  EXPECT_EQ(messages_of_rank_0("allgather", "ring", 2, 64, 16), 1u);
  EXPECT_EQ(messages_of_rank_0("allgather", "ring", 3, 63, 16), 2u * 6u);
  EXPECT_EQ(messages_of_rank_0("reduce_scatter", "ring", 2, 64, 16), 8u);
  EXPECT_EQ(messages_of_rank_0("allreduce", "ring", 2, 64, 16), 2u * 8u);
}

TEST(Segments, TinySegmentsPipelineManySteps) {
  // 3-element segments force many in-flight segments per step, segments
  // that straddle uneven block ends and, in allreduce, segments handed from
  // the reduce-scatter phase to the allgather while the rest still arrive;
  // in the chain, many segments in flight along it. Every algorithm, in
  // place too: those that do not segment ignore the segment size.
  for (const CollectiveInfo& collective : collectives()) {
    for (const AlgorithmInfo& algorithm : collective.algorithms) {
      if (!algorithm.unsupported_reason("inproc", 2, 1).empty()) continue;
      for (int p : {2, 3, 5, 8}) {
        for (std::size_t count : {std::size_t{1}, std::size_t{17}, std::size_t{1001}}) {
          const std::string where =
              fmt::format("{} {} p={} count={}", collective.name, algorithm.name, p, count);
          EXPECT_EQ(run_case(collective, algorithm, p, count, DType::f32, ReduceOp::sum, false, 12),
                    0u)
              << where;
          EXPECT_EQ(run_case(collective, algorithm, p, count, DType::bf16, ReduceOp::sum, true, 6),
                    0u)
              << where << " in place";
        }
      }
    }
  }
}

// The value at p of a busbw formula as --help prints it: "1", "(p-1)/p"
// or "k(p-1)/p".
double evaluate_bus_formula(std::string_view formula, int p) {
  if (formula == "1") return 1.0;
  const std::size_t share = formula.find("(p-1)/p");
  EXPECT_NE(share, std::string_view::npos) << formula;
  EXPECT_EQ(share + std::string_view("(p-1)/p").size(), formula.size()) << formula;
  const double multiplier = share == 0 ? 1.0 : std::stod(std::string(formula.substr(0, share)));
  return multiplier * (p - 1) / p;
}

TEST(Registry, BusBandwidthFormulasSayWhatTheFactorsCompute) {
  for (const CollectiveInfo& collective : collectives()) {
    for (const int p : {1, 2, 3, 7, 16}) {
      EXPECT_DOUBLE_EQ(collective.bus_bandwidth_factor(p),
                       evaluate_bus_formula(collective.bus_bandwidth_formula, p))
          << collective.name << " p=" << p;
    }
  }
}

TEST(Registry, NamesAndCosts) {
  EXPECT_EQ(collective_names(),
            "allreduce, reduce_scatter, allgather, broadcast, reduce, alltoall, alltoallv");
  // The table is the one list of names: here only what every entry must
  // satisfy, so that adding an algorithm touches no test.
  for (const CollectiveInfo& collective : collectives()) {
    std::set<std::string_view> names;
    for (const AlgorithmInfo& algorithm : collective.algorithms) {
      EXPECT_TRUE(names.insert(algorithm.name).second)
          << collective.name << " lists " << algorithm.name << " twice";
      EXPECT_EQ(algorithm.name.find_first_not_of("abcdefghijklmnopqrstuvwxyz_"),
                std::string_view::npos)
          << algorithm.name << ": names are lowercase, the same in file, CLI and CSV";
      EXPECT_EQ(collective.find_algorithm(algorithm.name), &algorithm);
    }
  }
  EXPECT_EQ(find_collective("nope"), nullptr);
  EXPECT_EQ(allreduce().find_algorithm("nope"), nullptr);
  for (const CollectiveInfo& collective : collectives()) {
    const AlgorithmInfo* mpi = collective.find_algorithm(kMpiLibraryAlgorithm);
    ASSERT_NE(mpi, nullptr) << collective.name;
    EXPECT_EQ(&collective.algorithms.back(), mpi) << collective.name << ": mpi is listed last";
    EXPECT_FALSE(mpi->unsupported_reason("inproc", 4, 10).empty());
    // The library's own is priced at the collective's lower bound.
    const CostTerms bound = collective.lower_bound(6, 600);
    const CostTerms library = mpi->cost(6, 600);
    EXPECT_DOUBLE_EQ(library.messages, bound.messages);
    EXPECT_DOUBLE_EQ(library.bytes, bound.bytes);
    EXPECT_DOUBLE_EQ(library.reduce_bytes, bound.reduce_bytes);
    // This test links the MPI-free collectives alone: the row is listed, and
    // building it says what the program lacks.
    EXPECT_TRUE(mpi->unsupported_reason("mpi", 4, 10).empty()) << collective.name;
    run_in_process(1, [&](Transport& transport) {
      std::vector<std::byte> buffer(64);
      try {
        mpi->build(transport, {}, buffer, buffer);
        ADD_FAILURE() << collective.name << ": built without the library's collectives";
      } catch (const std::invalid_argument& error) {
        EXPECT_NE(std::string(error.what()).find("collbench::collectives_mpi"), std::string::npos)
            << error.what();
      }
    });
  }
  // Spot values of the cost formulas in the algorithms' header comments.
  const CostTerms ring = allreduce_algorithm("ring").cost(4, 1000);
  EXPECT_DOUBLE_EQ(ring.messages, 6);
  EXPECT_DOUBLE_EQ(ring.bytes, 1500);
  EXPECT_DOUBLE_EQ(ring.reduce_bytes, 750);
  const CostTerms tree = allreduce_algorithm("tree").cost(5, 1000);
  EXPECT_DOUBLE_EQ(tree.messages, 6);
  EXPECT_DOUBLE_EQ(tree.bytes, 6000);
  const CostTerms rd = allreduce_algorithm("recursive_doubling").cost(6, 1000);
  EXPECT_DOUBLE_EQ(rd.messages, 4);  // 2 rounds + fold + unfold
  EXPECT_DOUBLE_EQ(rd.reduce_bytes, 3000);
  const CostTerms rab = allreduce_algorithm("rabenseifner").cost(8, 800);
  EXPECT_DOUBLE_EQ(rab.messages, 6);
  EXPECT_DOUBLE_EQ(rab.bytes, 1400);
  const CostTerms ps = allreduce_algorithm("ps_central").cost(4, 1000);
  EXPECT_DOUBLE_EQ(ps.bytes, 6000);
  const CostTerms rs_ring =
      find_collective("reduce_scatter")->find_algorithm("ring")->cost(4, 1000);
  EXPECT_DOUBLE_EQ(rs_ring.messages, 3);
  EXPECT_DOUBLE_EQ(rs_ring.bytes, 750);
  EXPECT_DOUBLE_EQ(rs_ring.reduce_bytes, 750);
  const CostTerms halving =
      find_collective("reduce_scatter")->find_algorithm("recursive_halving")->cost(6, 600);
  EXPECT_DOUBLE_EQ(halving.messages, 4);  // 2 rounds + fold + unfold
  // Fold n, rounds of the largest ranges of 2 and 1 participants (4/6 and
  // 2/6 of n: the first participants absorbed a rank each), unfold n/p.
  EXPECT_DOUBLE_EQ(halving.bytes, 600 + 600 + 100);
  EXPECT_DOUBLE_EQ(halving.reduce_bytes, 600 + 600);
  const CostTerms doubling =
      find_collective("allgather")->find_algorithm("recursive_doubling")->cost(8, 800);
  EXPECT_DOUBLE_EQ(doubling.messages, 3);
  EXPECT_DOUBLE_EQ(doubling.bytes, 700);
  EXPECT_DOUBLE_EQ(doubling.reduce_bytes, 0);
  // Not a power of two: fold n/p, rounds of the largest ranges of 1 and 2
  // participants (2/6 and 4/6 of n), unfold n.
  const CostTerms doubling6 =
      find_collective("allgather")->find_algorithm("recursive_doubling")->cost(6, 600);
  EXPECT_DOUBLE_EQ(doubling6.messages, 4);
  EXPECT_DOUBLE_EQ(doubling6.bytes, 100 + 600 + 600);
  const CollectiveInfo& broadcast = *find_collective("broadcast");
  const CostTerms binomial_broadcast = broadcast.find_algorithm("binomial")->cost(5, 1000);
  EXPECT_DOUBLE_EQ(binomial_broadcast.messages, 3);
  EXPECT_DOUBLE_EQ(binomial_broadcast.bytes, 3000);
  const CostTerms van_de_geijn = broadcast.find_algorithm("scatter_allgather")->cost(4, 1000);
  EXPECT_DOUBLE_EQ(van_de_geijn.messages, 2 + 3);
  EXPECT_DOUBLE_EQ(van_de_geijn.bytes, 1500);
  // p = 5: the root's scatter messages carry 1, 2 and 1 blocks, p − 1 in all.
  const CostTerms van_de_geijn5 = broadcast.find_algorithm("scatter_allgather")->cost(5, 1000);
  EXPECT_DOUBLE_EQ(van_de_geijn5.messages, 3 + 4);
  EXPECT_DOUBLE_EQ(van_de_geijn5.bytes, 1600);
  // 2 MiB in 4 segments of 512 KiB through 5 ranks: 3 + 4 transfers.
  const CostTerms chain = broadcast.find_algorithm("chain")->cost(5, 2 << 20);
  EXPECT_DOUBLE_EQ(chain.messages, 7);
  EXPECT_DOUBLE_EQ(chain.bytes, 7 * (512 << 10));
  const CollectiveInfo& reduce = *find_collective("reduce");
  const CostTerms binomial_reduce = reduce.find_algorithm("binomial")->cost(8, 1000);
  EXPECT_DOUBLE_EQ(binomial_reduce.messages, 3);
  EXPECT_DOUBLE_EQ(binomial_reduce.reduce_bytes, 3000);
  const CostTerms rabenseifner = reduce.find_algorithm("reduce_scatter_gather")->cost(4, 1000);
  EXPECT_DOUBLE_EQ(rabenseifner.messages, 3 + 2);
  EXPECT_DOUBLE_EQ(rabenseifner.bytes, 1500);
  EXPECT_DOUBLE_EQ(rabenseifner.reduce_bytes, 750);
  // p = 6: the gather's largest messages carry 1, 2 and 2 blocks.
  const CostTerms rabenseifner6 = reduce.find_algorithm("reduce_scatter_gather")->cost(6, 600);
  EXPECT_DOUBLE_EQ(rabenseifner6.messages, 5 + 3);
  EXPECT_DOUBLE_EQ(rabenseifner6.bytes, 500 + 500);
  EXPECT_DOUBLE_EQ(broadcast.lower_bound(1, 1000).bytes, 0);
  EXPECT_DOUBLE_EQ(reduce.lower_bound(3, 900).bytes, 900);
  const CostTerms rs_pairwise =
      find_collective("reduce_scatter")->find_algorithm("pairwise")->cost(4, 1000);
  EXPECT_DOUBLE_EQ(rs_pairwise.messages, 3);
  EXPECT_DOUBLE_EQ(rs_pairwise.bytes, 750);
  EXPECT_DOUBLE_EQ(rs_pairwise.reduce_bytes, 750);
  const CollectiveInfo& alltoall = *find_collective("alltoall");
  const CostTerms pairwise = alltoall.find_algorithm("pairwise")->cost(5, 1000);
  EXPECT_DOUBLE_EQ(pairwise.messages, 4);
  EXPECT_DOUBLE_EQ(pairwise.bytes, 800);
  const CostTerms bruck = alltoall.find_algorithm("bruck")->cost(8, 800);
  EXPECT_DOUBLE_EQ(bruck.messages, 3);
  EXPECT_DOUBLE_EQ(bruck.bytes, 1200);  // lg p/2·n
  const CostTerms bruck6 = alltoall.find_algorithm("bruck")->cost(6, 600);
  EXPECT_DOUBLE_EQ(bruck6.messages, 3);
  EXPECT_DOUBLE_EQ(bruck6.bytes, 700);  // popcounts of 1..5: 7 blocks of n/p
  const CostTerms linear = alltoall.find_algorithm("linear")->cost(4, 1000);
  EXPECT_DOUBLE_EQ(linear.messages, 3);
  EXPECT_DOUBLE_EQ(linear.bytes, 750);
  EXPECT_DOUBLE_EQ(alltoall.lower_bound(5, 1000).messages, 3);
  EXPECT_DOUBLE_EQ(alltoall.lower_bound(5, 1000).bytes, 800);
  EXPECT_DOUBLE_EQ(alltoall.bus_bandwidth_factor(4), 0.75);
  EXPECT_FALSE(alltoall.reduces);
  EXPECT_EQ(ceil_log2(1), 0);
  EXPECT_EQ(ceil_log2(5), 3);
  EXPECT_EQ(floor_log2(5), 2);
  EXPECT_EQ(floor_log2(16), 4);
}

TEST(BytesSent, BandwidthOptimalAlgorithmsMoveTheirModelBytes) {
  // The transport counts what really left each rank: for the bandwidth-
  // optimal algorithms (those whose cost has the collective's lower-bound β
  // term at a power-of-two p, where nothing folds) every rank sends what
  // their cost says: 2(p−1)/p·n for allreduce, (p−1)/p·n for
  // reduce_scatter, allgather and alltoall.
  const int p = 4;
  const std::size_t count = 4096;
  int checked = 0;
  for (const CollectiveInfo& collective : collectives()) {
    for (const AlgorithmInfo& algorithm : collective.algorithms) {
      if (!algorithm.unsupported_reason("inproc", p, count).empty()) continue;
      const double n = count * 4.0;
      if (algorithm.cost(p, n).bytes != collective.lower_bound(p, n).bytes) continue;
      ++checked;
      const std::string_view name = algorithm.name;
      const std::string_view collective_name = collective.name;
      std::atomic<std::uint64_t> max_sent{0};
      run_in_process(p, [&](InstrumentedTransport& transport) {
        const int rank = transport.rank();
        const CollectiveSpec spec{DType::f32, ReduceOp::sum, count, 0, {}};
        std::vector<std::byte> in(collective.input_block(spec, p, rank).count * sizeof(float));
        fill_input(collective, CheckPattern(p, 0), spec, rank, 0, in);
        std::vector<std::byte> out(collective.output_block(spec, p, rank).count * sizeof(float));
        auto call = algorithm.build(transport, spec, in, out);
        transport.reset_counters();
        call->run();
        std::uint64_t seen = max_sent.load();
        while (transport.bytes_sent() > seen &&
               !max_sent.compare_exchange_weak(seen, transport.bytes_sent())) {
        }
      });
      EXPECT_DOUBLE_EQ(static_cast<double>(max_sent.load()), algorithm.cost(p, count * 4.0).bytes)
          << collective_name << " " << name;
    }
  }
  // ring, ps_sharded, rabenseifner; reduce_scatter's ring, recursive
  // halving and pairwise; allgather's ring and recursive doubling;
  // alltoall's pairwise and linear at least.
  EXPECT_GE(checked, 10);
}

TEST(BytesSent, AlltoallAlgorithmsMoveTheirModelBytes) {
  // Bruck's bytes are not the lower bound's, so the test above skips it:
  // here every hand-written alltoall, at powers of two and not, on counts p
  // divides (where the cost's bytes are exact), every rank sending them.
  const CollectiveInfo& alltoall = *find_collective("alltoall");
  int checked = 0;
  for (const AlgorithmInfo& algorithm : alltoall.algorithms) {
    if (!algorithm.unsupported_reason("inproc", 2, 1).empty()) continue;
    ++checked;
    for (const int p : {2, 3, 4, 6, 8, 13}) {
      const std::size_t count = static_cast<std::size_t>(p) * 100;
      const double expected = algorithm.cost(p, count * 4.0).bytes;
      std::atomic<int> matching{0};
      run_in_process(p, [&](InstrumentedTransport& transport) {
        std::vector<std::byte> in(count * sizeof(float));
        std::vector<std::byte> out(in.size());
        auto call = algorithm.build(transport, {DType::f32, ReduceOp::sum, count, 0, {}}, in, out);
        transport.reset_counters();
        call->run();
        if (static_cast<double>(transport.bytes_sent()) == expected) ++matching;
      });
      EXPECT_EQ(matching.load(), p)
          << algorithm.name << " p=" << p << ": ranks sending " << expected << " bytes, the cost's";
    }
  }
  EXPECT_EQ(checked, 3);  // pairwise, bruck, linear
}

TEST(AlltoallLayout, BlocksTileBothVectorsAndAgreeBetweenSenderAndReceiver) {
  for (int p = 1; p <= 17; ++p) {
    for (const std::size_t count :
         {std::size_t{0}, std::size_t{1}, static_cast<std::size_t>(p) - 1,
          static_cast<std::size_t>(p), static_cast<std::size_t>(3 * p + 2)}) {
      const std::string where = fmt::format("p={} count={}", p, count);
      for (int rank = 0; rank < p; ++rank) {
        // Destination order in in, source order in out, no gap, no overlap.
        std::size_t sent_end = 0;
        std::size_t received_end = 0;
        for (int peer = 0; peer < p; ++peer) {
          const Block sent = alltoall_send_block(count, p, rank, peer);
          const Block received = alltoall_receive_block(count, p, rank, peer);
          EXPECT_EQ(sent.offset, sent_end) << where << " rank " << rank << " to " << peer;
          EXPECT_EQ(received.offset, received_end) << where << " rank " << rank << " from " << peer;
          sent_end += sent.count;
          received_end += received.count;
          // The block to the rank d ahead is part d of the partition, and
          // what `peer` sends `rank` is what `rank` receives from it.
          const int distance = (peer - rank + p) % p;
          EXPECT_EQ(sent.count, partition(count, p, distance).count) << where;
          EXPECT_EQ(alltoall_receive_block(count, p, peer, rank).count, sent.count) << where;
          if (count % static_cast<std::size_t>(p) == 0) {
            // MPI_Alltoall's layout.
            const std::size_t block = count / static_cast<std::size_t>(p);
            EXPECT_EQ(sent, (Block{static_cast<std::size_t>(peer) * block, block})) << where;
            EXPECT_EQ(received, (Block{static_cast<std::size_t>(peer) * block, block})) << where;
          }
        }
        EXPECT_EQ(sent_end, count) << where;
        EXPECT_EQ(received_end, count) << where;
      }
    }
  }
  // Spot values at p = 3, count = 4 (parts 2, 1, 1): rank 1 sends rank 0
  // part 2 (1 element) at 0, itself part 0 (2) at 1, rank 2 part 1 (1) at
  // 3; rank 0 receives from rank 0 part 0 (2) at 0, from rank 1 part 2 (1)
  // at 2, from rank 2 part 1 (1) at 3.
  EXPECT_EQ(alltoall_send_block(4, 3, 1, 0), (Block{0, 1}));
  EXPECT_EQ(alltoall_send_block(4, 3, 1, 1), (Block{1, 2}));
  EXPECT_EQ(alltoall_send_block(4, 3, 1, 2), (Block{3, 1}));
  EXPECT_EQ(alltoall_receive_block(4, 3, 0, 0), (Block{0, 2}));
  EXPECT_EQ(alltoall_receive_block(4, 3, 0, 1), (Block{2, 1}));
  EXPECT_EQ(alltoall_receive_block(4, 3, 0, 2), (Block{3, 1}));
}

TEST(AlltoallvLayout, SharesFollowTheSkewAndBlocksAgreeBetweenSenderAndReceiver) {
  for (int p = 1; p <= 17; ++p) {
    for (const double skew : {0.0, 0.5, 1.2, 3.0}) {
      for (const std::size_t count :
           {std::size_t{0}, std::size_t{1}, static_cast<std::size_t>(p) + 1, std::size_t{4099}}) {
        for (const bool returns : {false, true}) {
          const CollectiveSpec spec{DType::f32, ReduceOp::sum, count, 0, {skew, returns}};
          const std::string where =
              fmt::format("p={} skew={} count={} returns={}", p, skew, count, returns);
          std::size_t total = 0;
          for (int j = 0; j < p; ++j) {
            const std::size_t share = alltoallv_share(spec, p, j);
            total += share;
            // Uniform: count/p each, give or take the rounding.
            if (skew == 0) {
              EXPECT_LE(share - count / p, 1u) << where;
            }
            // More popular ranks first, up to one element of rounding.
            if (j > 0) {
              EXPECT_LE(share, alltoallv_share(spec, p, j - 1) + 1) << where;
            }
          }
          EXPECT_EQ(total, count) << where;
          for (int rank = 0; rank < p; ++rank) {
            std::size_t sent_end = 0;
            std::size_t received_end = 0;
            for (int peer = 0; peer < p; ++peer) {
              const Block sent = alltoallv_send_block(spec, p, rank, peer);
              const Block received = alltoallv_receive_block(spec, p, rank, peer);
              EXPECT_EQ(sent.offset, sent_end) << where << " rank " << rank << " to " << peer;
              EXPECT_EQ(received.offset, received_end) << where;
              EXPECT_EQ(alltoallv_receive_block(spec, p, peer, rank).count, sent.count) << where;
              sent_end += sent.count;
              received_end += received.count;
            }
            const CollectiveInfo& alltoallv = *find_collective("alltoallv");
            EXPECT_EQ(alltoallv.input_block(spec, p, rank), (Block{0, sent_end})) << where;
            EXPECT_EQ(alltoallv.output_block(spec, p, rank), (Block{0, received_end})) << where;
            // The token side holds the whole vector; the expert side p shares.
            const std::size_t expert_side =
                static_cast<std::size_t>(p) * alltoallv_share(spec, p, rank);
            EXPECT_EQ(returns ? received_end : sent_end, count) << where;
            EXPECT_EQ(returns ? sent_end : received_end, expert_side) << where;
          }
        }
      }
    }
  }
  // Spot values: p = 2, skew 1: weights 1 and 1/2, shares 6 and 4 of 10;
  // rank 1 dispatches 6 at 0 to rank 0 and 4 at 6 to itself; rank 0
  // receives rank 1's 6 at 6.
  const CollectiveSpec skewed{DType::f32, ReduceOp::sum, 10, 0, {1.0, false}};
  EXPECT_EQ(alltoallv_share(skewed, 2, 0), 6u);
  EXPECT_EQ(alltoallv_share(skewed, 2, 1), 4u);
  EXPECT_EQ(alltoallv_send_block(skewed, 2, 1, 0), (Block{0, 6}));
  EXPECT_EQ(alltoallv_send_block(skewed, 2, 1, 1), (Block{6, 4}));
  EXPECT_EQ(alltoallv_receive_block(skewed, 2, 0, 1), (Block{6, 6}));
  EXPECT_EQ(alltoallv_receive_block(skewed, 2, 1, 0), (Block{0, 4}));
}

TEST(AlltoallvRouting, SkewedDispatchAndCombineAreCorrectInAndOutOfPlace) {
  // The correctness matrix runs alltoallv uniformly; here every
  // hand-written alltoallv on skewed routings both ways, where the shares,
  // and the expert side's buffer, differ by rank.
  const CollectiveInfo& alltoallv = *find_collective("alltoallv");
  int checked = 0;
  for (const AlgorithmInfo& algorithm : alltoallv.algorithms) {
    if (!algorithm.unsupported_reason("inproc", 2, 1).empty()) continue;
    ++checked;
    for (const int p : {1, 2, 3, 5, 8, 13, 16}) {
      for (const double skew : {0.5, 1.2, 3.0}) {
        for (const bool returns : {false, true}) {
          for (const std::size_t count :
               {std::size_t{1}, static_cast<std::size_t>(p) + 1, std::size_t{4099}}) {
            for (const bool in_place : {false, true}) {
              std::atomic<std::size_t> wrong{0};
              run_in_process(p, [&](Transport& transport) {
                wrong +=
                    testing::run_checked_calls(transport, alltoallv, algorithm, count, DType::f32,
                                               ReduceOp::sum, in_place, 0, {skew, returns});
              });
              EXPECT_EQ(wrong.load(), 0u)
                  << fmt::format("{} p={} skew={} returns={} count={} in place={}", algorithm.name,
                                 p, skew, returns, count, in_place);
            }
          }
        }
      }
    }
  }
  EXPECT_GE(checked, 1);
}

// Forwards to the in-process transport and records the tag of every send
// and receive, and every send's data.
class TransportRecorder final : public ForwardingTransport {
 public:
  explicit TransportRecorder(Transport& inner) : ForwardingTransport(inner) {}
  RequestId isend(std::span<const std::byte> data, int peer, int tag) override {
    tags.insert(tag);
    sends.push_back(data);
    return ForwardingTransport::isend(data, peer, tag);
  }
  RequestId irecv(std::span<std::byte> data, int peer, int tag) override {
    tags.insert(tag);
    return ForwardingTransport::irecv(data, peer, tag);
  }
  std::set<int> tags;
  std::vector<std::span<const std::byte>> sends;
};

TEST(SendSources, AllgathersSendTheOwnBlockFromIn) {
  // The own block's copy in out was just written; a peer reading it from
  // another die waits for those lines (docs/performance.md). So the own
  // block alone (the first round's send) goes from in, never from its copy.
  for (const std::string_view name : {"ring", "recursive_doubling", "bruck"}) {
    const AlgorithmInfo& algorithm = *find_collective("allgather")->find_algorithm(name);
    for (const int ranks : {2, 4}) {
      run_in_process(ranks, [&](Transport& inner) {
        TransportRecorder transport(inner);
        const CollectiveSpec spec{DType::f32, ReduceOp::sum, 64, 0, {}};
        std::vector<std::byte> in(64 / static_cast<std::size_t>(ranks) * 4);
        std::vector<std::byte> out(64 * 4);
        algorithm.build(transport, spec, in, out)->run();
        ASSERT_FALSE(transport.sends.empty()) << name;
        EXPECT_EQ(transport.sends.front().data(), in.data()) << name << " p=" << ranks;
        const std::byte* own_copy = out.data() + transport.rank() * in.size();
        for (std::size_t k = 0; k < transport.sends.size(); ++k) {
          const bool own_block_from_out =
              transport.sends[k].data() == own_copy && transport.sends[k].size() == in.size();
          EXPECT_FALSE(own_block_from_out) << name << " p=" << ranks << " send " << k;
        }
      });
    }
  }
}

TEST(TagSlots, EveryAlgorithmObjectHasTagsOfItsOwn) {
  // Two objects of every algorithm built one after the other on one
  // transport: no tag in common (a late message of one cannot match a
  // receive of the other), every tag in the slots' range.
  for (const CollectiveInfo& collective : collectives()) {
    for (const AlgorithmInfo& algorithm : collective.algorithms) {
      if (!algorithm.unsupported_reason("inproc", 5, 64).empty()) continue;
      run_in_process(5, [&](Transport& inner) {
        std::set<int> first_tags;
        TransportRecorder transport(inner);
        for (int object = 0; object < 2; ++object) {
          transport.tags.clear();
          const int rank = transport.rank();
          const std::size_t count = 64;
          const CollectiveSpec spec{DType::f32, ReduceOp::sum, count, 0, {}};
          std::vector<std::byte> in(collective.input_block(spec, 5, rank).count * 4);
          std::vector<std::byte> out(collective.output_block(spec, 5, rank).count * 4);
          algorithm.build(transport, spec, in, out)->run();
          for (const int tag : transport.tags) {
            EXPECT_GE(tag, kFirstSlotTag) << algorithm.name;
            EXPECT_LE(tag, kMaxTag) << algorithm.name;
            if (object == 1) {
              EXPECT_FALSE(first_tags.contains(tag)) << collective.name << " " << algorithm.name
                                                     << ": tag " << tag << " used by two objects";
            }
          }
          if (object == 0) first_tags = transport.tags;
        }
      });
    }
  }
}

TEST(TagSlots, SlotsAreConsecutiveAndWrapWithinTheTagRange) {
  run_in_process(1, [](Transport& transport) {
    const int first = transport.take_tag_slot();
    EXPECT_EQ(first, kFirstSlotTag);
    EXPECT_EQ(transport.take_tag_slot(), kFirstSlotTag + kTagsPerSlot);
    for (int slot = 2; slot < kTagSlots; ++slot) {
      EXPECT_LE(transport.take_tag_slot() + kTagsPerSlot - 1, kMaxTag);
    }
    EXPECT_EQ(transport.take_tag_slot(), kFirstSlotTag);  // wrapped
  });
}

}  // namespace
}  // namespace collbench
