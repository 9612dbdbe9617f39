// The train family's plan (train_family.cpp): each workload's iteration as
// steps and messages, from the catalog, and the train cases.
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
#include "train_plan.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "collbench/catalog/catalog.h"
#include "collbench/models/predict.h"
#include "families.h"
#include "family.h"
#include "gemm_family.h"
#include "train_family.h"

namespace collbench::harness {

// A layer's products at `batch` samples shrunk by `scale`, as one forward
// product (GemmLayer::at_batch with the batch in m or count).
GemmShape scaled_products(const GemmLayer& layer, int batch, double scale) {
  GemmShape shape = layer.at_batch(GemmPass::forward, batch);
  std::int64_t& scaled = layer.batch_in_rows ? shape.m : shape.count;
  scaled = std::max<std::int64_t>(
      1, static_cast<std::int64_t>(std::llround(static_cast<double>(scaled) * scale)));
  return shape;
}

#ifdef COLLBENCH_HAVE_SIMGRID
std::map<std::string, SimCompute>& sim_computes() {
  static std::map<std::string, SimCompute> computes;
  return computes;
}
#endif

namespace {

using StepKind = TrainStep::Kind;

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
      if (rate < kMinFlopsPerSecond || rate > kMaxFlopsPerSecond) {
        throw std::invalid_argument(fmt::format("{:g} FLOP/s is outside {:g} to {:g}", rate,
                                                kMinFlopsPerSecond, kMaxFlopsPerSecond));
      }
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

}  // namespace collbench::harness
