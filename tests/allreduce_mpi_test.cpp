// The allreduce correctness suite under mpirun: every algorithm the chosen
// transport supports (including `mpi` on the MPI transport), at awkward
// counts, every dtype and operation, out of place and in place.
//
// Usage: mpirun -np N allreduce_mpi_test [--transport mpi|ofi] [--ofi-provider NAME]
//        [gtest flags]
// Every rank runs the same tests; only rank 0 prints. The exit code is
// non-zero if any rank saw a failure. Waits are bounded (30 s), so a broken
// schedule fails instead of hanging CTest.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <mpi.h>

#include <cstring>

#include "collbench/algorithm.h"
#include "collbench/check.h"
#include "collbench/transport_factory.h"

namespace collbench {
namespace {

TransportOptions g_options;

class AllreduceOverTransport : public ::testing::TestWithParam<std::string> {
 protected:
  static void SetUpTestSuite() {
    transport_ = make_transport(g_options).release();
    transport_->set_timeout(std::chrono::seconds(30));
  }
  static void TearDownTestSuite() {
    delete transport_;
    transport_ = nullptr;
  }
  static Transport* transport_;
};
Transport* AllreduceOverTransport::transport_ = nullptr;

TEST_P(AllreduceOverTransport, EveryDtypeOpAndCount) {
  const AlgorithmInfo& algorithm = *find_algorithm(GetParam());
  Transport& transport = *transport_;
  const int p = transport.size();
  const std::string reason = algorithm.unsupported_reason(transport.kind(), p, 1);
  if (!reason.empty()) GTEST_SKIP() << reason;
  const std::vector<std::size_t> counts = {0,
                                           1,
                                           static_cast<std::size_t>(p - 1),
                                           static_cast<std::size_t>(p),
                                           static_cast<std::size_t>(p + 1),
                                           4099,
                                           262147};
  for (std::size_t count : counts) {
    for (DType dtype : kAllDTypes) {
      for (ReduceOp op : kAllReduceOps) {
        for (bool in_place : {false, true}) {
          if (in_place && count > 4099) continue;
          // Two calls of one built algorithm, the second on another
          // generation's inputs and over the first's output: a result left
          // over from the first call is wrong.
          std::vector<std::byte> in(count * dtype_size(dtype));
          std::vector<std::byte> out(in.size());
          poison(out);
          std::span<std::byte> in_span(in);
          auto allreduce = algorithm.build(transport, {dtype, op, count, 0}, in_span,
                                           in_place ? in_span : std::span<std::byte>(out));
          std::uint64_t wrong = 0;
          for (const std::uint64_t generation : {1, 2}) {
            const CheckPattern pattern(p, generation);
            pattern.fill(dtype, transport.rank(), 0, in);
            allreduce->run();
            wrong += pattern.check_reduced(dtype, op, 0, in_place ? in : out).wrong;
          }
          EXPECT_EQ(wrong, 0u) << fmt::format("{} on {} rank {} of {}: count={} {} {}{}",
                                              algorithm.name, transport.kind(), transport.rank(), p,
                                              count, to_string(dtype), to_string(op),
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
class TransportTimeout : public AllreduceOverTransport {};

TEST_F(TransportTimeout, HandlerRunsAtTheWaitThenTheWaitThrows) {
  Transport& transport = *transport_;
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

std::vector<std::string> all_algorithm_names() {
  std::vector<std::string> names;
  for (const AlgorithmInfo& info : algorithms()) names.emplace_back(info.name);
  return names;
}

INSTANTIATE_TEST_SUITE_P(AllAlgorithms, AllreduceOverTransport,
                         ::testing::ValuesIn(all_algorithm_names()),
                         [](const ::testing::TestParamInfo<std::string>& param_info) {
                           return param_info.param;
                         });

}  // namespace
}  // namespace collbench

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  ::testing::InitGoogleTest(&argc, argv);
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--transport" && i + 1 < argc) {
      collbench::g_options.kind = argv[++i];
    } else if (arg == "--ofi-provider" && i + 1 < argc) {
      collbench::g_options.ofi_provider = argv[++i];
    } else {
      fmt::print(stderr, "allreduce_mpi_test: unknown argument '{}'\n", arg);
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
