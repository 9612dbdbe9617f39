// The train family (--families train): one training iteration of a
// --workload on every rank, the way PyTorch DDP's reducer and Horovod's
// background thread overlap the gradient exchange with backprop, and the
// way PyTorch FSDP and DeepSpeed ZeRO-2 overlap their gathers and
// reduce-scatters with it.
//
//   train/<algorithm>/<workload>   one call, every rank: the compute side
//                                  runs the iteration's steps in order
//                                  (BenchmarkCase::train_steps): each GEMM
//                                  layer's forward or backward products,
//                                  handing a message to the communication
//                                  thread, or waiting until one has been
//                                  exchanged; the communication thread runs
//                                  the handed messages one after another, in
//                                  the order handed, each by its
//                                  collective's algorithm of that name; the
//                                  call ends when the last one has returned.
//   train/none/<workload>          the layers' passes alone: the compute-only
//                                  time of the same iteration.
//
// Its files: the plan (train_plan.cpp: each workload's schedule of steps
// and messages, from the catalog), the real run (train_real.cpp: GEMMs on
// this rank's core and a communication thread), the simulated run
// (train_sim.cpp: one actor per rank on the simulated clock), and here the
// family's runner, the timeline both runs record, and the registration.
#include "train_family.h"

#include <fmt/format.h>

#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "collbench/catalog/catalog.h"
#include "families.h"
#include "family.h"
#include "family_registry.h"
#include "planner.h"
#include "single_process.h"
#include "train_plan.h"
#include "train_run.h"

namespace collbench::harness {
namespace {

using StepKind = TrainStep::Kind;

class TimelineSink {
 public:
  static TimelineSink& instance() {
    static TimelineSink sink;
    return sink;
  }
  // A benchmark's later round (--interleave) replaces its earlier one.
  void add(TrainTimeline timeline) {
    const std::lock_guard lock(mutex_);
    for (TrainTimeline& earlier : timelines_) {
      if (earlier.benchmark == timeline.benchmark) {
        earlier = std::move(timeline);
        return;
      }
    }
    timelines_.push_back(std::move(timeline));
  }
  std::vector<TrainTimeline> take() {
    const std::lock_guard lock(mutex_);
    return std::move(timelines_);
  }

 private:
  std::mutex mutex_;
  std::vector<TrainTimeline> timelines_;
};

std::string pass_name(const Model& model, const TrainStep& step) {
  return fmt::format("{} {}", step.kind == StepKind::forward ? "forward" : "backward",
                     model.gemm_layers[step.index].name);
}

// A call's timeline, in microseconds: each layer's pass as it ran (a gap
// before one is a wait for its parameters), each message handed after the
// pass before it ("" at the start).
TrainTimeline make_timeline(const Model& model, const BenchmarkCase& benchmark_case,
                            const IterationTimes& times) {
  TrainTimeline result;
  result.benchmark = benchmark_case.name;
  result.iteration_us = times.end * 1e6;
  std::string last_pass;
  std::vector<std::string> ready_after(times.message_ready.size());
  for (const TrainStep& step : benchmark_case.train_steps) {
    switch (step.kind) {
      case StepKind::forward:
        last_pass = pass_name(model, step);
        result.compute.push_back(
            {last_pass, times.forward_start[step.index] * 1e6,
             (times.forward_end[step.index] - times.forward_start[step.index]) * 1e6});
        break;
      case StepKind::backward:
        last_pass = pass_name(model, step);
        result.compute.push_back(
            {last_pass, times.backward_start[step.index] * 1e6,
             (times.backward_end[step.index] - times.backward_start[step.index]) * 1e6});
        break;
      case StepKind::hand:
        if (step.index < ready_after.size()) ready_after[step.index] = last_pass;
        break;
      case StepKind::wait:
        break;
    }
  }
  if (benchmark_case.compute_only) return result;
  for (std::size_t k = 0; k < ready_after.size(); ++k) {
    const std::vector<std::string>& items = benchmark_case.message_items;
    result.buckets.push_back({k < items.size() ? items[k] : fmt::format("message {}", k),
                              ready_after[k], times.message_ready[k] * 1e6,
                              times.message_start[k] * 1e6, times.message_end[k] * 1e6});
  }
  return result;
}

class TrainFamily final : public FamilyRunner {
 public:
  std::string family_column(const BenchmarkCase&) const override { return "train"; }
  std::string algorithm_column(const BenchmarkCase& benchmark_case) const override {
    return benchmark_case.compute_only ? std::string(kComputeOnlyAlgorithm)
                                       : std::string(benchmark_case.algorithm->name);
  }
  std::unique_ptr<PreparedCase> prepare(const BenchmarkCase& benchmark_case,
                                        RunContext& context) const override {
#ifdef COLLBENCH_HAVE_SIMGRID
    if (auto simulated = prepare_sim_train(benchmark_case, context)) return simulated;
#endif
    return prepare_real_train(benchmark_case, context);
  }
  bool batched() const override { return false; }
  bool has_dtype() const override { return true; }
  std::string_view smaller_hint() const override {
    return "use a smaller --train-batch or --compute-scale";
  }
};

// JSON string contents: layer names are ASCII, but a quote or backslash
// would end the string.
std::string json_escaped(const std::string& text) {
  std::string escaped;
  for (const char c : text) {
    if (c == '"' || c == '\\') escaped += '\\';
    escaped += c;
  }
  return escaped;
}

}  // namespace

void record_timeline(const BenchmarkCase& benchmark_case, const Model& model,
                     const IterationTimes& times) {
  TimelineSink::instance().add(make_timeline(model, benchmark_case, times));
}

const FamilyRunner& train_family() {
  static const TrainFamily family;
  return family;
}

std::vector<TrainTimeline> take_train_timelines() { return TimelineSink::instance().take(); }

std::string chrome_trace_json(const std::vector<TrainTimeline>& timelines) {
  std::string json = "{\"displayTimeUnit\": \"ms\", \"traceEvents\": [\n";
  bool first = true;
  const auto event = [&](const std::string& text) {
    json += first ? "  " : ",\n  ";
    json += text;
    first = false;
  };
  for (std::size_t process = 0; process < timelines.size(); ++process) {
    const TrainTimeline& timeline = timelines[process];
    event(
        fmt::format(R"({{"name": "process_name", "ph": "M", "pid": {}, "args": {{"name": "{}"}}}})",
                    process, json_escaped(timeline.benchmark)));
    event(fmt::format(
        R"({{"name": "thread_name", "ph": "M", "pid": {}, "tid": 0, "args": {{"name": "compute"}}}})",
        process));
    event(fmt::format(
        R"({{"name": "thread_name", "ph": "M", "pid": {}, "tid": 1, "args": {{"name": "communication"}}}})",
        process));
    event(fmt::format(
        R"({{"name": "thread_name", "ph": "M", "pid": {}, "tid": 2, "args": {{"name": "iteration"}}}})",
        process));
    event(fmt::format(
        R"({{"name": "iteration", "cat": "iteration", "ph": "X", "pid": {}, "tid": 2, "ts": 0, "dur": {:.3f}}})",
        process, timeline.iteration_us));
    for (const TrainTimeline::Span& span : timeline.compute) {
      event(fmt::format(
          R"({{"name": "{}", "cat": "compute", "ph": "X", "pid": {}, "tid": 0, "ts": {:.3f}, "dur": {:.3f}}})",
          json_escaped(span.name), process, span.start_us, span.duration_us));
    }
    for (const TrainTimeline::Bucket& times : timeline.buckets) {
      event(fmt::format(
          R"({{"name": "{} ready", "cat": "ready", "ph": "i", "s": "t", "pid": {}, "tid": 1, "ts": {:.3f}, "args": {{"after": "{}"}}}})",
          json_escaped(times.name), process, times.ready_us,
          json_escaped(times.ready_after.empty() ? std::string("start") : times.ready_after)));
      event(fmt::format(
          R"({{"name": "{}", "cat": "exchange", "ph": "X", "pid": {}, "tid": 1, "ts": {:.3f}, "dur": {:.3f}}})",
          json_escaped(times.name), process, times.start_us, times.end_us - times.start_us));
    }
  }
  json += "\n]}\n";
  return json;
}

// The registration (family_registry.h).

namespace {

std::vector<FamilyName> train_family_names() {
  // A simulation charges each rank's compute as simulated time (above);
  // real ranks in one process would share this process's cores instead.
  return {{.name = "train", .refusal = [](const SingleProcessTransport& transport) {
             return transport.deterministic
                        ? std::string_view()
                        : std::string_view(
                              "each rank's iteration runs its GEMMs beside a communication "
                              "thread, and in one process every rank's compute would share this "
                              "process's cores, which times no real training step; run it under "
                              "mpirun (or simulate it: --transport sim)");
           }}};
}

}  // namespace

extern const FamilyEntry kTrainFamily;
const FamilyEntry kTrainFamily = {
    .names = train_family_names,
    .plan = [](Planner& planner,
               const PlanInputs& inputs) { plan_train_cases(planner, inputs.workloads); },
    .help =
        R"(  train/<algorithm>/<workload>             (--families train) one training iteration of a
                                           --workload (DDP buckets, fusion buffers or tensors):
                                           forward GEMMs, then backward layer by layer, each
                                           bucket's allreduce on a communication thread once its
                                           gradients exist; the iteration ends with the last
                                           exchange. MODEL:zero2: each bucket reduce-scattered,
                                           then the parameters' allgather; MODEL:fsdp: each
                                           unit's allgather before its forward (the next one's
                                           prefetched) and its backward, its reduce_scatter
                                           after; <algorithm> a reduce_scatter and allgather
                                           name (ring). train/none: the same without exchange.
                                           Rows add compute_us (train/none), communication_us
                                           (exchange/<algorithm>/<workload>, run before),
                                           exposed_us and overlap
)",
    .calls_mpi_off_the_main_thread = true,
};

}  // namespace collbench::harness
