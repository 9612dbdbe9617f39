// The timed region allocates nothing (issue 8; algorithm.h's promise that
// run() "allocates nothing"). Global operator new and delete are replaced in
// this binary by counting versions; the count is per thread and only while a
// rank's thread is inside run(), after one warm-up call, so everything
// build() and the first call set up is excluded.
//
// Two transports, one binary, launched with mpirun (CTest: NP 2):
//   InProcess: every algorithm that runs without MPI, 2..5 ranks as threads.
//     The count includes the in-process transport's own bookkeeping (its
//     mailboxes are std::deque), so a failure here may be the transport's.
//   Mpi: every algorithm on the MPI transport, including `mpi`. Only C++
//     allocations are seen (operator new): OpenMPI's own malloc calls inside
//     MPI_Isend/MPI_Allreduce are the library's business and not counted.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <new>
#include <vector>

#include "collbench/collectives/algorithm.h"
#include "collbench/collectives/collective.h"
#include "collbench/collectives/mpi_library.h"
#include "collbench/core/check.h"
#include "collbench/transport/inproc_transport.h"
#include "collbench/transport/mpi_transport.h"

namespace {
thread_local bool t_counting = false;
thread_local std::size_t t_allocations = 0;

void* counted_allocation(std::size_t size, std::size_t alignment) {
  if (t_counting) ++t_allocations;
  if (size == 0) size = 1;
  void* pointer =
      alignment > alignof(std::max_align_t)
          ? std::aligned_alloc(alignment, (size + alignment - 1) / alignment * alignment)
          : std::malloc(size);
  if (pointer == nullptr) throw std::bad_alloc();
  return pointer;
}
}  // namespace

void* operator new(std::size_t size) { return counted_allocation(size, 0); }
void* operator new[](std::size_t size) { return counted_allocation(size, 0); }
void* operator new(std::size_t size, std::align_val_t alignment) {
  return counted_allocation(size, static_cast<std::size_t>(alignment));
}
void* operator new[](std::size_t size, std::align_val_t alignment) {
  return counted_allocation(size, static_cast<std::size_t>(alignment));
}
void operator delete(void* pointer) noexcept { std::free(pointer); }
void operator delete[](void* pointer) noexcept { std::free(pointer); }
void operator delete(void* pointer, std::size_t) noexcept { std::free(pointer); }
void operator delete[](void* pointer, std::size_t) noexcept { std::free(pointer); }
void operator delete(void* pointer, std::align_val_t) noexcept { std::free(pointer); }
void operator delete[](void* pointer, std::align_val_t) noexcept { std::free(pointer); }
void operator delete(void* pointer, std::size_t, std::align_val_t) noexcept { std::free(pointer); }
void operator delete[](void* pointer, std::size_t, std::align_val_t) noexcept {
  std::free(pointer);
}

namespace collbench {
namespace {

constexpr int kTimedCalls = 3;
// 1 element, a few, one not divisible by p, 1 MiB and 4 MiB of f32 (several
// ring segments).
const std::size_t kCounts[] = {1, 7, 1000, 262144, 1048576};

// Allocations made by this thread during kTimedCalls calls of run(), after
// one warm-up call.
std::size_t allocations_in_run(Transport& transport, const CollectiveInfo& collective,
                               const AlgorithmInfo& algorithm, std::size_t count, bool in_place) {
  const int rank = transport.rank();
  const int ranks = transport.size();
  const CollectiveSpec spec{DType::f32, ReduceOp::sum, count, 0, {}};
  const Block in_block = collective.input_block(spec, ranks, rank);
  const Block out_block = collective.output_block(spec, ranks, rank);
  // In place: the block (input or output) at its place in the whole vector
  // (or in alltoallv's p shares, when they are more).
  std::vector<std::byte> whole(
      std::max({count, in_block.offset + in_block.count, out_block.offset + out_block.count}) *
      sizeof(float));
  std::vector<std::byte> in_storage(in_block.count * sizeof(float));
  std::vector<std::byte> out_storage(out_block.count * sizeof(float));
  const auto part = [&](Block block) {
    return std::span<std::byte>(whole).subspan(block.offset * sizeof(float),
                                               block.count * sizeof(float));
  };
  const std::span<std::byte> in = in_place ? part(in_block) : std::span<std::byte>(in_storage);
  const std::span<std::byte> out = in_place ? part(out_block) : std::span<std::byte>(out_storage);
  fill_input(collective, CheckPattern(ranks, 0), spec, rank, 0, in);
  auto call = algorithm.build(transport, spec, in, out);
  call->run();
  t_allocations = 0;
  t_counting = true;
  for (int i = 0; i < kTimedCalls; ++i) call->run();
  t_counting = false;
  return t_allocations;
}

TEST(AllocationFree, InProcess) {
  for (const CollectiveInfo& collective : collectives()) {
    for (const AlgorithmInfo& algorithm : collective.algorithms) {
      for (int ranks = 2; ranks <= 5; ++ranks) {
        for (const std::size_t count : kCounts) {
          if (!algorithm.unsupported_reason("inproc", ranks, count).empty()) continue;
          for (const bool in_place : {false, true}) {
            std::atomic<std::size_t> allocations{0};
            run_in_process(ranks, [&](Transport& transport) {
              allocations += allocations_in_run(transport, collective, algorithm, count, in_place);
            });
            EXPECT_EQ(allocations.load(), 0u)
                << collective.name << " " << algorithm.name << " on " << ranks
                << " in-process ranks, " << count << " f32 elements, "
                << (in_place ? "in place" : "out of place") << ": " << allocations.load()
                << " operator new calls in " << kTimedCalls << " calls of run()";
          }
        }
      }
    }
  }
}

TEST(AllocationFree, Mpi) {
  MpiTransport mpi(MPI_COMM_WORLD);
  InstrumentedTransport transport(mpi);
  transport.set_timeout(std::chrono::seconds(30));
  if (transport.size() < 2) GTEST_SKIP() << "needs mpirun -np 2 or more";
  for (const CollectiveInfo& collective : collectives()) {
    for (const AlgorithmInfo& algorithm : collective.algorithms) {
      for (const std::size_t count : kCounts) {
        if (!algorithm.unsupported_reason("mpi", transport.size(), count).empty()) continue;
        for (const bool in_place : {false, true}) {
          const unsigned long long mine =
              allocations_in_run(transport, collective, algorithm, count, in_place);
          unsigned long long total = 0;
          MPI_Allreduce(&mine, &total, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
          EXPECT_EQ(total, 0u) << collective.name << " " << algorithm.name << " on "
                               << transport.size() << " MPI ranks, " << count << " f32 elements, "
                               << (in_place ? "in place" : "out of place") << ": " << total
                               << " operator new calls (all ranks) in " << kTimedCalls
                               << " calls of run()";
        }
      }
    }
  }
}

}  // namespace
}  // namespace collbench

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  collbench::use_mpi_library_collectives();
  ::testing::InitGoogleTest(&argc, argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank != 0) {
    auto& listeners = ::testing::UnitTest::GetInstance()->listeners();
    delete listeners.Release(listeners.default_result_printer());
  }
  int failed = RUN_ALL_TESTS() != 0 ? 1 : 0;
  int any_failed = 0;
  MPI_Allreduce(&failed, &any_failed, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  MPI_Finalize();
  return any_failed;
}
