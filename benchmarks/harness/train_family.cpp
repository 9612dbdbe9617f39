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
// The schedules (plan_train_cases builds them; messages and sizes are the
// catalog's, collbench/catalog/workload.h):
//   MODEL, :ddp, :fusion, :total  forward, first layer first; backward, last
//       layer first; when a layer's backward ends, the buckets whose
//       gradients are now all there (BenchmarkCase::bucket_ready_layers) are
//       handed over for their allreduce. Nothing waits: T_iter = T_forward +
//       max(T_backward, end of the last exchange), where exchange k starts at
//       max(ready_k, end_{k-1}); the predictor simulates this timeline
//       (collbench-predict --compute-from).
//   :zero2  as DDP, each bucket reduce-scattered (each rank keeps its 1/p);
//       after the backward, once the last bucket is reduced, the optimizer
//       step on the shard (no time charged) and the allgather of all the
//       updated parameters, which ends the iteration: the next forward needs
//       them, so nothing hides it.
//   :fsdp   PyTorch FSDP FULL_SHARD with its defaults: the root's and then
//       each unit's parameters gathered before their forward, the next
//       unit's gather handed over when a unit starts (forward prefetch: it
//       runs while the unit computes); every unit but the root gathered again
//       for its backward (reshard_after_forward), the next unit's gather
//       handed over before a unit's backward (BACKWARD_PRE, the default
//       backward_prefetch); a unit's gradients reduce-scattered when its
//       backward ends, the root's at the end of backprop. A GEMM layer
//       belongs to the unit whose name prefixes its own, else to the root.
//   --no-overlap (sim)  DDP and ZeRO-2: every bucket handed at the end of
//       the backward pass; FSDP: no prefetch, and the compute waits for
//       every collective it hands: compute and communication in series.
//
// GEMMs are the catalog's layers at --train-batch samples per rank, each
// scaled by --compute-scale, on the gemm family's GemmProducts (layers with
// the same products share buffers: the time is the same, the memory is
// not). The exchange's buffers and algorithm objects are the collective
// family's (prepare_messages), so --check checks every message of the
// iteration as the exchange family does (a reduce-scatter's shard against
// the sum over the ranks of that block: what an allreduce leaves there).
//
// Threads: the communication thread makes every transport call of the
// iteration while the main thread computes, and the main thread makes none
// until the thread is idle again, so MPI needs MPI_THREAD_SERIALIZED (main
// asks for it and refuses train benchmarks without it). Its times are
// std::chrono::steady_clock's, not MPI_Wtime's, for the same reason. The
// two threads share the rank's core (one core per rank: --bind-to core),
// so the transport's waits yield it after a few empty polls
// (Transport::set_yield_while_waiting) instead of taking half of it from
// the GEMMs while a bucket waits for a peer that is still computing; the
// MPI library's own allreduce (`mpi`) waits inside MPI as Open MPI does
// (spinning, unless --mca mpi_yield_when_idle 1).
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
#include "train_family.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <exception>
#include <fstream>
#include <limits>
#include <map>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <thread>
#include <utility>
#include <vector>

#include "collbench/catalog/catalog.h"
#ifdef COLLBENCH_HAVE_SIMGRID
#include "collbench/models/compute.h"
#include "collbench/transport/sim_transport.h"
#endif
#include "families.h"
#include "family.h"
#include "gemm_family.h"
#include "planner.h"
#include "single_process.h"

namespace collbench::harness {
namespace {

using Clock = std::chrono::steady_clock;
using StepKind = TrainStep::Kind;

double seconds_between(Clock::time_point start, Clock::time_point end) {
  return std::chrono::duration<double>(end - start).count();
}

// A layer's products at `batch` samples shrunk by `scale`, as one forward
// product (GemmLayer::at_batch with the batch in m or count).
GemmShape scaled_products(const GemmLayer& layer, int batch, double scale) {
  GemmShape shape = layer.at_batch(GemmPass::forward, batch);
  std::int64_t& scaled = layer.batch_in_rows ? shape.m : shape.count;
  scaled = std::max<std::int64_t>(
      1, static_cast<std::int64_t>(std::llround(static_cast<double>(scaled) * scale)));
  return shape;
}

// One iteration as the timeline records it: seconds from its start.
struct IterationTimes {
  explicit IterationTimes(std::size_t layers = 0, std::size_t messages = 0)
      : forward_start(layers),
        forward_end(layers),
        backward_start(layers),
        backward_end(layers),
        message_ready(messages),
        message_start(messages),
        message_end(messages) {}
  std::vector<double> forward_start;  // per layer, forward order
  std::vector<double> forward_end;
  std::vector<double> backward_start;
  std::vector<double> backward_end;
  std::vector<double> message_ready;  // per message, when handed over
  std::vector<double> message_start;
  std::vector<double> message_end;
  double end = 0;
};

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
TrainTimeline make_timeline(const std::string& name, const Model& model,
                            const BenchmarkCase& benchmark_case, const IterationTimes& times) {
  TrainTimeline result;
  result.benchmark = name;
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

class PreparedTrain final : public PreparedCase {
 public:
  PreparedTrain(const BenchmarkCase& benchmark_case, RunContext& context)
      : context_(context),
        case_(benchmark_case),
        model_(find_model(benchmark_case.model)),
        layer_groups_(gemm_layer_groups(model_)),
        exchange_(prepare_messages(benchmark_case, context)),
        compute_only_(benchmark_case.compute_only),
        library_(is_library_algorithm(*benchmark_case.algorithm)),
        times_(model_.gemm_layers.size(), benchmark_case.message_bytes.size()) {
    const Options& options = context.options();
    for (const DistinctGemm& group : distinct_gemm_layers(model_)) {
      const GemmLayer& layer = model_.gemm_layers[group.layer];
      products_.emplace_back(scaled_products(layer, options.train_batch, options.compute_scale),
                             layer.input_gradient, /*backward=*/true);
      products_.back().fill();
    }
    if (!compute_only_) {
      context.transport().set_yield_while_waiting(true);
      communication_ = std::thread([this] { communicate(); });
    }
  }

  ~PreparedTrain() override {
    if (communication_.joinable()) {
      {
        const std::lock_guard lock(mutex_);
        stopping_ = true;
      }
      work_.notify_one();
      communication_.join();
      context_.transport().set_yield_while_waiting(false);
    }
    if (timed_ && context_.rank() == 0 && !context_.options().timeline_path.empty()) {
      TimelineSink::instance().add(make_timeline(case_.name, model_, case_, times_));
    }
  }

  // A row checks only what it runs: train/none runs the GEMMs alone, so its
  // check is theirs, not the exchange's.
  CheckResult check(const BenchmarkCase& benchmark_case) override {
    if (!compute_only_) return exchange_->check(benchmark_case);
    CheckResult total;
    for (GemmProducts& products : products_) {
      products.fill();
      products.backward();
      const CheckResult result = products.check(/*backward=*/true);
      total.checked += result.checked;
      total.wrong += result.wrong;
      if (total.first_mismatch.empty()) total.first_mismatch = result.first_mismatch;
    }
    return total;
  }

  double call(const BenchmarkCase& benchmark_case) override {
    if (library_ && !compute_only_) context_.library_call_started(benchmark_case);
    start_ = Clock::now();
    {
      const std::lock_guard lock(mutex_);
      handed_ = 0;
      finished_ = 0;
    }
    for (const TrainStep& step : case_.train_steps) run_step(step);
    if (!compute_only_) wait_until_exchanged(case_.message_bytes.size());
    const Clock::time_point end = Clock::now();
    if (library_ && !compute_only_) context_.library_call_returned();
    times_.end = seconds_between(start_, end);
    timed_ = true;
    return times_.end;
  }

 private:
  double now() const { return seconds_between(start_, Clock::now()); }

  void run_step(const TrainStep& step) {
    switch (step.kind) {
      case StepKind::forward:
        times_.forward_start[step.index] = now();
        products_[layer_groups_[step.index]].forward();
        times_.forward_end[step.index] = now();
        return;
      case StepKind::backward:
        times_.backward_start[step.index] = now();
        products_[layer_groups_[step.index]].backward();
        times_.backward_end[step.index] = now();
        return;
      case StepKind::hand:
        if (compute_only_) return;
        times_.message_ready[step.index] = now();
        {
          const std::lock_guard lock(mutex_);
          handed_ = step.index + 1;
        }
        work_.notify_one();
        return;
      case StepKind::wait:
        if (!compute_only_) wait_until_exchanged(step.index + 1);
        return;
    }
  }

  void wait_until_exchanged(std::size_t count) {
    std::unique_lock lock(mutex_);
    done_.wait(lock, [&] { return finished_ >= count || failure_; });
    if (failure_) std::rethrow_exception(failure_);
  }

  // The communication thread: each handed message, in order.
  void communicate() {
    std::unique_lock lock(mutex_);
    for (;;) {
      work_.wait(lock, [&] { return stopping_ || finished_ < handed_; });
      if (stopping_) return;
      const std::size_t message = finished_;
      lock.unlock();
      const double start = now();
      try {
        exchange_->run_message(message);
      } catch (...) {
        lock.lock();
        failure_ = std::current_exception();
        done_.notify_one();
        return;
      }
      const double end = now();
      lock.lock();
      times_.message_start[message] = start;
      times_.message_end[message] = end;
      ++finished_;
      done_.notify_one();
    }
  }

  RunContext& context_;
  const BenchmarkCase case_;
  const Model& model_;
  const std::vector<std::size_t> layer_groups_;
  std::vector<GemmProducts> products_;  // per distinct group of layers
  std::unique_ptr<PreparedMessages> exchange_;
  const bool compute_only_;
  const bool library_;
  IterationTimes times_;
  bool timed_ = false;
  Clock::time_point start_;

  // Between the two threads: messages handed over and finished this call.
  std::mutex mutex_;
  std::condition_variable work_;
  std::condition_variable done_;
  std::size_t handed_ = 0;
  std::size_t finished_ = 0;
  bool stopping_ = false;
  std::exception_ptr failure_;
  // Last: started once everything it reads exists, joined first.
  std::thread communication_;
};

#ifdef COLLBENCH_HAVE_SIMGRID
// One rank's simulated compute of a workload's iteration.
struct SimCompute {
  std::vector<PassSeconds> layers;  // per GEMM layer, forward order
  std::string source;               // the sim_compute column
};

// Per workload: filled by plan_train_cases on the main thread before any
// actor runs, then only read (by actors, which share one OS thread).
std::map<std::string, SimCompute>& sim_computes() {
  static std::map<std::string, SimCompute> computes;
  return computes;
}

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
      TimelineSink::instance().add(make_timeline(case_.name, model_, case_, times_));
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
#endif

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
    if (auto* simulated = dynamic_cast<SimulatedCompute*>(&context.transport().unwrapped())) {
      return std::make_unique<PreparedSimTrain>(benchmark_case, context, *simulated);
    }
#endif
    return std::make_unique<PreparedTrain>(benchmark_case, context);
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

// Planning (planner.h).

namespace {

// The tensor runs the workload's allreduces carry, in its order; empty for
// a workload train cannot run (not an allreduce of a model's gradients).
std::vector<Bucket> gradient_buckets(const Workload& workload, const Model& model) {
  switch (workload.kind) {
    case WorkloadKind::ddp:
      return ddp_buckets(model, workload.element_bytes, workload.cap_bytes);
    case WorkloadKind::fusion:
      return fusion_buckets(model, workload.element_bytes, workload.cap_bytes);
    case WorkloadKind::total:
      return {Bucket{0, model.tensors_backprop_order.size(),
                     static_cast<std::uint64_t>(model.parameters()),
                     model.gradient_bytes(workload.element_bytes), 0}};
    case WorkloadKind::tensors: {
      std::vector<Bucket> buckets;
      for (std::size_t t = 0; t < model.tensors_backprop_order.size(); ++t) {
        const ParamTensor& tensor = model.tensors_backprop_order[t];
        buckets.push_back({t, 1, static_cast<std::uint64_t>(tensor.elements),
                           tensor.bytes(workload.element_bytes), 0});
      }
      return buckets;
    }
    default:
      return {};
  }
}

// A bucket's gradients all exist after the backward of the earliest (in
// forward order) of its tensors' ready layers, which backprop reaches last.
std::size_t ready_layer(const Model& model, const Bucket& bucket) {
  return first_ready_layer(
      std::span(model.tensors_backprop_order).subspan(bucket.first_tensor, bucket.tensor_count));
}

// One workload's iteration as the train family runs it (the file comment):
// the messages in the order the compute side hands them over, and its steps.
struct TrainIteration {
  std::vector<const CollectiveInfo*> collectives;  // per message
  std::vector<std::uint64_t> bytes;
  std::vector<std::string> items;
  std::vector<TrainStep> steps;
  std::vector<std::size_t> bucket_ready_layers;  // DDP's kinds and zero2: per bucket
};

class IterationBuilder {
 public:
  std::size_t hand(const CollectiveInfo& collective, std::uint64_t bytes, std::string item) {
    const std::size_t index = iteration_.bytes.size();
    iteration_.collectives.push_back(&collective);
    iteration_.bytes.push_back(bytes);
    iteration_.items.push_back(std::move(item));
    step(StepKind::hand, index);
    return index;
  }
  // A catalog message, found by its item.
  std::size_t hand(const Workload& workload, const std::string& item) {
    for (const Message& message : workload.sequence) {
      if (message.item == item) {
        return hand(*find_collective(message.collective), message.bytes, message.item);
      }
    }
    throw std::logic_error(
        fmt::format("{}: the catalog has no message \"{}\"", workload.spec, item));
  }
  void wait(std::size_t message) { step(StepKind::wait, message); }
  void forward(std::size_t layer) { step(StepKind::forward, layer); }
  void backward(std::size_t layer) { step(StepKind::backward, layer); }
  TrainIteration& iteration() { return iteration_; }

 private:
  void step(StepKind kind, std::size_t index) { iteration_.steps.push_back({kind, index}); }
  TrainIteration iteration_;
};

// Forward, then backward handing each bucket of `collective` once its
// gradients exist (with overlap), or all of them at the end.
void bucketed_backprop(IterationBuilder& builder, const Model& model,
                       const std::vector<Bucket>& buckets, const CollectiveInfo& collective,
                       const std::vector<std::string>& items, bool overlap) {
  const std::size_t layers = model.gemm_layers.size();
  for (std::size_t layer = 0; layer < layers; ++layer) builder.forward(layer);
  std::vector<std::size_t>& ready = builder.iteration().bucket_ready_layers;
  for (const Bucket& bucket : buckets) ready.push_back(ready_layer(model, bucket));
  std::size_t next = 0;
  for (std::size_t layer = layers; layer-- > 0;) {
    builder.backward(layer);
    while (overlap && next < buckets.size() && ready[next] >= layer) {
      builder.hand(collective, buckets[next].bytes, items[next]);
      ++next;
    }
  }
  for (; next < buckets.size(); ++next) builder.hand(collective, buckets[next].bytes, items[next]);
}

std::vector<std::string> bucket_names(std::size_t count) {
  std::vector<std::string> names;
  for (std::size_t k = 0; k < count; ++k) names.push_back(fmt::format("bucket {}", k));
  return names;
}

// ZeRO-2: the catalog's reduce_scatter buckets as DDP's, then the updated
// parameters' allgather (the catalog's last message) once every shard is
// reduced and stepped.
TrainIteration zero2_iteration(const Workload& workload, const Model& model, bool overlap) {
  IterationBuilder builder;
  const std::vector<Bucket> buckets =
      zero2_buckets(model, workload.bucket_elements, workload.element_bytes);
  std::vector<std::string> items;
  for (std::size_t k = 0; k < buckets.size(); ++k) items.push_back(workload.sequence.at(k).item);
  bucketed_backprop(builder, model, buckets, *find_collective(kReduceScatter), items, overlap);
  builder.wait(buckets.size() - 1);
  builder.wait(builder.hand(workload, workload.sequence.back().item));
  return std::move(builder.iteration());
}

// FSDP FULL_SHARD (the file comment), on the catalog's units and messages.
TrainIteration fsdp_iteration(const Workload& workload, const Model& model, bool overlap) {
  const std::vector<FlatUnit> units = fsdp_units(model, workload.fsdp_unit);
  const std::size_t layers = model.gemm_layers.size();
  // Each GEMM layer's unit (0: the root); module names nest, so a unit's
  // layers are named "<unit>.<...>".
  std::vector<std::size_t> layer_unit(layers, 0);
  std::vector<std::size_t> first_layer(units.size(), layers);
  for (std::size_t layer = 0; layer < layers; ++layer) {
    for (std::size_t unit = 1; unit < units.size(); ++unit) {
      if (model.gemm_layers[layer].name.starts_with(units[unit].name + ".")) {
        layer_unit[layer] = unit;
      }
    }
    first_layer[layer_unit[layer]] = std::min(first_layer[layer_unit[layer]], layer);
  }
  for (std::size_t unit = 1; unit < units.size(); ++unit) {
    if (first_layer[unit] == layers) {
      throw std::logic_error(
          fmt::format("{}: unit {} has no GEMM layer", model.name, units[unit].name));
    }
  }
  IterationBuilder builder;
  // The gathers of each pass in the order FSDP issues them: forward the root
  // (when it has parameters) and every unit, backward every unit but the
  // root, last first.
  std::vector<std::size_t> forward_order;
  std::vector<std::size_t> backward_order;
  for (std::size_t unit = 0; unit < units.size(); ++unit) {
    if (units[unit].elements > 0) forward_order.push_back(unit);
  }
  for (std::size_t unit = units.size(); unit-- > 1;) backward_order.push_back(unit);
  // Per unit, the message that gathers it in the pass (none yet).
  constexpr std::size_t kNone = std::numeric_limits<std::size_t>::max();
  std::vector<std::size_t> gathered(units.size(), kNone);
  std::size_t next = 0;
  const auto hand_next = [&](const std::vector<std::size_t>& order, const char* pass) {
    if (next == order.size()) return;
    const std::size_t unit = order[next++];
    gathered[unit] = builder.hand(workload, fmt::format("{} {}", units[unit].label(), pass));
  };
  // A unit's pre-hook: its gather handed unless prefetched, the next one's
  // handed (the prefetch, with overlap), then its own waited for.
  const auto before = [&](std::size_t unit, const std::vector<std::size_t>& order, const char* pass,
                          bool gathers) {
    while (gathers && gathered[unit] == kNone) hand_next(order, pass);
    if (overlap) hand_next(order, pass);
    if (gathers) builder.wait(gathered[unit]);
  };
  std::vector<bool> started(units.size(), false);
  started[0] = true;
  before(0, forward_order, "forward", units[0].elements > 0);
  for (std::size_t layer = 0; layer < layers; ++layer) {
    const std::size_t unit = layer_unit[layer];
    if (!started[unit]) {
      started[unit] = true;
      before(unit, forward_order, "forward", true);
    }
    builder.forward(layer);
  }
  // The root's parameters stay gathered for backward; every other unit's
  // were freed after its forward.
  std::fill(gathered.begin(), gathered.end(), kNone);
  std::fill(started.begin(), started.end(), false);
  next = 0;
  started[0] = true;
  before(0, backward_order, "backward", false);
  for (std::size_t layer = layers; layer-- > 0;) {
    const std::size_t unit = layer_unit[layer];
    if (!started[unit]) {
      started[unit] = true;
      before(unit, backward_order, "backward", true);
    }
    builder.backward(layer);
    if (unit != 0 && layer == first_layer[unit]) {
      const std::size_t reduced =
          builder.hand(workload, fmt::format("{} gradients", units[unit].label()));
      if (!overlap) builder.wait(reduced);
    }
  }
  if (units[0].elements > 0) builder.hand(workload, fmt::format("{} gradients", units[0].label()));
  return std::move(builder.iteration());
}

// The iteration of a workload train runs; none for one it cannot.
std::optional<TrainIteration> train_iteration(const Workload& workload, const Model& model,
                                              bool overlap) {
  if (workload.kind == WorkloadKind::fsdp) return fsdp_iteration(workload, model, overlap);
  if (workload.kind == WorkloadKind::zero2) return zero2_iteration(workload, model, overlap);
  const std::vector<Bucket> buckets = gradient_buckets(workload, model);
  if (buckets.empty()) return std::nullopt;
  IterationBuilder builder;
  bucketed_backprop(builder, model, buckets, *find_collective(kAllreduce),
                    bucket_names(buckets.size()), overlap);
  return std::move(builder.iteration());
}

std::uint64_t compute_bytes(const Model& model, const Options& options) {
  std::uint64_t total = 0;
  for (const DistinctGemm& group : distinct_gemm_layers(model)) {
    const GemmLayer& layer = model.gemm_layers[group.layer];
    total += gemm_operand_bytes(scaled_products(layer, options.train_batch, options.compute_scale),
                                /*backward=*/true);
  }
  return total;
}

#ifdef COLLBENCH_HAVE_SIMGRID
// --transport sim: each rank's compute of `model`'s iteration, from the sim
// flags; `iteration` for the count of messages --reuse-buckets reuses.
SimCompute plan_sim_compute(const Options& options, const Model& model,
                            const TrainIteration& iteration, std::string_view messages_word) {
  const SimFlags& flags = options.sim;
  if (flags.compute_from.empty() == flags.flops.empty()) {
    throw UsageError(
        "--families train with --transport sim charges each layer's compute as simulated time: "
        "give --compute-from FILE (the gemm rows this machine measured) or --flops RATE (an "
        "assumed FLOP/s per rank, e.g. 10T), one of them");
  }
  if (flags.reuse_buckets && options.check) {
    throw UsageError(
        "--reuse-buckets skips the exchange of repeated buckets, whose results --check would "
        "then find wrong; leave out one of them");
  }
  const double batch = flags.global_batch > 0
                           ? static_cast<double>(flags.global_batch) / options.ranks
                           : static_cast<double>(options.train_batch);
  const double charged = batch * options.compute_scale;
  SimCompute compute;
  if (!flags.flops.empty()) {
    double rate = 0;
    try {
      rate = parse_flops(flags.flops);
    } catch (const std::invalid_argument& bad) {
      throw UsageError(fmt::format("--flops {}: {}", flags.flops, bad.what()));
    }
    compute.layers = layer_seconds_at_rate(model, charged, rate);
    compute.source = fmt::format("assumed {:g} FLOP/s per rank", rate);
  } else {
    try {
      // Below one sample a rank still runs one (collbench-predict's rule).
      compute.layers = layer_seconds(measured_compute(read_gemm_file(flags.compute_from), model),
                                     std::max(charged, 1.0));
    } catch (const std::exception& bad) {
      throw UsageError(fmt::format("--compute-from {}: {}", flags.compute_from, bad.what()));
    }
    compute.source = fmt::format("measured {}", flags.compute_from);
  }
  compute.source += fmt::format(", {:g} samples per rank", batch);
  if (flags.global_batch > 0) {
    compute.source += fmt::format(" (B = {} over {} ranks)", flags.global_batch, options.ranks);
  }
  if (flags.reuse_buckets) {
    std::vector<std::pair<const CollectiveInfo*, std::uint64_t>> keys;
    for (std::size_t k = 0; k < iteration.bytes.size(); ++k) {
      keys.emplace_back(iteration.collectives[k], iteration.bytes[k]);
    }
    std::sort(keys.begin(), keys.end());
    const auto distinct = std::unique(keys.begin(), keys.end()) - keys.begin();
    compute.source += fmt::format("; {} of {} {} reused an earlier exchange's time",
                                  static_cast<std::ptrdiff_t>(keys.size()) - distinct, keys.size(),
                                  messages_word);
  }
  return compute;
}
#endif

}  // namespace

std::string simulated_compute_source(const BenchmarkCase& benchmark_case) {
#ifdef COLLBENCH_HAVE_SIMGRID
  if (benchmark_case.family != &train_family()) return {};
  const auto found = sim_computes().find(benchmark_case.workload);
  if (found != sim_computes().end()) return found->second.source;
#else
  static_cast<void>(benchmark_case);
#endif
  return {};
}

void plan_train_cases(Planner& planner, const std::vector<Workload>& workloads) {
  const Options& options = planner.options();
  if (!options.has_family("train")) return;
  constexpr std::string_view kTrainedWorkloads =
      "train runs a model's data-parallel iteration: its gradients allreduced (MODEL, "
      "MODEL:total, MODEL:ddp, MODEL:fusion), or sharded (MODEL:zero2, MODEL:fsdp)";
  const bool overlap = !options.sim.no_overlap;
  // Why each workload has no train benchmark: asked for train and given
  // none, the run is refused rather than ending with a note and no rows.
  std::vector<std::string> untrained;
  for (const Workload& workload : workloads) {
    const Model* model = workload.model.empty() ? nullptr : &find_model(workload.model);
    if (model != nullptr && workload.kind == WorkloadKind::fsdp &&
        workload.fsdp_unit == FsdpUnit::block && fsdp_units(*model, FsdpUnit::block).size() == 1) {
      throw UsageError(fmt::format(
          "--families train --workload {}: the catalog has no FSDP units for {} (no transformer "
          "block or residual stage: every tensor is the root's); wrap the whole model as one "
          "unit ({}:fsdp=model) or shard it with {}:zero2",
          workload.spec, model->name, model->name, model->name));
    }
    std::optional<TrainIteration> iteration;
    if (model != nullptr) iteration = train_iteration(workload, *model, overlap);
    if (!iteration) {
      planner.note(fmt::format("skipping train/{}: {}", workload.spec, kTrainedWorkloads));
      untrained.push_back(workload.spec);
      continue;
    }
    // The run's --dtype carries the messages (fsdp and zero2 are bf16 or f32).
    if (std::any_of(iteration->bytes.begin(), iteration->bytes.end(),
                    [&](std::uint64_t bytes) { return bytes % planner.element_bytes() != 0; })) {
      untrained.push_back(
          fmt::format("{} (its messages are not a whole number of {} elements; "
                      "run with the workload's dtype)",
                      workload.spec, planner.dtype_name()));
      continue;
    }
    std::vector<const CollectiveInfo*> used;
    for (const CollectiveInfo* collective : iteration->collectives) {
      if (std::find(used.begin(), used.end(), collective) == used.end()) {
        used.push_back(collective);
      }
    }
    BenchmarkCase base;
    base.family = &train_family();
    base.collective = used.front();
    base.workload = workload.spec;
    base.model = workload.model;
    base.item =
        fmt::format("{} {}", iteration->bytes.size(), used.size() > 1 ? "messages" : "buckets");
    base.multiplicity = 1;
    base.batch = options.train_batch;
    base.compute_bytes = compute_bytes(*model, options);
    base.shared_message_bytes = options.debug_share_messages_from;
    base.message_bytes = iteration->bytes;
    if (used.size() > 1) base.message_collectives = iteration->collectives;
    base.message_items = iteration->items;
    base.bucket_ready_layers = iteration->bucket_ready_layers;
    base.train_steps = iteration->steps;
#ifdef COLLBENCH_HAVE_SIMGRID
    if (options.transport == "sim") {
      sim_computes()[workload.spec] =
          plan_sim_compute(options, *model, *iteration, used.size() > 1 ? "messages" : "buckets");
      base.compute_bytes = 0;  // no GEMM runs: its time is charged
    }
#endif
    std::vector<const AlgorithmInfo*> algorithms;
    for (const AlgorithmInfo* algorithm : common_algorithms(planner, used)) {
      bool runnable = true;
      for (std::size_t k = 0; k < base.message_bytes.size(); ++k) {
        const CollectiveInfo& collective = base.collective_of(k);
        runnable = planner.runnable(collective, *collective.find_algorithm(algorithm->name),
                                    base.message_bytes[k]) &&
                   runnable;
      }
      if (runnable) algorithms.push_back(algorithm);
    }
    if (algorithms.empty()) {
      std::vector<std::string_view> names;
      for (const CollectiveInfo* collective : used) names.push_back(collective->name);
      untrained.push_back(fmt::format(
          "{} (no selected {} algorithm can run here{})", workload.spec, fmt::join(names, " and "),
          used.size() > 1 ? "; each message runs its collective's algorithm of one "
                            "name, so the name must be one of each"
                          : ""));
      continue;
    }
    BenchmarkCase compute_only = base;
    compute_only.name = fmt::format("train/{}/{}", kComputeOnlyAlgorithm, workload.spec);
    compute_only.algorithm = algorithms.front();  // its buffers only: nothing is exchanged
    compute_only.compute_only = true;
    planner.add(std::move(compute_only));
    for (const AlgorithmInfo* algorithm : algorithms) {
      BenchmarkCase entry = base;
      entry.name = fmt::format("train/{}/{}", algorithm->name, workload.spec);
      entry.algorithm = algorithm;
      planner.add(std::move(entry));
    }
  }
  if (untrained.size() == workloads.size()) {
    throw UsageError(fmt::format("--families train registers no benchmark for --workload {}: {}",
                                 fmt::join(untrained, ", "), kTrainedWorkloads));
  }
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
