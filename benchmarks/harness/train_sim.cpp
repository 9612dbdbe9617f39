// The train family's simulated run (train_family.cpp), built with SimGrid.
//
// Under --transport sim (a transport that simulates compute) the iteration
// is PreparedSimTrain's: no GEMM runs; each layer's forward and backward
// time (measured rows of --compute-from, or an assumed --flops rate, at the
// per-rank batch) is simulated time (SimulatedCompute), and the messages
// run on the simulated network by the same algorithm objects. The
// communication thread is not a second actor: the rank's one actor follows
// the compute side's steps on a clock of their own (compute is pure
// simulated time that touches no link, and a wait only needs a message
// already exchanged), and before message k charges the compute up to the
// moment it was handed (if the clock is not past it already), runs it, and
// at the end charges the compute left: the timeline a compute actor and a
// communication actor would make (start_k = max(ready_k, end_{k-1})), with
// the sim transport's one actor per rank (its waits suspend and wake the
// rank's actor) as it is. The charge is the sim transport's own hook
// (SimulatedCompute), not the Communicator's: a real transport has no
// compute to charge.
#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <map>
#include <memory>
#include <stdexcept>
#include <utility>
#include <vector>

#include "collbench/catalog/catalog.h"
#include "collbench/models/compute.h"
#include "collbench/transport/sim_transport.h"
#include "families.h"
#include "family.h"
#include "train_plan.h"
#include "train_run.h"

namespace collbench::harness {
namespace {

using StepKind = TrainStep::Kind;

// Under --transport sim: the iteration on the simulated clock (see the file
// comment), one actor per rank.
class PreparedSimTrain final : public PreparedCase {
 public:
  PreparedSimTrain(const BenchmarkCase& benchmark_case, RunContext& context,
                   SimulatedCompute& simulated)
      : context_(context),
        simulated_(simulated),
        case_(benchmark_case),
        model_(find_model(benchmark_case.model)),
        layers_(sim_computes().at(benchmark_case.workload).layers),
        compute_only_(benchmark_case.compute_only),
        reuse_(context.options().sim.reuse_buckets),
        times_(layers_.size(), benchmark_case.message_bytes.size()) {
    if (!compute_only_) exchange_ = prepare_messages(benchmark_case, context);
  }

  ~PreparedSimTrain() override {
    if (timed_ && context_.rank() == 0 && !context_.options().timeline_path.empty()) {
      record_timeline(case_, model_, times_);
    }
  }

  // No GEMM runs, so train/none has nothing to check.
  CheckResult check(const BenchmarkCase& benchmark_case) override {
    return compute_only_ ? CheckResult{} : exchange_->check(benchmark_case);
  }

  double call(const BenchmarkCase& /*benchmark_case*/) override {
    const double start = context_.now();
    const auto elapsed = [&] { return context_.now() - start; };
    const std::size_t messages = compute_only_ ? 0 : case_.message_bytes.size();
    // The compute side's clock, from the iteration's start: it may run
    // ahead of this actor's, which catches up before each message.
    double compute_clock = 0;
    std::size_t next_step = 0;
    std::size_t handed = 0;
    std::size_t finished = 0;
    // The compute side's steps until it has handed `count` messages, or to
    // its end.
    const auto compute_until_handed = [&](std::size_t count) {
      while (handed < count && next_step < case_.train_steps.size()) {
        const TrainStep& step = case_.train_steps[next_step++];
        switch (step.kind) {
          case StepKind::forward:
            times_.forward_start[step.index] = compute_clock;
            compute_clock += layers_[step.index].forward;
            times_.forward_end[step.index] = compute_clock;
            break;
          case StepKind::backward:
            times_.backward_start[step.index] = compute_clock;
            compute_clock += layers_[step.index].backward;
            times_.backward_end[step.index] = compute_clock;
            break;
          case StepKind::hand:
            if (compute_only_) break;
            times_.message_ready[step.index] = compute_clock;
            handed = step.index + 1;
            break;
          case StepKind::wait:
            if (compute_only_) break;
            if (step.index >= finished) {
              throw std::logic_error(
                  fmt::format("{}: the schedule waits for message {} before handing message {}",
                              case_.name, step.index, handed));
            }
            compute_clock = std::max(compute_clock, times_.message_end[step.index]);
            break;
        }
      }
    };
    // --reuse-buckets: this rank's time for each (collective, size)
    // exchanged so far.
    std::map<std::pair<const CollectiveInfo*, std::uint64_t>, double> exchanged;
    for (std::size_t message = 0; message < messages; ++message) {
      compute_until_handed(message + 1);
      if (handed <= message) {
        throw std::logic_error(
            fmt::format("{}: the schedule never hands message {}", case_.name, message));
      }
      const double ready = times_.message_ready[message];
      if (ready > elapsed()) simulated_.compute(ready - elapsed());
      times_.message_start[message] = elapsed();
      const auto key = std::make_pair(&case_.collective_of(message), case_.message_bytes[message]);
      const auto earlier = reuse_ ? exchanged.find(key) : exchanged.end();
      if (earlier != exchanged.end()) {
        // Its time passes on this rank as the earlier exchange's did; no
        // message is sent, on any rank alike.
        simulated_.compute(earlier->second);
      } else {
        exchange_->run_message(message);
        exchanged[key] = elapsed() - times_.message_start[message];
      }
      times_.message_end[message] = elapsed();
      finished = message + 1;
    }
    compute_until_handed(std::numeric_limits<std::size_t>::max());
    if (compute_clock > elapsed()) simulated_.compute(compute_clock - elapsed());
    times_.end = elapsed();
    timed_ = true;
    return times_.end;
  }

 private:
  RunContext& context_;
  SimulatedCompute& simulated_;
  const BenchmarkCase case_;
  const Model& model_;
  const std::vector<PassSeconds>& layers_;
  const bool compute_only_;
  const bool reuse_;
  IterationTimes times_;
  bool timed_ = false;
  std::unique_ptr<PreparedMessages> exchange_;
};

}  // namespace

std::unique_ptr<PreparedCase> prepare_sim_train(const BenchmarkCase& benchmark_case,
                                                RunContext& context) {
  auto* simulated = dynamic_cast<SimulatedCompute*>(&context.transport().unwrapped());
  if (simulated == nullptr) return nullptr;
  return std::make_unique<PreparedSimTrain>(benchmark_case, context, *simulated);
}

}  // namespace collbench::harness
