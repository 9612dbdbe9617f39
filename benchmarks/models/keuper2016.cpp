// The Keuper & Pfreundt (2016) scenario: their Table I compute times, the
// catalog's AlexNet and GoogLeNet, and a README whose conclusion paragraph is
// derived from the predicted numbers (so rerunning the command on another
// network rewrites the verdict, never a stale one).
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <stdexcept>

#include "collbench/models/predict.h"

namespace collbench {
namespace {

struct TableEntry {
  const char* model;
  int batch;
  const char* device;
  double seconds;
};

// Keuper & Pfreundt (2016), Table I: seconds per iteration on one node.
// AlexNet is the BVLC Caffe model of the paper's era (60,965,224 parameters).
// GoogLeNet is the catalog's torchvision definition, which has no auxiliary
// classifiers; Caffe's bvlc_googlenet trains with two, whose gradients would
// add to the exchange, so GoogLeNet's predicted scaling here is optimistic.
constexpr TableEntry kTableI[] = {
    {"alexnet_caffe", 256, "CPU", 2.0},    {"alexnet_caffe", 256, "K80", 0.9},
    {"alexnet_caffe", 256, "TitanX", 0.2}, {"alexnet_caffe", 256, "KNL", 0.6},
    {"googlenet", 32, "CPU", 1.3},         {"googlenet", 32, "K80", 0.36},
    {"googlenet", 32, "KNL", 0.32},
};

// The "devices" of the scenarios with this machine's compute: measured per
// GEMM layer at B/p, and its T_compute(B) falling as 1/p as Table I's do.
constexpr std::string_view kMeasuredDevice = "measured";
constexpr std::string_view kMeasuredLinearDevice = "measured-linear";

// Where the falling GEMM efficiency counts: the measured compute at B/p is
// this much of T_compute(B)/p or more.
constexpr double kComputeBites = 1.1;

// "A few dozen nodes": the paper's bound on effective scaling. Efficiency at
// or above 50% beyond this many nodes would contradict it.
constexpr int kFewDozen = 64;

// Largest p (within the batch limit) with efficiency >= 50%.
int effective_nodes(const ScalingResult& result, const ScalingSummary& summary) {
  if (summary.half_efficiency_nodes > 0) return summary.half_efficiency_nodes - 1;
  int last = 1;
  for (const ScalingRow& row : result.rows) {
    if (row.algorithm == summary.algorithm && row.within_batch_limit) last = row.nodes;
  }
  return last;
}

std::string device_of(const ScalingScenario& s) { return s.label.substr(s.label.rfind(' ') + 1); }

// scripts/plot.py's slug(): '=' dropped, every run of characters other
// than [A-Za-z0-9_.-] one '_', none at either end; the PNG names the README
// links are plot.py scaling's.
std::string plot_slug(std::string_view text) {
  std::string out;
  bool gap = false;
  for (const char c : text) {
    if (c == '=') continue;
    const bool kept = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
                      c == '_' || c == '.' || c == '-';
    if (!kept) {
      gap = true;
      continue;
    }
    if (gap && !out.empty()) out += '_';
    gap = false;
    out += c;
  }
  const std::size_t first = out.find_first_not_of('_');
  if (first == std::string::npos) return "";
  return out.substr(first, out.find_last_not_of('_') - first + 1);
}

// "a", "a and b", "a, b and c".
std::string joined(const std::vector<std::string>& items) {
  std::string s;
  for (std::size_t i = 0; i < items.size(); ++i) {
    s += (i == 0 ? "" : (i + 1 == items.size() ? " and " : ", ")) + items[i];
  }
  return s;
}

// plot.py scaling's figure of one scenario, and the comparison of one
// model's compute models (comparison_name there).
std::string scenario_plot(const ScalingScenario& s) {
  return fmt::format("scaling_{}.png", plot_slug(s.label));
}
std::string comparison_plot(const ScalingScenario& s) {
  return fmt::format("efficiency_{}.png", plot_slug(fmt::format("{}_B{}", s.model, s.batch)));
}

enum class ComputeKind { table_i, measured, measured_linear };

ComputeKind compute_kind(const ScalingScenario& s) {
  if (s.measured_compute) return ComputeKind::measured;
  return device_of(s) == kMeasuredLinearDevice ? ComputeKind::measured_linear
                                               : ComputeKind::table_i;
}

// The paper's setting for one model and batch, without its compute: f32,
// the whole gradient as one allreduce, no overlap, strong scaling.
ScalingScenario paper_scenario(const TableEntry& entry, std::string_view device) {
  const Model& model = find_model(entry.model);
  ScalingScenario s;
  s.label = fmt::format("{} B={} {}", entry.model, entry.batch, device);
  s.model = entry.model;
  s.parameters = static_cast<double>(model.parameters());
  s.dtype = "f32";
  s.element_bytes = 4;
  s.messages = whole_gradient(model, 4);
  s.batch = entry.batch;
  return s;
}

}  // namespace

std::vector<ScalingScenario> keuper2016_scenarios() {
  std::vector<ScalingScenario> scenarios;
  for (const TableEntry& entry : kTableI) {
    ScalingScenario s = paper_scenario(entry, entry.device);
    s.compute_seconds = entry.seconds;
    scenarios.push_back(std::move(s));
  }
  return scenarios;
}

std::vector<std::string> keuper2016_algorithms() { return {"ps_central", "tree", "ring"}; }

std::vector<ScalingScenario> keuper2016_measured_scenarios(const GemmMeasurements& measurements) {
  std::vector<ScalingScenario> scenarios;
  std::set<std::pair<std::string_view, int>> done;
  for (const TableEntry& entry : kTableI) {
    if (!done.emplace(entry.model, entry.batch).second) continue;  // one per model and batch
    ScalingScenario s = paper_scenario(entry, kMeasuredDevice);
    use_measured_compute(s, measured_compute(measurements, find_model(entry.model)));
    ScalingScenario linear = paper_scenario(entry, kMeasuredLinearDevice);
    linear.compute_seconds = s.compute_seconds;
    scenarios.push_back(std::move(s));
    scenarios.push_back(std::move(linear));
  }
  return scenarios;
}

namespace {

// The conclusion from the Table I scenarios: the paper's claim, then what
// each algorithm's numbers say.
std::string paper_conclusion(std::span<const ScalingResult> paper, int max_nodes,
                             const std::string& measured_sentence) {
  std::map<std::string, std::pair<int, std::string>> best;  // algorithm -> (max eff p, where)
  std::map<std::string, std::pair<int, int>> peak_range;    // algorithm -> (min, max) peak p
  for (const ScalingResult& r : paper) {
    for (const ScalingSummary& s : r.summary) {
      const int eff = effective_nodes(r, s);
      auto [it, inserted] = best.try_emplace(s.algorithm, eff, r.scenario.label);
      if (!inserted && eff > it->second.first) it->second = {eff, r.scenario.label};
      auto [range, fresh] = peak_range.try_emplace(s.algorithm, s.peak_nodes, s.peak_nodes);
      if (!fresh) {
        range->second.first = std::min(range->second.first, s.peak_nodes);
        range->second.second = std::max(range->second.second, s.peak_nodes);
      }
    }
  }
  std::vector<std::string> supporting, contradicting;
  std::string per_algorithm;
  for (const ScalingSummary& summary : paper.front().summary) {  // the order asked for
    const std::string& algorithm = summary.algorithm;
    const auto& eff = best.at(algorithm);
    const auto [low, high] = peak_range[algorithm];
    per_algorithm += fmt::format(
        "{} keeps efficiency at or above 50% up to at most p = {} (best case {}) and its speedup "
        "peaks at p = {}{}; ",
        algorithm, eff.first, eff.second, low, low == high ? "" : fmt::format("–{}", high));
    (eff.first <= kFewDozen ? supporting : contradicting).push_back(algorithm);
  }
  if (!per_algorithm.empty()) per_algorithm.resize(per_algorithm.size() - 2);

  // Faster devices scale worse: compare, for the best-scaling algorithm, the
  // effective node counts of the first model's devices.
  std::string device_sentence;
  const auto best_algorithm = std::max_element(
      best.begin(), best.end(),
      [](const auto& a, const auto& b) { return a.second.first < b.second.first; });
  if (best_algorithm != best.end()) {
    std::vector<std::pair<double, std::pair<int, std::string>>> by_time;  // s, (eff p, device)
    for (const ScalingResult& r : paper) {
      if (r.scenario.model != paper.front().scenario.model) continue;
      for (const ScalingSummary& s : r.summary) {
        if (s.algorithm == best_algorithm->first) {
          by_time.push_back(
              {r.scenario.compute_seconds, {effective_nodes(r, s), device_of(r.scenario)}});
        }
      }
    }
    std::sort(by_time.begin(), by_time.end());
    bool monotone = true;
    for (std::size_t i = 1; i < by_time.size(); ++i) {
      monotone = monotone && by_time[i].second.first >= by_time[i - 1].second.first;
    }
    std::string list;
    for (auto it = by_time.rbegin(); it != by_time.rend(); ++it) {
      if (!list.empty()) list += ", ";
      list += fmt::format("{} {:.2g} s: p = {}", it->second.second, it->first, it->second.first);
    }
    if (by_time.size() >= 2) {
      device_sentence = fmt::format(
          " For {} with {}, the largest p at 50% efficiency goes {} as the device gets faster "
          "({}), which {} the paper's point that faster compute makes training more "
          "communication bound.",
          paper.front().scenario.model, best_algorithm->first,
          monotone ? "down" : "not monotonically down", list,
          monotone ? "supports" : "only partly supports");
    }
  }
  std::string batch_sentence;
  for (const ScalingResult& r : paper) {
    if (!r.scenario.weak && r.scenario.batch < max_nodes) {
      batch_sentence =
          fmt::format(" The batch limit alone caps {} at B = {} nodes, whatever the network.",
                      r.scenario.model, r.scenario.batch);
      break;
    }
  }
  std::string verdict;
  if (contradicting.empty()) {
    verdict = fmt::format(
        "These numbers support the paper's conclusion that data-parallel SGD is communication "
        "bound and does not scale effectively beyond a few dozen nodes (taken here as "
        "efficiency ≥ 50% at no more than {} nodes): ",
        kFewDozen);
  } else if (supporting.empty()) {
    verdict = fmt::format(
        "These numbers contradict the paper's conclusion that effective scaling stops at a few "
        "dozen nodes (taken here as efficiency ≥ 50% at no more than {} nodes) for every "
        "algorithm compared: ",
        kFewDozen);
  } else {
    verdict = fmt::format(
        "These numbers support the paper's conclusion that effective scaling stops at a few "
        "dozen nodes (taken here as efficiency ≥ 50% at no more than {} nodes) for {}, and "
        "contradict it for {}: ",
        kFewDozen, joined(supporting), joined(contradicting));
  }
  std::string out = "## Conclusion\n\n";
  out += verdict + per_algorithm + "." + device_sentence + batch_sentence +
         " The model assumes compute time falls as 1/p at any per-node batch";
  out += measured_sentence.empty()
             ? "; the falling GEMM efficiency at small B/p that the paper also names would lower "
               "the curves further, so these limits are optimistic.\n"
             : ". " + measured_sentence + "\n\n";
  return out;
}

// The result of `model` at `batch` whose compute is `kind` (and, for
// Table I, on the CPU), or null.
const ScalingResult* result_of(std::span<const ScalingResult> results, const std::string& model,
                               int batch, ComputeKind kind) {
  for (const ScalingResult& r : results) {
    if (r.scenario.model == model && r.scenario.batch == batch &&
        compute_kind(r.scenario) == kind &&
        (kind != ComputeKind::table_i || device_of(r.scenario) == "CPU")) {
      return &r;
    }
  }
  return nullptr;
}

double efficiency_at(const ScalingResult& result, const std::string& algorithm, int nodes) {
  for (const ScalingRow& row : result.rows) {
    if (row.algorithm == algorithm && row.nodes == nodes) return row.efficiency;
  }
  return std::nan("");
}

// The largest p at 50% efficiency of `algorithm`, or -1 when it has no summary.
int effective_nodes_of(const ScalingResult& result, const std::string& algorithm) {
  for (const ScalingSummary& s : result.summary) {
    if (s.algorithm == algorithm) return effective_nodes(result, s);
  }
  return -1;
}

std::string percent_or_dash(double fraction) {
  return std::isnan(fraction) ? std::string("-") : fmt::format("{:.0f}%", 100 * fraction);
}

// The three compute models of one paper model and batch, in column order.
struct ComputeColumns {
  const ScalingResult* table_i_cpu = nullptr;
  const ScalingResult* measured_linear = nullptr;
  const ScalingResult* measured = nullptr;
  std::vector<std::pair<std::string_view, const ScalingResult*>> present() const {
    std::vector<std::pair<std::string_view, const ScalingResult*>> columns;
    if (table_i_cpu != nullptr) columns.emplace_back("Table I CPU", table_i_cpu);
    if (measured_linear != nullptr) columns.emplace_back(kMeasuredLinearDevice, measured_linear);
    columns.emplace_back(kMeasuredDevice, measured);
    return columns;
  }
};

// The measured compute at p nodes over T_compute(B)/p: 1 where the GEMMs
// keep their rate at B/p, above 1 where they slow down (NaN: no row at p).
double compute_ratio_at(const ScalingResult& measured, int nodes) {
  for (const ScalingRow& row : measured.rows) {
    if (row.nodes == nodes) {
      return row.compute_seconds / (measured.scenario.compute_seconds / nodes);
    }
  }
  return std::nan("");
}

// Where the falling GEMM efficiency starts to count: the smallest p within
// the batch limit whose compute_ratio_at is kComputeBites or more (0:
// none), and the ratio farthest from 1 there.
struct ComputeBite {
  int nodes = 0;
  double farthest = 1;
};

ComputeBite compute_bite(const ScalingResult& measured) {
  ComputeBite bite;
  std::set<int> seen;
  for (const ScalingRow& row : measured.rows) {
    if (!row.within_batch_limit || !seen.insert(row.nodes).second) continue;
    const double ratio = compute_ratio_at(measured, row.nodes);
    if (std::abs(ratio - 1) > std::abs(bite.farthest - 1)) bite.farthest = ratio;
    if (bite.nodes == 0 && ratio >= kComputeBites) bite.nodes = row.nodes;
  }
  return bite;
}

// What one measured scenario's compute is: its time and rate at B and at
// one sample per node.
std::string measured_compute_sentence(const ScalingScenario& s, const ScalingResult* cpu) {
  const MeasuredCompute& compute = *s.measured_compute;
  const auto rate = [&](double batch) {
    const ComputeAtBatch at = compute_at(compute, batch);
    return fmt::format("{:.1f} GFLOP/s{}", at.gflops,
                       std::isnan(at.efficiency)
                           ? std::string()
                           : fmt::format(", {:.0f}% of the peak GEMM's", 100 * at.efficiency));
  };
  const double one = compute_at(compute, 1).iteration_seconds;
  const double share = s.compute_seconds / s.batch;
  return fmt::format(
      "Measured T_compute(B) = {:.3g} s ({}); at one sample per node {:.3g} s ({}), {:.2f}× "
      "T_compute(B)/B = {:.3g} s.{}",
      s.compute_seconds, rate(s.batch), one, rate(1), one / share, share,
      cpu == nullptr
          ? std::string()
          : fmt::format(" Table I's CPU: T_compute(B) = {:.2g} s.", cpu->scenario.compute_seconds));
}

// Per p (powers of two up to B): the measured compute over T_compute(B)/p,
// and efficiency per algorithm and compute model; then the largest p at 50%
// efficiency of each.
std::string measured_table(const ComputeColumns& compute) {
  const std::vector<std::pair<std::string_view, const ScalingResult*>> columns = compute.present();
  std::vector<std::string> algorithms;
  for (const ScalingSummary& s : compute.measured->summary) algorithms.push_back(s.algorithm);
  std::string out = "| p | measured T_compute ÷ T_compute(B)/p |";
  std::string rule = "|---:|---:|";
  for (const std::string& a : algorithms) {
    for (const auto& [name, result] : columns) {
      out += fmt::format(" {} E, {} |", a, name);
      rule += "---:|";
    }
  }
  out += "\n" + rule + "\n";
  const int last = compute.measured->scenario.batch;
  std::set<int> shown;
  for (int p = 1; p <= last; p *= 2) shown.insert(p);
  shown.insert(last);
  for (int p : shown) {
    const double ratio = compute_ratio_at(*compute.measured, p);
    out += fmt::format("| {} | {} |", p,
                       std::isnan(ratio) ? std::string("-") : fmt::format("{:.2f}", ratio));
    for (const std::string& a : algorithms) {
      for (const auto& [name, result] : columns) {
        out += fmt::format(" {} |", percent_or_dash(efficiency_at(*result, a, p)));
      }
    }
    out += "\n";
  }
  out += "| largest p with E ≥ 50% | |";
  for (const std::string& a : algorithms) {
    for (const auto& [name, result] : columns) {
      const int nodes = effective_nodes_of(*result, a);
      out += fmt::format(" {} |", nodes < 0 ? std::string("-") : std::to_string(nodes));
    }
  }
  return out + "\n";
}

// Where each limit bites for one model: the 50% point from Table I's CPU
// time to this machine's time (still falling as 1/p) to the measured
// per-batch compute, where the measured compute leaves 1/p, and which
// algorithms only the batch limit stops.
std::string measured_shift(const ComputeColumns& compute) {
  if (compute.table_i_cpu == nullptr || compute.measured_linear == nullptr) return "";
  const ScalingScenario& s = compute.measured->scenario;
  std::vector<std::string> moves, moved, batch_bound;
  for (const ScalingSummary& m : compute.measured->summary) {
    const int cpu = effective_nodes_of(*compute.table_i_cpu, m.algorithm);
    const int linear = effective_nodes_of(*compute.measured_linear, m.algorithm);
    const int measured = effective_nodes(*compute.measured, m);
    moves.push_back(fmt::format("{} p = {} -> {} -> {}", m.algorithm, cpu, linear, measured));
    if (measured != linear) moved.push_back(m.algorithm);
    if (!s.weak && m.half_efficiency_nodes == 0) batch_bound.push_back(m.algorithm);
  }
  const double cpu_seconds = compute.table_i_cpu->scenario.compute_seconds;
  const bool slower = s.compute_seconds > cpu_seconds;
  const ComputeBite bite = compute_bite(*compute.measured);
  std::string gemm;
  if (bite.nodes > 0) {
    gemm = fmt::format(
        "the measured compute is {:.0f}% or more above T_compute(B)/p from p = {} (B/p = {:.3g}) "
        "and {:.2f}× it at p = {}",
        100 * (kComputeBites - 1), bite.nodes, static_cast<double>(s.batch) / bite.nodes,
        compute_ratio_at(*compute.measured, s.batch), s.batch);
  } else {
    gemm = fmt::format("the measured compute stays within {:.1f}% of T_compute(B)/p up to p = {}",
                       100 * std::abs(bite.farthest - 1), s.batch);
  }
  gemm += moved.empty() ? ", which moves no 50% point"
                        : fmt::format(", which moves the 50% point of {}", joined(moved));
  std::string batch;
  if (!batch_bound.empty()) {
    batch = fmt::format(
        " With measured compute, {} {} efficiency at or above 50% up to p = B = {}: the batch "
        "limit, not the network or the GEMMs, ends {} scaling.",
        joined(batch_bound), batch_bound.size() == 1 ? "keeps" : "keep", s.batch,
        batch_bound.size() == 1 ? "its" : "their");
  }
  return fmt::format(
      "Largest p at 50% efficiency, Table I CPU -> this machine's T_compute(B) falling as 1/p "
      "-> measured at B/p: {}. The first step is this machine's speed: T_compute(B) = {:.3g} s "
      "against Table I's {:.2g} s, {} compute for the same exchange. The second is the GEMM "
      "efficiency falling with B/p: {}.{}\n\n",
      fmt::join(moves, "; "), s.compute_seconds, cpu_seconds, slower ? "more" : "less", gemm,
      batch);
}

// Every measured scenario with its Table I CPU and measured-linear twins.
std::vector<ComputeColumns> measured_models(std::span<const ScalingResult> results) {
  std::vector<ComputeColumns> models;
  for (const ScalingResult& r : results) {
    if (compute_kind(r.scenario) != ComputeKind::measured) continue;
    const ScalingScenario& s = r.scenario;
    models.push_back({result_of(results, s.model, s.batch, ComputeKind::table_i),
                      result_of(results, s.model, s.batch, ComputeKind::measured_linear), &r});
  }
  return models;
}

// The conclusion's sentence on the measured compute: per model, how the
// falling GEMM efficiency moves the largest p at 50% efficiency from the
// measured-linear twin's; empty without twins.
std::string measured_conclusion(const std::vector<ComputeColumns>& models) {
  std::vector<std::string> per_model;
  bool down = false, up = false;
  for (const ComputeColumns& model : models) {
    if (model.measured_linear == nullptr) continue;
    std::vector<std::string> linear, measured, names;
    for (const ScalingSummary& m : model.measured->summary) {
      const int from = effective_nodes_of(*model.measured_linear, m.algorithm);
      const int to = effective_nodes(*model.measured, m);
      linear.push_back(std::to_string(from));
      measured.push_back(std::to_string(to));
      names.push_back(m.algorithm);
      down = down || to < from;
      up = up || to > from;
    }
    // The first model names what moves; the others say "it".
    const std::string what =
        per_model.empty() ? fmt::format("the largest p at 50% efficiency of {}", joined(names))
                          : "it";
    const ScalingScenario& s = model.measured->scenario;
    per_model.push_back(linear == measured
                            ? fmt::format("leaves {} at {} for {} B={}", what,
                                          fmt::join(linear, ", "), s.model, s.batch)
                            : fmt::format("moves {} from {} to {} for {} B={}", what,
                                          fmt::join(linear, ", "), fmt::join(measured, ", "),
                                          s.model, s.batch));
  }
  if (per_model.empty()) return "";
  std::string verdict;
  if (down && !up) verdict = ": where it moves, the limits above are optimistic";
  if (up && !down) verdict = ": where it moves, the limits above are pessimistic";
  if (!up && !down) verdict = ": here the 1/p assumption does not change the limits above";
  return fmt::format(
      "Measured on this machine (next section) and set against the same T_compute(B) falling "
      "as 1/p, the GEMM efficiency falling at small B/p {}{}.",
      joined(per_model), verdict);
}

// The measured scenarios beside the paper's CPU time.
std::string measured_section(const std::vector<ComputeColumns>& models, bool plots) {
  if (models.empty()) return "";
  const MeasuredCompute& first = *models.front().measured->scenario.measured_compute;
  std::string out = "## Measured compute on this machine\n\n";
  out += fmt::format(
      "The `{}` scenarios replace T_compute(B)/p with the sum of every GEMM layer's forward and "
      "backward time measured on this machine at the per-node batch B/p ({}{}; log-log "
      "interpolation between the measured batches, so B/p need not be whole; p > B: one "
      "sample's time). Only the GEMMs are timed (convolutions as im2col products, linear "
      "layers), as the catalog counts FLOPs. Where a GEMM's efficiency falls as B/p shrinks, "
      "compute falls slower than 1/p: the paper's second limit, which Table I's constant times "
      "leave out. The `{}` scenarios take the measured T_compute(B) and divide it by p as "
      "Table I's are, which separates this machine's speed from that limit. The network, "
      "exchange and overlap are the same as above.{}\n\n",
      kMeasuredDevice, first.source, first.blas.empty() ? "" : ", BLAS " + first.blas,
      kMeasuredLinearDevice,
      plots ? " Each model's figure: efficiency against p per algorithm, Table I's devices and "
              "measured-linear dashed (constant compute falling as 1/p), measured solid, a dot "
              "at each line's largest p with E ≥ 50% (its value in the legend), p > B shaded."
            : "");
  for (const ComputeColumns& model : models) {
    const ScalingScenario& s = model.measured->scenario;
    out += fmt::format("**{} B={}.** {}\n\n", s.model, s.batch,
                       measured_compute_sentence(s, model.table_i_cpu));
    if (plots) {
      out +=
          fmt::format("![{} B={}: efficiency against p with constant and measured compute]({})\n\n",
                      s.model, s.batch, comparison_plot(s));
    }
    out += measured_table(model) + "\n" + measured_shift(model);
  }
  return out;
}

}  // namespace

std::string keuper2016_readme(std::span<const ScalingResult> results, const Network& network,
                              std::string_view command_line, bool plots) {
  if (results.empty()) throw std::invalid_argument("keuper2016_readme: no results");
  std::string out;
  out += "# Keuper & Pfreundt (2016), Table I, on a modelled network\n\n";
  out += fmt::format(
      "Generated by `{}`. Do not edit by hand: rerun the command (it rewrites this file{}).\n\n",
      command_line, plots ? ", `scaling.csv` and the plots" : " and `scaling.csv`");
  std::map<std::string, std::pair<double, double>> models;  // name -> (|W|, bytes)
  int max_nodes = 1;
  bool any_measured = false;
  for (const ScalingResult& r : results) {
    double bytes = 0;
    for (const ExchangeMessage& m : r.scenario.messages) bytes += m.bytes;
    models[r.scenario.model] = {r.scenario.parameters, bytes};
    any_measured = any_measured || r.scenario.measured_compute.has_value();
    if (!r.rows.empty()) max_nodes = std::max(max_nodes, r.rows.back().nodes);
  }
  std::string model_list;
  for (const auto& [name, size] : models) {
    if (!model_list.empty()) model_list += ", ";
    model_list += fmt::format("{} (|W| = {:.0f}, {:.1f} MB of f32 gradient)", name, size.first,
                              size.second / 1e6);
  }
  out += fmt::format(
      "**Setting.** Synchronous data-parallel SGD with the global batch B split over p = 1..{} "
      "nodes (strong scaling; p > B is marked as beyond the batch limit), "
      "T_iter(p) = T_compute(B)/p + T_exchange(p, |W|), the whole gradient exchanged as one "
      "allreduce per iteration with no overlap, speedup S(p) = T_iter(1)/T_iter(p). "
      "T_compute(B) per device is the paper's Table I{}. Models: {}. Network: {}; "
      "α = {:.2f} µs, β = {:.4f} ns/B ({:.3f} GB/s); γ {}. Exchange costs are the "
      "algorithms' own cost terms (collectives/allreduce/<name>.cpp).\n\n",
      max_nodes,
      any_measured ? "; the `measured` scenarios take T_compute(B/p) measured on this machine's "
                     "GEMMs in place of T_compute(B)/p, the `measured-linear` ones its "
                     "T_compute(B) over p (see below)"
                   : "",
      model_list, network.description, network.params.alpha * 1e6, network.params.beta * 1e9,
      1e-9 / network.params.beta, network.gamma_origin);

  out +=
      "| scenario | T_compute(B) s | algorithm | peak p | peak S | E < 50% from p | "
      "largest p with E ≥ 50% | exchange share at peak |\n";
  out += "|---|---:|---|---:|---:|---:|---:|---:|\n";
  for (const ScalingResult& r : results) {
    for (const ScalingSummary& s : r.summary) {
      out += fmt::format(
          "| {} | {:.2f} | {} | {}{} | {:.2f} | {} | {} | {:.0f}% |\n", r.scenario.label,
          r.scenario.compute_seconds, s.algorithm, s.peak_nodes, s.peak_at_max ? " (limit)" : "",
          s.peak_speedup,
          s.half_efficiency_nodes > 0 ? std::to_string(s.half_efficiency_nodes) : "never",
          effective_nodes(r, s), 100 * s.exchange_share_at_peak);
    }
  }
  out +=
      "\n\"(limit)\": speedup still rising at the largest p considered (B or the node "
      "range). Every p is in `scaling.csv`";
  if (plots) {
    // plot.py draws a scenario of a model with measured compute only in
    // that model's comparison (comparison_groups there).
    std::set<std::pair<std::string, int>> compared;
    for (const ScalingResult& r : results) {
      if (compute_kind(r.scenario) == ComputeKind::measured) {
        compared.emplace(r.scenario.model, r.scenario.batch);
      }
    }
    std::vector<std::string> links;
    for (const ScalingResult& r : results) {
      if (compared.contains({r.scenario.model, r.scenario.batch})) continue;
      links.push_back(fmt::format("[{}]({})", r.scenario.label, scenario_plot(r.scenario)));
    }
    if (links.empty()) {
      out += "; the figures below draw each model's efficiency against p.\n\n";
    } else {
      out += fmt::format(". Speedup and efficiency against p per scenario, p = B marked: {}.\n\n",
                         fmt::join(links, ", "));
    }
  } else {
    out += " (`--plot` draws speedup and efficiency against p per scenario).\n\n";
  }

  std::vector<ScalingResult> paper;
  for (const ScalingResult& r : results) {
    if (compute_kind(r.scenario) == ComputeKind::table_i) paper.push_back(r);
  }
  if (paper.empty()) throw std::invalid_argument("keuper2016_readme: no Table I results");
  const std::vector<ComputeColumns> measured = measured_models(results);
  out += paper_conclusion(paper, max_nodes, measured_conclusion(measured));
  out += measured_section(measured, plots);
  if (!measured.empty()) {
    // Its own folder: made by another command, after this one.
    out +=
        "\n## By simulation\n\nThe `measured` scenarios run message by message on a simulated "
        "cluster of the same network (`collbench --transport sim`, `scripts/keuper_sim.sh`), "
        "beside this formula and the paper's setting: [simulated/](simulated/README.md).\n";
  }
  return out;
}

}  // namespace collbench
