// Scaling predictions of collbench-predict (see predict.h for the model).
#include "collbench/models/predict.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>
#include <stdexcept>

#include "collbench/catalog/workload.h"
#include "collbench/collectives/collective.h"
#include "collbench/core/columns.h"

namespace collbench {
namespace {

// The backward pass costs about twice the forward pass (one product for the
// input gradient, one for the weight gradient), so it is 2/3 of an iteration.
constexpr double kBackwardShare = 2.0 / 3.0;

// Where p ranks sit: ppn to a node (fewer: one node), under the fat-tree's
// leaf switches.
Layout placed_layout(const Network& network, int p) {
  Layout layout = Layout::flat(p);
  layout.per_node = std::min(p, network.ppn);
  layout.nodes = p / layout.per_node;
  layout.switch_nodes = network.switch_nodes;
  layout.switch_uplinks = network.switch_uplinks;
  return layout;
}

// A message's cost under one algorithm name: its collective's algorithm of
// that name, or the collective's lower bound.
struct CostFunction {
  bool lower_bound = false;
  std::string_view algorithm;
  CostTerms operator()(std::string_view collective, int p, double n, const Network& network) const {
    const CollectiveInfo& info = *find_collective(collective);
    if (lower_bound) return info.lower_bound(p, n);
    const AlgorithmInfo& algorithm_info = *info.find_algorithm(algorithm);
    if ((network.switch_nodes > 0 || network.ppn > 1) && algorithm_info.placed_cost != nullptr) {
      return algorithm_info.placed_cost(placed_layout(network, p), n);
    }
    return model_terms(collective, algorithm, p, n);
  }
};

// Refuses what a flat formula would price as if every rank had a node.
void require_placed_cost(const CostFunction& cost, std::string_view collective,
                         const Network& network) {
  if (network.ppn == 1) return;
  if (cost.lower_bound) {
    throw std::invalid_argument(fmt::format(
        "--ppn {}: lower_bound is a flat network's bound; it has no ranks per node", network.ppn));
  }
  if (find_collective(collective)->find_algorithm(cost.algorithm)->placed_cost == nullptr) {
    throw std::invalid_argument(
        fmt::format("--ppn {}: {} algorithm '{}' has no cost over ranks per node (placed cost); "
                    "choose another or leave out --ppn",
                    network.ppn, collective, cost.algorithm));
  }
}

// One node's compute in a row: the forward pass, the backward pass in all
// and (measured compute) per GEMM layer, forward order, and their sum (kept,
// not re-added: linear compute's total is the given time exactly).
struct RowCompute {
  double forward = 0;
  double backward = 0;
  double total = 0;
  std::vector<double> backward_per_layer;
};

RowCompute row_compute(const ScalingScenario& s, int p, double samples_per_node) {
  RowCompute c;
  if (s.measured_compute) {
    // Beyond the batch limit (p > B) a node still processes one sample.
    for (const PassSeconds& layer :
         layer_seconds(*s.measured_compute, std::max(samples_per_node, 1.0))) {
      c.forward += layer.forward;
      c.backward += layer.backward;
      c.backward_per_layer.push_back(layer.backward);
    }
    c.total = c.forward + c.backward;
    return c;
  }
  c.total = s.weak ? s.compute_seconds : s.compute_seconds / p;
  c.forward = (1 - kBackwardShare) * c.total;
  c.backward = kBackwardShare * c.total;
  return c;
}

// The bucket timeline of a row: ready after the layers' backward (measured
// compute) or after their share of the backward pass (linear).
IterationTimeline bucket_timeline(const ScalingScenario& s, const RowCompute& compute,
                                  std::span<const double> costs) {
  if (s.measured_compute) {
    std::vector<TimelineBucket> buckets;
    for (std::size_t k = 0; k < s.messages.size(); ++k) {
      buckets.push_back({s.messages[k].ready_after_gemm_layer, costs[k]});
    }
    return simulate_iteration(compute.forward, compute.backward_per_layer, buckets);
  }
  std::vector<double> ready;
  for (const ExchangeMessage& message : s.messages) {
    ready.push_back(compute.forward + message.ready_fraction * compute.backward);
  }
  return schedule_exchanges(compute.total, ready, costs);
}

}  // namespace

std::string_view to_string(Overlap overlap) {
  switch (overlap) {
    case Overlap::none:
      return "none";
    case Overlap::fraction:
      return "fraction";
    case Overlap::buckets:
      return "buckets";
  }
  return "?";
}

std::vector<ExchangeMessage> whole_gradient(const Model& model, std::size_t element_bytes) {
  if (element_bytes == 0) throw std::invalid_argument("whole_gradient: element size 0");
  return {{static_cast<double>(model.gradient_bytes(element_bytes)), 1.0,
           first_ready_layer(model.tensors_backprop_order)}};
}

std::vector<ExchangeMessage> ddp_messages(const Model& model, std::size_t element_bytes,
                                          std::uint64_t cap_bytes) {
  const std::vector<Bucket> buckets =
      ddp_buckets(model, element_bytes, cap_bytes, std::min(cap_bytes, kDdpFirstBucketBytes));
  const double total = static_cast<double>(model.parameters());
  std::vector<ExchangeMessage> messages;
  double done = 0;
  std::size_t tensor = 0;
  for (const Bucket& bucket : buckets) {
    for (; tensor < bucket.first_tensor + bucket.tensor_count; ++tensor) {
      done += static_cast<double>(model.tensors_backprop_order[tensor].elements);
    }
    const std::span tensors(
        model.tensors_backprop_order.begin() + static_cast<std::ptrdiff_t>(bucket.first_tensor),
        bucket.tensor_count);
    messages.push_back({static_cast<double>(bucket.bytes), total > 0 ? done / total : 1.0,
                        first_ready_layer(tensors)});
  }
  return messages;
}

std::vector<ExchangeMessage> zero2_exchange(const Model& model, std::size_t element_bytes,
                                            std::uint64_t bucket_elements) {
  std::vector<ExchangeMessage> messages;
  // Ready fractions for linear compute: the share of the parameters reduced.
  const double total = static_cast<double>(model.parameters());
  double done = 0;
  for (const Bucket& bucket : zero2_buckets(model, bucket_elements, element_bytes)) {
    done += static_cast<double>(bucket.elements);
    const std::span tensors(
        model.tensors_backprop_order.begin() + static_cast<std::ptrdiff_t>(bucket.first_tensor),
        bucket.tensor_count);
    messages.push_back({static_cast<double>(bucket.bytes), total > 0 ? done / total : 1.0,
                        first_ready_layer(tensors), kReduceScatter});
  }
  messages.push_back(
      {static_cast<double>(model.gradient_bytes(element_bytes)), 1.0, 0, kAllgather});
  return messages;
}

double compute_seconds_from_flops(const Model& model, int batch, double flops_per_second) {
  if (!(flops_per_second > 0) || !std::isfinite(flops_per_second)) {
    throw std::invalid_argument(
        fmt::format("sustained FLOP/s must be a finite number > 0, got {}", flops_per_second));
  }
  if (model.forward_flops_per_sample <= 0) {
    throw std::invalid_argument(
        fmt::format("model {} has no forward FLOP count; give --compute-seconds", model.name));
  }
  return 3.0 * static_cast<double>(model.forward_flops_per_sample) * batch / flops_per_second;
}

void use_measured_compute(ScalingScenario& scenario, MeasuredCompute compute) {
  if (compute.model != scenario.model) {
    throw std::invalid_argument(fmt::format("scenario {} is of model {}, its compute of {}",
                                            scenario.label, scenario.model, compute.model));
  }
  scenario.compute_seconds = compute_at(compute, scenario.batch).iteration_seconds;
  scenario.measured_compute = std::move(compute);
}

std::vector<ScalingRow> predict_scaling(const ScalingScenario& scenario, const Network& network,
                                        std::span<const std::string> algorithms, int max_nodes) {
  if (max_nodes < 1) {
    throw std::invalid_argument(fmt::format("--max-nodes must be >= 1, got {}", max_nodes));
  }
  if (scenario.batch < 1) {
    throw std::invalid_argument(fmt::format("--batch must be >= 1, got {}", scenario.batch));
  }
  if (!(scenario.compute_seconds > 0) || !std::isfinite(scenario.compute_seconds)) {
    throw std::invalid_argument(
        fmt::format("compute time per iteration must be a finite number of seconds > 0, got {}",
                    scenario.compute_seconds));
  }
  if (scenario.overlap == Overlap::fraction &&
      !(scenario.overlap_fraction >= 0 && scenario.overlap_fraction <= 1)) {
    throw std::invalid_argument(
        fmt::format("overlap fraction must be in [0, 1], got {}", scenario.overlap_fraction));
  }
  if (scenario.messages.empty()) {
    throw std::invalid_argument(fmt::format("scenario {} exchanges no messages", scenario.label));
  }
  std::vector<std::string_view> collectives;
  for (const ExchangeMessage& message : scenario.messages) {
    if (std::find(collectives.begin(), collectives.end(), message.collective) ==
        collectives.end()) {
      collectives.push_back(message.collective);
    }
  }
  std::vector<ScalingRow> rows;
  for (const std::string& algorithm : algorithms) {
    CostFunction cost;
    cost.algorithm = algorithm;
    cost.lower_bound = algorithm == "lower_bound";
    for (std::string_view collective : collectives) {
      if (cost.lower_bound) {
        require_placed_cost(cost, collective, network);
        break;
      }
      const CollectiveInfo& info = *find_collective(collective);
      if (info.find_algorithm(algorithm) == nullptr) {
        throw std::invalid_argument(
            fmt::format("unknown algorithm '{}'{}; accepted: {}, lower_bound", algorithm,
                        collective == kAllreduce ? "" : fmt::format(" for {}", collective),
                        info.algorithm_names()));
      }
      bool own = true;
      model_terms(collective, algorithm, 2, 1.0, &own);
      if (!own && (collective != kAllreduce || !network.per_algorithm.contains(algorithm))) {
        throw std::invalid_argument(fmt::format(
            "{} algorithm '{}' has no cost model of its own; predict it from a measured "
            "top-down allreduce fit (--network-from models.csv --per-algorithm-fits) or use "
            "lower_bound",
            collective, algorithm));
      }
      require_placed_cost(cost, collective, network);
    }
    const auto fitted = network.per_algorithm.find(algorithm);
    const auto params_of = [&](std::string_view collective) {
      return fitted != network.per_algorithm.end() && collective == kAllreduce ? fitted->second
                                                                               : network.params;
    };

    double first_iteration = 0;
    const TwoLevelLinks intra_links{network.intra.alpha, network.intra.beta, 0, 0};
    for (int p = 1; p <= max_nodes; ++p) {
      if (p > network.ppn && p % network.ppn != 0) continue;
      ScalingRow row;
      row.algorithm = algorithm;
      row.nodes = p;
      row.samples_per_node =
          scenario.weak ? scenario.batch : static_cast<double>(scenario.batch) / p;
      row.within_batch_limit = scenario.weak || p <= scenario.batch;
      const RowCompute compute = row_compute(scenario, p, row.samples_per_node);
      row.compute_seconds = compute.total;
      std::vector<double> costs;
      // Per collective and size: a placed cost walks every rank's messages
      // of every step.
      std::map<std::pair<std::string_view, double>, double> priced;
      for (const ExchangeMessage& message : scenario.messages) {
        if (!cost.lower_bound) {
          const auto count = static_cast<std::size_t>(message.bytes / scenario.element_bytes);
          const AlgorithmInfo& info =
              *find_collective(message.collective)->find_algorithm(algorithm);
          if (const std::string why = info.unsupported_reason("mpi", p, count); !why.empty()) {
            throw std::invalid_argument(fmt::format("{} {} cannot run {} elements on {} nodes: {}",
                                                    message.collective, algorithm, count, p, why));
          }
        }
        const auto [known, added] =
            priced.try_emplace(std::make_pair(message.collective, message.bytes), 0.0);
        if (added) {
          const NetworkModel params = params_of(message.collective);
          TwoLevelLinks links = intra_links;
          links.inter_alpha = params.alpha;
          links.inter_beta = params.beta;
          known->second =
              cost(message.collective, p, message.bytes, network).seconds(links, params.gamma);
        }
        costs.push_back(known->second);
        row.exchange_seconds += costs.back();
      }
      switch (scenario.overlap) {
        case Overlap::none:
          break;
        case Overlap::fraction:
          row.hidden_seconds =
              std::min(scenario.overlap_fraction * row.exchange_seconds, compute.backward);
          break;
        case Overlap::buckets:
          row.hidden_seconds = row.compute_seconds + row.exchange_seconds -
                               bucket_timeline(scenario, compute, costs).iteration_seconds;
          break;
      }
      row.iteration_seconds = row.compute_seconds + row.exchange_seconds - row.hidden_seconds;
      if (p == 1) first_iteration = row.iteration_seconds;
      row.speedup = (scenario.weak ? p : 1) * first_iteration / row.iteration_seconds;
      row.efficiency = row.speedup / p;
      rows.push_back(row);
    }
  }
  return rows;
}

std::vector<ScalingSummary> summarize_scaling(std::span<const ScalingRow> rows) {
  std::vector<ScalingSummary> summaries;
  for (std::size_t begin = 0; begin < rows.size();) {
    std::size_t end = begin;
    while (end < rows.size() && rows[end].algorithm == rows[begin].algorithm) ++end;
    ScalingSummary s;
    s.algorithm = rows[begin].algorithm;
    const ScalingRow* peak = nullptr;
    int last_within = 0;
    for (std::size_t i = begin; i < end; ++i) {
      const ScalingRow& row = rows[i];
      if (!row.within_batch_limit) continue;
      last_within = row.nodes;
      if (peak == nullptr || row.speedup > peak->speedup) peak = &row;
      if (s.half_efficiency_nodes == 0 && row.efficiency < 0.5) {
        s.half_efficiency_nodes = row.nodes;
      }
    }
    if (peak != nullptr) {
      s.peak_nodes = peak->nodes;
      s.peak_speedup = peak->speedup;
      s.peak_at_max = peak->nodes == last_within && last_within > 1;
      s.exchange_share_at_peak =
          (peak->exchange_seconds - peak->hidden_seconds) / peak->iteration_seconds;
    }
    summaries.push_back(s);
    begin = end;
  }
  return summaries;
}

std::vector<std::string> scaling_csv_columns() { return columns::names(columns::kScaling); }

void write_scaling_csv(const std::string& path, std::span<const ScalingResult> results,
                       const Network& network) {
  // Every row formatted before the file is opened: a value that is not
  // finite (inputs at the edge of double's range: β = 8/1e-320 Gbit/s is
  // inf) fails the write instead of reaching the CSV, whose readers refuse
  // it.
  const std::vector<std::string> columns = scaling_csv_columns();
  std::vector<std::vector<std::string>> lines;
  for (const ScalingResult& result : results) {
    const ScalingScenario& s = result.scenario;
    double gradient_bytes = 0;
    for (const ExchangeMessage& m : s.messages) gradient_bytes += m.bytes;
    for (const ScalingRow& row : result.rows) {
      const auto fitted = network.per_algorithm.find(row.algorithm);
      const NetworkModel& params =
          fitted != network.per_algorithm.end() ? fitted->second : network.params;
      std::vector<std::string> line;
      const auto number = [&](double value, const char* format) {
        if (!std::isfinite(value)) {
          throw std::runtime_error(fmt::format(
              "{}: {} of {} at p = {} is {}; not written (the inputs are beyond what the "
              "model computes in finite numbers)",
              path, columns[line.size()], row.algorithm, row.nodes, value));
        }
        line.push_back(fmt::format(fmt::runtime(format), value));
      };
      line.push_back(s.label);
      line.push_back(s.model);
      number(s.parameters, "{:.0f}");
      number(gradient_bytes, "{:.0f}");
      line.push_back(std::to_string(s.messages.size()));
      line.push_back(s.dtype);
      line.push_back(std::to_string(s.batch));
      line.push_back(s.weak ? "weak" : "strong");
      number(s.compute_seconds, "{:.6g}");
      line.push_back(s.measured_compute ? "measured" : "linear");
      line.push_back(std::string(to_string(s.overlap)));
      number(s.overlap_fraction, "{:.6g}");
      line.push_back(network.name);
      number(params.alpha * 1e6, "{:.6g}");
      number(1e-9 / params.beta, "{:.6g}");
      number(params.gamma * 1e9, "{:.6g}");
      line.push_back(row.algorithm);
      line.push_back(std::to_string(row.nodes));
      for (double value :
           {row.samples_per_node, row.compute_seconds, row.exchange_seconds, row.hidden_seconds,
            row.iteration_seconds, row.speedup, row.efficiency}) {
        number(value, "{:.6g}");
      }
      line.push_back(row.within_batch_limit ? "1" : "0");
      lines.push_back(std::move(line));
    }
  }
  CsvWriter writer(path, columns, ExistingFile::overwrite);
  for (const std::vector<std::string>& line : lines) writer.write_row(line);
}

namespace {

// Where measured compute comes from and how its GFLOP/s fall from the
// scenario's batch to one sample per node.
std::string compute_line(const MeasuredCompute& compute, int batch) {
  const ComputeAtBatch large = compute_at(compute, batch);
  std::string small;
  if (batch > 1 && compute.batches.front() <= 1) {
    const ComputeAtBatch one = compute_at(compute, 1);
    small = fmt::format(", {:.1f} GFLOP/s at 1", one.gflops);
  }
  return fmt::format(
      "compute measured per GEMM layer at the per-node batch ({}{}; batches {}..{}): {:.1f} "
      "GFLOP/s at {}{}{}\n",
      compute.source, compute.blas.empty() ? "" : ", " + compute.blas, compute.batches.front(),
      compute.batches.back(), large.gflops, batch, small,
      std::isnan(compute.peak_flops_per_second)
          ? std::string()
          : fmt::format(" (peak {:.1f})", compute.peak_flops_per_second / 1e9));
}

}  // namespace

std::string format_scaling_report(const ScalingResult& result, const Network& network) {
  const ScalingScenario& s = result.scenario;
  std::string out;
  double gradient_bytes = 0;
  for (const ExchangeMessage& m : s.messages) gradient_bytes += m.bytes;
  out += fmt::format(
      "{}: |W| = {:.0f} parameters ({:.1f} MB {}), {} message{} per iteration, {:.4g} s per "
      "iteration of {} samples on 1 node, {} scaling, overlap {}{}\n",
      s.label, s.parameters, gradient_bytes / 1e6, s.dtype, s.messages.size(),
      s.messages.size() == 1 ? "" : "s", s.compute_seconds, s.batch, s.weak ? "weak" : "strong",
      to_string(s.overlap),
      s.overlap == Overlap::fraction ? fmt::format(" ({:.0f}%)", 100 * s.overlap_fraction) : "");
  if (s.measured_compute) out += compute_line(*s.measured_compute, s.batch);
  out += fmt::format("network {}: {}; α = {:.3f} µs, β = {:.5f} ns/B ({:.3f} GB/s), γ {}\n",
                     network.name, network.description, network.params.alpha * 1e6,
                     network.params.beta * 1e9, 1e-9 / network.params.beta, network.gamma_origin);
  for (const auto& [algorithm, params] : network.per_algorithm) {
    out += fmt::format("  {} uses its top-down fit: α = {:.3f} µs, {:.3f} GB/s, γ = {:.4g} ns/B\n",
                       algorithm, params.alpha * 1e6, params.beta > 0 ? 1e-9 / params.beta : 0.0,
                       params.gamma * 1e9);
  }

  std::vector<std::string> algorithms;
  for (const ScalingSummary& summary : result.summary) algorithms.push_back(summary.algorithm);
  std::set<int> shown;
  const int max_nodes = result.rows.empty() ? 1 : result.rows.back().nodes;
  for (int p = 1; p <= max_nodes; p *= 2) shown.insert(p);
  shown.insert(max_nodes);
  for (const ScalingSummary& summary : result.summary) {
    shown.insert(summary.peak_nodes);
    if (summary.half_efficiency_nodes > 0) shown.insert(summary.half_efficiency_nodes);
  }
  if (!s.weak && s.batch <= max_nodes) shown.insert(s.batch);

  std::string header = fmt::format("  {:>6} {:>10}", "nodes", "compute s");
  for (const std::string& a : algorithms) {
    header += fmt::format(" | {:>18} {:>7} {:>6}", a + " exch s", "S", "E");
  }
  out += header + "\n";
  for (int p : shown) {
    std::string line;
    // With ranks per node some p have no row (nodes of unequal ranks).
    bool priced = false;
    bool beyond = false;
    for (const std::string& a : algorithms) {
      for (const ScalingRow& row : result.rows) {
        if (row.algorithm != a || row.nodes != p) continue;
        priced = true;
        if (line.empty()) line = fmt::format("  {:>6} {:>10.4g}", p, row.compute_seconds);
        beyond = !row.within_batch_limit;
        line += fmt::format(" | {:>18.4g} {:>7.2f} {:>5.0f}%",
                            row.exchange_seconds - row.hidden_seconds, row.speedup,
                            100 * row.efficiency);
      }
    }
    if (priced) out += line + (beyond ? "   beyond the batch limit (p > B)" : "") + "\n";
  }
  out += "  (exch s: exchange time not hidden by backprop; S: speedup; E: efficiency)\n";
  for (const ScalingSummary& summary : result.summary) {
    out += fmt::format(
        "  {}: speedup peaks at p = {} (S = {:.2f}{}), exchange {:.0f}% of the iteration there; "
        "{}\n",
        summary.algorithm, summary.peak_nodes, summary.peak_speedup,
        summary.peak_at_max ? ", still rising at the largest p within limits" : "",
        100 * summary.exchange_share_at_peak,
        summary.half_efficiency_nodes > 0
            ? fmt::format("efficiency below 50% from p = {}", summary.half_efficiency_nodes)
            : "efficiency stays at or above 50%");
  }
  if (!s.weak) {
    out += fmt::format("  batch limit: p <= B = {}{}\n", s.batch,
                       s.batch < max_nodes ? " (larger p: fewer than one sample per node)" : "");
  }
  return out;
}

}  // namespace collbench
