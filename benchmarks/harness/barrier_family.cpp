// The barrier family (--families barrier), as OSU's osu_barrier and Intel
// MPI Benchmarks' Barrier: one barrier of every rank, the slowest rank's
// time, by two algorithms:
//
//   barrier/communicator    the transport Communicator's own barrier():
//                           MPI_Barrier under mpi, the dissemination
//                           barrier over the fabric under ofi, the threads'
//                           shared one under inproc
//   barrier/dissemination   a dissemination barrier over the transport's
//                           Endpoint (⌈lg p⌉ rounds of empty messages: a
//                           sub-communicator of every rank), what a
//                           transport without a barrier of its own runs
//
// Every call is a sample of its own, after the Runner's barrier (--sync
// barrier), as for the collectives: back-to-back barriers would overlap one
// barrier's late exits with the next one's entries. A barrier moves no
// data, so --check has nothing to compare (0 elements checked).
#include <fmt/format.h>

#include <numeric>

#include "collbench/transport/transport.h"
#include "families.h"
#include "family.h"
#include "planner.h"
#include "single_process.h"

namespace collbench::harness {
namespace {

class PreparedBarrier final : public PreparedCase {
 public:
  PreparedBarrier(RunContext& context, bool dissemination) : context_(context) {
    if (dissemination) {
      std::vector<int> everyone(static_cast<std::size_t>(context.ranks()));
      std::iota(everyone.begin(), everyone.end(), 0);
      every_rank_ = context.transport().subgroup(std::move(everyone));
    }
  }

  CheckResult check(const BenchmarkCase& /*benchmark_case*/) override { return {}; }

  double call(const BenchmarkCase& benchmark_case) override {
    Communicator& communicator =
        every_rank_ ? static_cast<Communicator&>(*every_rank_) : context_.transport();
    // MPI_Barrier is the MPI library's blocking call, which --timeout
    // cannot interrupt: the watchdog bounds it.
    context_.library_call_started(benchmark_case);
    const double start = context_.now();
    communicator.barrier();
    const double elapsed = context_.now() - start;
    context_.library_call_returned();
    return elapsed;
  }

 private:
  RunContext& context_;
  std::unique_ptr<Transport> every_rank_;  // dissemination: the sub-communicator of every rank
};

class BarrierFamily final : public FamilyRunner {
 public:
  explicit BarrierFamily(std::string_view algorithm) : algorithm_(algorithm) {}
  std::string family_column(const BenchmarkCase&) const override { return "barrier"; }
  std::string algorithm_column(const BenchmarkCase&) const override {
    return std::string(algorithm_);
  }
  std::unique_ptr<PreparedCase> prepare(const BenchmarkCase& /*benchmark_case*/,
                                        RunContext& context) const override {
    return std::make_unique<PreparedBarrier>(context, algorithm_ == kDissemination);
  }
  bool batched() const override { return false; }

  static constexpr std::string_view kDissemination = "dissemination";

 private:
  std::string_view algorithm_;
};

const BarrierFamily& communicator_barrier() {
  static const BarrierFamily family("communicator");
  return family;
}

const BarrierFamily& dissemination_barrier() {
  static const BarrierFamily family(BarrierFamily::kDissemination);
  return family;
}

void add_barrier(Planner& planner, const BarrierFamily& family) {
  BenchmarkCase entry;
  entry.name = fmt::format("barrier/{}", family.algorithm_column(entry));
  entry.family = &family;
  planner.add(std::move(entry));
}

// One case of each algorithm whatever --sizes says: a barrier has no size.
// Left out where its time would be none at all, which no row can say.
void plan_barrier_cases(Planner& planner, const PlanInputs& /*inputs*/) {
  if (!planner.options().has_family("barrier")) return;
  const SingleProcessTransport* single = find_single_process_transport(planner.transport_kind());
  if (single != nullptr && single->deterministic) {
    planner.note(fmt::format(
        "skipping barrier/communicator: the barrier of --transport {} is ideal and costs no "
        "simulated time; barrier/dissemination sends its messages",
        planner.transport_kind()));
  } else {
    add_barrier(planner, communicator_barrier());
  }
  if (planner.ranks() < 2) {
    planner.note("skipping barrier/dissemination: at 1 rank it sends nothing");
  } else {
    add_barrier(planner, dissemination_barrier());
  }
}

std::vector<FamilyName> barrier_family_names() { return {{.name = "barrier"}}; }

}  // namespace

extern const FamilyEntry kBarrierFamily;
const FamilyEntry kBarrierFamily = {
    .names = barrier_family_names,
    .plan = plan_barrier_cases,
    .help =
        R"(  barrier/communicator                     (--families barrier) one barrier of every rank, as
                                           OSU's osu_barrier: the transport's own (MPI_Barrier
                                           under mpi; not under sim, whose barrier is ideal)
  barrier/dissemination                    the same by lg p rounds of empty messages over the
                                           transport (at 2 ranks or more)
)",
};

}  // namespace collbench::harness
