// The collectives' correctness suite under mpirun: every algorithm of every
// collective that the chosen transport supports (including `mpi` on the MPI
// transport), at awkward counts, every dtype and operation, out of place and
// in place.
//
// Usage: mpirun -np N collective_mpi_test [--transport mpi|ofi] [--ofi-provider NAME]
//        [gtest flags]
// Every rank runs the same tests; only rank 0 prints. The exit code is
// non-zero if any rank saw a failure. Waits are bounded (30 s), so a broken
// schedule fails instead of hanging CTest.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <mpi.h>

#include <cstdlib>
#include <cstring>

#include "collbench/collectives/collective.h"
#include "collbench/collectives/mpi_library.h"
#include "collbench/core/check.h"
#include "collbench/transport/mpi_transport.h"
#include "collbench/transport/transport_factory.h"
#include "collective_case.h"
#include "transport_case.h"

namespace collbench {
namespace {

TransportOptions g_options;

// (collective, algorithm)
using Param = std::pair<std::string, std::string>;

class CollectiveOverTransport : public ::testing::TestWithParam<Param> {
 protected:
  static void SetUpTestSuite() {
    transport_ = make_transport(g_options).release();
    transport_->set_timeout(std::chrono::seconds(30));
  }
  static void TearDownTestSuite() {
    delete transport_;
    transport_ = nullptr;
  }
  static InstrumentedTransport* transport_;
};
InstrumentedTransport* CollectiveOverTransport::transport_ = nullptr;

TEST_P(CollectiveOverTransport, EveryDtypeOpAndCount) {
  const CollectiveInfo& collective = *find_collective(GetParam().first);
  const AlgorithmInfo& algorithm = *collective.find_algorithm(GetParam().second);
  Transport& transport = *transport_;
  const int p = transport.size();
  // Count 0: what any count needs (the library's forced algorithms of
  // equal-block calls refuse counts p does not divide, below).
  const std::string reason = algorithm.unsupported_reason(transport.kind(), p, 0);
  if (!reason.empty()) GTEST_SKIP() << reason;
  const std::vector<std::size_t> counts = {0,
                                           1,
                                           static_cast<std::size_t>(p - 1),
                                           static_cast<std::size_t>(p),
                                           static_cast<std::size_t>(p + 1),
                                           4099,
                                           262147};
  for (std::size_t count : counts) {
    if (!algorithm.unsupported_reason(transport.kind(), p, count).empty()) continue;
    for (DType dtype : kAllDTypes) {
      for (ReduceOp op : kAllReduceOps) {
        for (bool in_place : {false, true}) {
          if (in_place && count > 4099) continue;
          const std::uint64_t wrong = testing::run_checked_calls(transport, collective, algorithm,
                                                                 count, dtype, op, in_place);
          EXPECT_EQ(wrong, 0u) << fmt::format("{} {} on {} rank {} of {}: count={} {} {}{}",
                                              collective.name, algorithm.name, transport.kind(),
                                              transport.rank(), p, count, to_string(dtype),
                                              to_string(op), in_place ? " in place" : "");
        }
      }
    }
  }
}

// Alltoallv on skewed routings, both ways, over this transport: the
// expert side's p shares differ by rank, and the library's counts and
// offsets (mpi) or the pairwise steps must follow them.
TEST_P(CollectiveOverTransport, SkewedRoutings) {
  const CollectiveInfo& collective = *find_collective(GetParam().first);
  if (collective.name != "alltoallv") GTEST_SKIP() << "routings are alltoallv's";
  const AlgorithmInfo& algorithm = *collective.find_algorithm(GetParam().second);
  Transport& transport = *transport_;
  const int p = transport.size();
  const std::string reason = algorithm.unsupported_reason(transport.kind(), p, 1);
  if (!reason.empty()) GTEST_SKIP() << reason;
  for (const double skew : {0.7, 2.0}) {
    for (const bool returns : {false, true}) {
      for (const std::size_t count : {std::size_t{1}, static_cast<std::size_t>(p + 1),
                                      std::size_t{4099}, std::size_t{262147}}) {
        for (bool in_place : {false, true}) {
          const std::uint64_t wrong =
              testing::run_checked_calls(transport, collective, algorithm, count, DType::f32,
                                         ReduceOp::sum, in_place, 0, {skew, returns});
          EXPECT_EQ(wrong, 0u) << fmt::format(
              "{} on {} rank {} of {}: skew={} returns={} count={}{}", algorithm.name,
              transport.kind(), transport.rank(), p, skew, returns, count,
              in_place ? " in place" : "");
        }
      }
    }
  }
}

// A wait that times out calls the transport's timeout handler at the wait,
// before the caller's frame unwinds, then throws; the request stays usable.
// The harness's timeout report relies on it: it talks over MPI, which can
// then write a late message into the pending request's buffer, so that
// buffer must still be alive (set_timeout_handler).
class TransportTimeout : public CollectiveOverTransport {};

TEST_F(TransportTimeout, HandlerRunsAtTheWaitThenTheWaitThrows) {
  InstrumentedTransport& transport = *transport_;
  constexpr int kTag = 4243;
  std::vector<std::byte> buffer(64);
  bool frame_alive = false;
  int handled = 0;
  transport.set_timeout_handler([&](const TimeoutError& error) {
    ++handled;
    EXPECT_TRUE(frame_alive) << "the handler ran after the waiting frame unwound";
    EXPECT_NE(std::string(error.what()).find(fmt::format("recv from rank 0 tag {}", kTag)),
              std::string::npos)
        << error.what();
  });
  RequestId request = 0;
  if (transport.rank() == 1) {
    request = transport.irecv(buffer, 0, kTag);
    transport.set_timeout(std::chrono::milliseconds(200));
    try {
      frame_alive = true;
      struct Unwound {
        bool& alive;
        ~Unwound() { alive = false; }
      } unwound{frame_alive};
      transport.wait(request);
      ADD_FAILURE() << "a receive nobody sends to completed";
    } catch (const TimeoutError&) {
    }
    EXPECT_EQ(handled, 1);
  }
  transport.set_timeout_handler({});
  transport.set_timeout(std::chrono::seconds(30));
  transport.barrier();
  if (transport.rank() == 0) transport.wait(transport.isend(buffer, 1, kTag));
  if (transport.rank() == 1) transport.wait(request);
}

// MPI counts are int: the mpi transport sends a message larger than its
// largest plain message as one element of a derived datatype. A transport
// whose limit is 1000 bytes takes that path with small messages, with a
// rest (4099 elements) and without (4000 f32: 16 whole blocks), beside
// messages below the limit.
// test() completes a request without blocking and returns its handle, on the
// transport under test (mpi or ofi).
TEST(TransportTest, CompletesWithoutBlockingAndReleases) {
  auto owned = make_transport(g_options);
  InstrumentedTransport& transport = *owned;
  transport.set_timeout(std::chrono::seconds(30));
  testing::expect_test_completes_and_releases(transport);
}

TEST(LargeMessages, DerivedDatatypesCarryEveryAlgorithm) {
  if (g_options.kind != "mpi") GTEST_SKIP() << "the mpi transport's limit";
  MpiTransport mpi(MPI_COMM_WORLD, /*largest_plain_message=*/1000);
  InstrumentedTransport transport(mpi);
  transport.set_timeout(std::chrono::seconds(30));
  for (const CollectiveInfo& collective : collectives()) {
    for (const AlgorithmInfo& algorithm : collective.algorithms) {
      if (is_library_algorithm(algorithm)) continue;  // the library's own messages
      for (const std::size_t count : {std::size_t{4099}, std::size_t{4000}, std::size_t{250}}) {
        for (const DType dtype : {DType::f32, DType::bf16}) {
          for (const bool in_place : {false, true}) {
            const std::uint64_t wrong = testing::run_checked_calls(
                transport, collective, algorithm, count, dtype, ReduceOp::sum, in_place);
            EXPECT_EQ(wrong, 0u) << fmt::format("{} {} rank {}: count={} {}{}", collective.name,
                                                algorithm.name, transport.rank(), count,
                                                to_string(dtype), in_place ? " in place" : "");
          }
        }
      }
    }
  }
}

// MPICH's forced rows (mpich_tuned.h): the launch's algorithm variable is
// back on auto after MPI_Init and after the row's calls, so the harness's own
// collectives between them keep MPICH's choice.
TEST(MpichForced, OnlyTheRowsCallsRunTheForcedAlgorithm) {
  constexpr const char* kVariable = "MPIR_CVAR_ALLREDUCE_INTRA_ALGORITHM";
  const char* launched = std::getenv(kVariable);
  int provided = 0, index = -1;
  MPI_T_init_thread(MPI_THREAD_SINGLE, &provided);
  if (launched == nullptr || MPI_T_cvar_get_index(kVariable, &index) != MPI_SUCCESS) {
    GTEST_SKIP() << "MPICH launched with " << kVariable << " set only";
  }
  MPI_T_cvar_handle handle = MPI_T_CVAR_HANDLE_NULL;
  int count = 0;
  ASSERT_EQ(MPI_T_cvar_handle_alloc(index, nullptr, &handle, &count), MPI_SUCCESS);
  const auto value = [&] {
    int current = -1;
    MPI_T_cvar_read(handle, &current);
    return current;
  };
  EXPECT_EQ(value(), 0) << "auto after MPI_Init";
  const CollectiveInfo& allreduce = *find_collective("allreduce");
  const AlgorithmInfo* algorithm = allreduce.find_algorithm(fmt::format("mpich_{}", launched));
  ASSERT_NE(algorithm, nullptr) << launched;
  auto transport = make_transport(g_options);
  transport->set_timeout(std::chrono::seconds(30));
  EXPECT_EQ(testing::run_checked_calls(*transport, allreduce, *algorithm, 1024, DType::f32,
                                       ReduceOp::sum, /*in_place=*/false),
            0u);
  EXPECT_EQ(value(), 0) << "auto after the row's calls";
  MPI_T_cvar_handle_free(&handle);
}

std::vector<Param> every_algorithm() {
  std::vector<Param> cases;
  for (const CollectiveInfo& collective : collectives()) {
    for (const AlgorithmInfo& info : collective.algorithms) {
      cases.emplace_back(collective.name, info.name);
    }
  }
  return cases;
}

INSTANTIATE_TEST_SUITE_P(AllAlgorithms, CollectiveOverTransport,
                         ::testing::ValuesIn(every_algorithm()),
                         [](const ::testing::TestParamInfo<Param>& param_info) {
                           return param_info.param.first + "_" + param_info.param.second;
                         });

}  // namespace
}  // namespace collbench

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  collbench::use_mpi_library_collectives();
  collbench::hold_mpich_forced_algorithms();
  ::testing::InitGoogleTest(&argc, argv);
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--transport" && i + 1 < argc) {
      collbench::g_options.kind = argv[++i];
    } else if (arg == "--ofi-provider" && i + 1 < argc) {
      collbench::g_options.ofi_provider = argv[++i];
    } else {
      fmt::print(stderr, "collective_mpi_test: unknown argument '{}'\n", arg);
      MPI_Abort(MPI_COMM_WORLD, 2);
    }
  }
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank != 0) {
    auto& listeners = ::testing::UnitTest::GetInstance()->listeners();
    delete listeners.Release(listeners.default_result_printer());
  }
  int failed = 0;
  try {
    failed = RUN_ALL_TESTS() != 0 ? 1 : 0;
  } catch (const std::exception& error) {
    fmt::print(stderr, "rank {}: {}\n", rank, error.what());
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  int any_failed = 0;
  MPI_Allreduce(&failed, &any_failed, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (any_failed && !failed) fmt::print(stderr, "rank {}: another rank failed\n", rank);
  MPI_Finalize();
  return any_failed;
}
