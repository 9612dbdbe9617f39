// The train family (--families train): one training iteration of a
// --workload on every rank, the way PyTorch DDP's reducer and Horovod's
// background thread overlap the gradient exchange with backprop.
//
//   train/<algorithm>/<workload>   phases of one call, every rank:
//     1. forward   every GEMM layer's forward product, first layer first;
//     2. backward  last layer first, each layer's weight- and data-gradient
//                  products; when a layer's backward ends, the buckets whose
//                  gradients are now all there (BenchmarkCase::
//                  bucket_ready_layers) are handed to the communication
//                  thread, which runs them one after another, in bucket
//                  order, by the allreduce algorithm of that name;
//     3. the call ends when the last bucket's allreduce has returned.
//   train/none/<workload>          phases 1 and 2 alone: the compute-only
//                                  time of the same iteration.
//
// Cost: T_iter = T_forward + max(T_backward, end of the last exchange),
// where exchange k starts at max(ready_k, end_{k-1}); the predictor
// simulates this timeline (collbench-predict --compute-from).
//
// GEMMs are the catalog's layers at --train-batch samples per rank, each
// scaled by --compute-scale, on the gemm family's GemmProducts (layers with
// the same products share buffers: the time is the same, the memory is
// not). Buckets: DDP's (MODEL:ddp), Horovod's fusion buffers (MODEL:fusion),
// one per tensor (MODEL) or the whole gradient (MODEL:total); the exchange's
// buffers and algorithm objects are the collective family's
// (prepare_messages), so --check checks every bucket's allreduce as the
// exchange family does.
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
// per-rank batch) is charged as simulated time (SimulatedCompute), and
// the buckets' allreduces run on the simulated network by the same
// algorithm objects. The communication thread is not a second actor: the
// bucket schedule is interleaved in the rank's one actor, which before
// bucket k charges the compute up to ready_k (if the clock is not past it
// already) and then runs the bucket, and at the end charges the compute
// left. Compute is pure simulated time that touches no link, so this is the
// same timeline a compute actor and a communication actor would make
// (start_k = max(ready_k, end_{k-1})), and the sim transport's one actor
// per rank (its waits suspend and wake the rank's actor) stays as it is.
// The charge is the sim transport's own hook (SimulatedCompute), not the
// Communicator's: a real transport has no compute to charge.
// --no-overlap: every bucket is ready at the end of the backward pass.
#include "train_family.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <exception>
#include <fstream>
#include <map>
#include <mutex>
#include <stdexcept>
#include <thread>
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
  std::vector<double> forward_end;   // per layer, forward order
  std::vector<double> backward_end;  // per layer, forward order
  std::vector<double> bucket_ready;  // per bucket
  std::vector<double> bucket_start;
  std::vector<double> bucket_end;
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

// A call's timeline, in microseconds.
TrainTimeline make_timeline(const std::string& name, const Model& model,
                            const std::vector<std::size_t>& ready_layers,
                            const IterationTimes& times, bool compute_only) {
  TrainTimeline result;
  result.benchmark = name;
  result.iteration_us = times.end * 1e6;
  double previous = 0;
  for (std::size_t layer = 0; layer < times.forward_end.size(); ++layer) {
    result.compute.push_back({"forward " + model.gemm_layers[layer].name, previous * 1e6,
                              (times.forward_end[layer] - previous) * 1e6});
    previous = times.forward_end[layer];
  }
  for (std::size_t layer = times.backward_end.size(); layer-- > 0;) {
    result.compute.push_back({"backward " + model.gemm_layers[layer].name, previous * 1e6,
                              (times.backward_end[layer] - previous) * 1e6});
    previous = times.backward_end[layer];
  }
  if (compute_only) return result;
  for (std::size_t bucket = 0; bucket < ready_layers.size(); ++bucket) {
    result.buckets.push_back({model.gemm_layers[ready_layers[bucket]].name,
                              times.bucket_ready[bucket] * 1e6, times.bucket_start[bucket] * 1e6,
                              times.bucket_end[bucket] * 1e6});
  }
  return result;
}

class PreparedTrain final : public PreparedCase {
 public:
  PreparedTrain(const BenchmarkCase& benchmark_case, RunContext& context)
      : context_(context),
        name_(benchmark_case.name),
        model_(find_model(benchmark_case.model)),
        layer_groups_(gemm_layer_groups(model_)),
        ready_layers_(benchmark_case.bucket_ready_layers),
        exchange_(prepare_messages(benchmark_case, context)),
        compute_only_(benchmark_case.compute_only),
        library_(is_library_algorithm(*benchmark_case.algorithm)) {
    const Options& options = context.options();
    for (const DistinctGemm& group : distinct_gemm_layers(model_)) {
      const GemmLayer& layer = model_.gemm_layers[group.layer];
      products_.emplace_back(scaled_products(layer, options.train_batch, options.compute_scale),
                             layer.input_gradient, /*backward=*/true);
      products_.back().fill();
    }
    const std::size_t layers = model_.gemm_layers.size();
    const std::size_t buckets = ready_layers_.size();
    times_.forward_end.resize(layers);
    times_.backward_end.resize(layers);
    times_.bucket_ready.resize(buckets);
    times_.bucket_start.resize(buckets);
    times_.bucket_end.resize(buckets);
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
      TimelineSink::instance().add(timeline());
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
    forward();
    backward();
    if (!compute_only_) wait_for_exchanges();
    const Clock::time_point end = Clock::now();
    if (library_ && !compute_only_) context_.library_call_returned();
    times_.end = seconds_between(start_, end);
    timed_ = true;
    return times_.end;
  }

 private:
  void forward() {
    for (std::size_t layer = 0; layer < layer_groups_.size(); ++layer) {
      products_[layer_groups_[layer]].forward();
      times_.forward_end[layer] = seconds_between(start_, Clock::now());
    }
  }

  // Last layer first; after each layer, the buckets it completed go to the
  // communication thread.
  void backward() {
    std::size_t next_bucket = 0;
    for (std::size_t layer = layer_groups_.size(); layer-- > 0;) {
      products_[layer_groups_[layer]].backward();
      const double now = seconds_between(start_, Clock::now());
      times_.backward_end[layer] = now;
      const std::size_t first_new = next_bucket;
      while (next_bucket < ready_layers_.size() && ready_layers_[next_bucket] >= layer) {
        times_.bucket_ready[next_bucket++] = now;
      }
      if (compute_only_ || next_bucket == first_new) continue;
      {
        const std::lock_guard lock(mutex_);
        handed_ = next_bucket;
      }
      work_.notify_one();
    }
  }

  void wait_for_exchanges() {
    std::unique_lock lock(mutex_);
    done_.wait(lock, [&] { return finished_ == ready_layers_.size() || failure_; });
    if (failure_) std::rethrow_exception(failure_);
  }

  // The communication thread: each handed bucket's allreduce, in order.
  void communicate() {
    std::unique_lock lock(mutex_);
    for (;;) {
      work_.wait(lock, [&] { return stopping_ || finished_ < handed_; });
      if (stopping_) return;
      const std::size_t bucket = finished_;
      lock.unlock();
      const double start = seconds_between(start_, Clock::now());
      try {
        exchange_->run_message(bucket);
      } catch (...) {
        lock.lock();
        failure_ = std::current_exception();
        done_.notify_one();
        return;
      }
      const double end = seconds_between(start_, Clock::now());
      lock.lock();
      times_.bucket_start[bucket] = start;
      times_.bucket_end[bucket] = end;
      ++finished_;
      if (finished_ == ready_layers_.size()) done_.notify_one();
    }
  }

  TrainTimeline timeline() const {
    return make_timeline(name_, model_, ready_layers_, times_, compute_only_);
  }

  RunContext& context_;
  const std::string name_;
  const Model& model_;
  const std::vector<std::size_t> layer_groups_;
  const std::vector<std::size_t> ready_layers_;
  std::vector<GemmProducts> products_;  // per distinct group of layers
  std::unique_ptr<PreparedMessages> exchange_;
  const bool compute_only_;
  const bool library_;
  IterationTimes times_;
  bool timed_ = false;
  Clock::time_point start_;

  // Between the two threads: buckets handed over and finished this call.
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
        name_(benchmark_case.name),
        model_(find_model(benchmark_case.model)),
        ready_layers_(benchmark_case.bucket_ready_layers),
        bucket_bytes_(benchmark_case.message_bytes),
        compute_only_(benchmark_case.compute_only),
        reuse_(context.options().sim.reuse_buckets) {
    const std::vector<PassSeconds>& layers = sim_computes().at(benchmark_case.workload).layers;
    times_.forward_end.resize(layers.size());
    times_.backward_end.resize(layers.size());
    double elapsed = 0;
    for (std::size_t layer = 0; layer < layers.size(); ++layer) {
      elapsed += layers[layer].forward;
      times_.forward_end[layer] = elapsed;
    }
    for (std::size_t layer = layers.size(); layer-- > 0;) {
      elapsed += layers[layer].backward;
      times_.backward_end[layer] = elapsed;
    }
    compute_seconds_ = elapsed;
    const bool overlap = !context.options().sim.no_overlap;
    for (const std::size_t layer : ready_layers_) {
      times_.bucket_ready.push_back(overlap ? times_.backward_end[layer] : compute_seconds_);
    }
    times_.bucket_start.resize(ready_layers_.size());
    times_.bucket_end.resize(ready_layers_.size());
    if (!compute_only_) exchange_ = prepare_messages(benchmark_case, context);
  }

  ~PreparedSimTrain() override {
    if (timed_ && context_.rank() == 0 && !context_.options().timeline_path.empty()) {
      TimelineSink::instance().add(
          make_timeline(name_, model_, ready_layers_, times_, compute_only_));
    }
  }

  // No GEMM runs, so train/none has nothing to check.
  CheckResult check(const BenchmarkCase& benchmark_case) override {
    return compute_only_ ? CheckResult{} : exchange_->check(benchmark_case);
  }

  double call(const BenchmarkCase& /*benchmark_case*/) override {
    const double start = context_.now();
    const auto elapsed = [&] { return context_.now() - start; };
    const auto compute_until = [&](double offset) {
      const double left = offset - elapsed();
      if (left > 0) simulated_.compute(left);
    };
    // --reuse-buckets: this rank's time for each size exchanged so far.
    std::map<std::uint64_t, double> exchanged;
    for (std::size_t bucket = 0; bucket < ready_layers_.size() && !compute_only_; ++bucket) {
      compute_until(times_.bucket_ready[bucket]);
      times_.bucket_start[bucket] = elapsed();
      const auto earlier = reuse_ ? exchanged.find(bucket_bytes_[bucket]) : exchanged.end();
      if (earlier != exchanged.end()) {
        // Its time passes on this rank as the earlier exchange's did; no
        // message is sent, on any rank alike.
        simulated_.compute(earlier->second);
      } else {
        exchange_->run_message(bucket);
        exchanged[bucket_bytes_[bucket]] = elapsed() - times_.bucket_start[bucket];
      }
      times_.bucket_end[bucket] = elapsed();
    }
    compute_until(compute_seconds_);
    times_.end = elapsed();
    timed_ = true;
    return times_.end;
  }

 private:
  RunContext& context_;
  SimulatedCompute& simulated_;
  const std::string name_;
  const Model& model_;
  const std::vector<std::size_t> ready_layers_;
  const std::vector<std::uint64_t> bucket_bytes_;
  const bool compute_only_;
  const bool reuse_;
  double compute_seconds_ = 0;  // forward + backward
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
    for (std::size_t bucket = 0; bucket < timeline.buckets.size(); ++bucket) {
      const TrainTimeline::Bucket& times = timeline.buckets[bucket];
      event(fmt::format(
          R"({{"name": "bucket {} ready", "cat": "ready", "ph": "i", "s": "t", "pid": {}, "tid": 1, "ts": {:.3f}, "args": {{"after": "backward {}"}}}})",
          bucket, process, times.ready_us, json_escaped(times.ready_after)));
      event(fmt::format(
          R"({{"name": "bucket {}", "cat": "exchange", "ph": "X", "pid": {}, "tid": 1, "ts": {:.3f}, "dur": {:.3f}}})",
          bucket, process, times.start_us, times.end_us - times.start_us));
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
// flags; `bucket_bytes` for the count of buckets --reuse-buckets reuses.
SimCompute plan_sim_compute(const Options& options, const Model& model,
                            const std::vector<std::uint64_t>& bucket_bytes) {
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
    std::vector<std::uint64_t> sizes = bucket_bytes;
    std::sort(sizes.begin(), sizes.end());
    const auto distinct = std::unique(sizes.begin(), sizes.end()) - sizes.begin();
    compute.source += fmt::format("; {} of {} buckets reused an earlier bucket's exchange time",
                                  static_cast<std::ptrdiff_t>(bucket_bytes.size()) - distinct,
                                  bucket_bytes.size());
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
  const CollectiveInfo& allreduce = *find_collective("allreduce");
  constexpr std::string_view kTrainedWorkloads =
      "train exchanges a model's gradients by allreduce (MODEL, MODEL:total, MODEL:ddp, "
      "MODEL:fusion)";
  // Why each workload has no train benchmark: asked for train and given
  // none, the run is refused rather than ending with a note and no rows.
  std::vector<std::string> untrained;
  for (const Workload& workload : workloads) {
    const std::vector<Bucket> buckets =
        workload.model.empty() ? std::vector<Bucket>{}
                               : gradient_buckets(workload, find_model(workload.model));
    if (buckets.empty()) {
      planner.note(fmt::format("skipping train/{}: {}", workload.spec, kTrainedWorkloads));
      untrained.push_back(workload.spec);
      continue;
    }
    const Model& model = find_model(workload.model);
    BenchmarkCase base;
    base.family = &train_family();
    base.collective = &allreduce;
    base.workload = workload.spec;
    base.model = workload.model;
    base.item = fmt::format("{} buckets", buckets.size());
    base.multiplicity = 1;
    base.batch = options.train_batch;
    base.compute_bytes = compute_bytes(model, options);
    base.shared_message_bytes = options.debug_share_messages_from;
    for (const Bucket& bucket : buckets) {
      base.message_bytes.push_back(bucket.bytes);
      base.bucket_ready_layers.push_back(ready_layer(model, bucket));
    }
#ifdef COLLBENCH_HAVE_SIMGRID
    if (options.transport == "sim") {
      sim_computes()[workload.spec] = plan_sim_compute(options, model, base.message_bytes);
      base.compute_bytes = 0;  // no GEMM runs: its time is charged
    }
#endif
    std::vector<const AlgorithmInfo*> algorithms;
    for (const AlgorithmInfo* algorithm : planner.selected(allreduce)) {
      const bool runnable = std::all_of(
          base.message_bytes.begin(), base.message_bytes.end(),
          [&](std::uint64_t bytes) { return planner.runnable(allreduce, *algorithm, bytes); });
      if (runnable) algorithms.push_back(algorithm);
    }
    if (algorithms.empty()) {
      untrained.push_back(workload.spec + " (no selected allreduce algorithm can run here)");
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
                                           exchange. train/none: the same without the exchange.
                                           Rows add compute_us (train/none), communication_us
                                           (exchange/<algorithm>/<workload>, run before),
                                           exposed_us and overlap
)",
};

}  // namespace collbench::harness
