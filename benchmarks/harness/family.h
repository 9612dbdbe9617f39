// The interface every benchmark family implements for the Runner
// (families.h): what the Runner prepares, calls and checks, the CSV's
// family and algorithm columns, and how the Runner times it, go through the
// FamilyRunner a BenchmarkCase points to, each in a file of its own (which
// --families names plan which cases is the registry's, family_registry.h):
//
//   collective_family.cpp   a collective of collbench/collectives/collective.h, and an
//                           exchange (a workload's allreduces in order)
//   p2p_family.cpp          the ping-pong and the periodic sendrecv chain
//   local_family.cpp        the kernels of rank 0 alone or of every rank at
//                           once: reduce, reduce_all, memcpy
//   gemm_family.cpp         training's GEMM layers through OpenBLAS, on rank 0
//   train_family.cpp        one training iteration: the GEMM layers, and each
//                           bucket's allreduce on a communication thread
//                           (its plan, real and simulated runs in
//                           train_{plan,real,sim}.cpp)
//   barrier_family.cpp      one barrier of the transport's Communicator
//
// The Runner keeps what every family shares (the timed loop, the barrier,
// the timeouts, the agreement on check results, the warm-up and the batch
// calibration); a family owns its buffers and what one call and the check
// do with them.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "collbench/core/check.h"
#include "collbench/transport/transport.h"
#include "options.h"

namespace collbench::harness {

struct BenchmarkCase;
struct RunMetadata;

// --check calls a collective twice, with inputs of two generations, so that a
// result left over from the first call (a stale buffer) is wrong in the
// second. Both count as --warmup calls (for every family: the warm-up count
// does not depend on how many calls a family's check makes).
inline constexpr int kCheckedCalls = 2;

// What the Runner lends a family: the run's options and transport, and the
// waits of its own, bounded by the transport's timeout (see families.h).
class RunContext {
 public:
  virtual const Options& options() const = 0;
  virtual Transport& transport() const = 0;
  virtual int rank() const = 0;
  virtual int ranks() const = 0;
  // The barrier before a call (--sync barrier; nothing under --sync none).
  virtual void synchronize() = 0;
  // The sleeping barrier after a p2p or local call, so that ranks not
  // taking part do not steal the measured ranks' cores.
  virtual void wait_for_all_ranks_sleeping() = 0;
  // Around a call of the MPI library's own blocking collective, which
  // --timeout cannot interrupt: the watchdog ends the job when it has not
  // returned long after the timeout.
  virtual void library_call_started(const BenchmarkCase& benchmark_case) = 0;
  virtual void library_call_returned() = 0;
  // The mpi transport's communicator, the one `mpi` uses (mpi_bare's);
  // MPI_COMM_NULL over another transport.
  virtual MPI_Comm library_comm() const = 0;
  // Seconds on this rank's clock, what a family times its calls with:
  // MPI_Wtime under MPI, RankGroup::now for ranks in one process (the
  // simulated clock under simulation).
  virtual double now() const = 0;

 protected:
  ~RunContext() = default;
};

// One benchmark's buffers (allocated and page-touched) and algorithm,
// ready to call. Built by FamilyRunner::prepare on the first call of a
// benchmark and kept for the later calls Google Benchmark makes.
class PreparedCase {
 public:
  virtual ~PreparedCase() = default;
  // Whether these buffers can serve `next` as they are (the same messages),
  // so that only its algorithm is built; when so, takes `next` over.
  virtual bool adopt(const BenchmarkCase& next) {
    static_cast<void>(next);
    return false;
  }
  // The untimed --check calls, from inputs of their own; this rank's result.
  virtual CheckResult check(const BenchmarkCase& benchmark_case) = 0;
  // After the check, before the warm-up and the timed calls.
  virtual void before_timing() {}
  // One timed sample (calls_per_sample calls): this rank's contribution to
  // the MAX, in seconds for the whole sample.
  virtual double call(const BenchmarkCase& benchmark_case) = 0;

  const BenchmarkCase* owner = nullptr;
  // The --warmup calls ran on these buffers with this algorithm. Under
  // --interleave a benchmark's later rounds find fresh buffers (another
  // size ran in between) and warm them up again.
  bool warmed_up = false;
};

// A prepared exchange whose messages can also run one at a time: the train
// family's communication thread runs each bucket when backprop has made it.
class PreparedMessages : public PreparedCase {
 public:
  virtual std::size_t message_count() const = 0;
  // Message `index` of the sequence, by its algorithm (no barrier, not timed).
  virtual void run_message(std::size_t index) = 0;
};

class FamilyRunner {
 public:
  virtual ~FamilyRunner() = default;
  // The CSV's family and algorithm columns.
  virtual std::string family_column(const BenchmarkCase& benchmark_case) const = 0;
  virtual std::string algorithm_column(const BenchmarkCase& benchmark_case) const = 0;
  // Allocates `benchmark_case`'s buffers and fills its inputs (for the
  // timed calls: the check fills its own).
  virtual std::unique_ptr<PreparedCase> prepare(const BenchmarkCase& benchmark_case,
                                                RunContext& context) const = 0;

  // How the Runner times and reports it. Every rank's time counts (the
  // sample is the slowest rank's), or rank 0's alone (the ping-pong, the
  // kernels of rank 0).
  virtual bool every_rank_timed() const { return true; }
  // Its calls move bytes through the transport (the CSV's transport and
  // sent_bytes_per_rank); false for the local kernels.
  virtual bool through_transport() const { return true; }
  // A sample is a batch of calls back to back (calls_per_sample, calibrated
  // to kBatchSeconds): a call far shorter than the barrier and the
  // reduction of times around every sample. False: every call is a sample.
  virtual bool batched() const { return true; }
  // Its rows have a dtype and an element count (the collectives and the
  // reduction kernels).
  virtual bool has_dtype() const { return false; }
  // The CSV's placement column (p2p).
  virtual std::string placement(const BenchmarkCase& benchmark_case,
                                const RunMetadata& metadata) const {
    static_cast<void>(benchmark_case);
    static_cast<void>(metadata);
    return {};
  }
  // What makes a case of it need less memory, for the planner's error.
  virtual std::string_view smaller_hint() const { return "use smaller --sizes"; }
};

// The collective family's buffers and algorithm objects for the messages
// of `benchmark_case` (an exchange's, or a train case's buckets).
std::unique_ptr<PreparedMessages> prepare_messages(const BenchmarkCase& benchmark_case,
                                                   RunContext& context);

// The families, one per file.
const FamilyRunner& collective_family();  // a collective's one message
const FamilyRunner& exchange_family();    // a workload's messages in order
const FamilyRunner& pingpong_family();
const FamilyRunner& sendrecv_family();
const FamilyRunner& local_reduce_family();
const FamilyRunner& local_reduce_all_family();
const FamilyRunner& local_memcpy_family();
const FamilyRunner& local_gemm_family();
const FamilyRunner& train_family();

}  // namespace collbench::harness
