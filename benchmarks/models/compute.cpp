// Measured compute and the iteration timeline (see compute.h for the model).
#include "collbench/models/compute.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <set>
#include <stdexcept>

#include "collbench/core/columns.h"
#include "finite_number.h"

namespace collbench {
namespace {

// The gemm rows' identity (family, algorithm) and what a row is (results/README.md).
constexpr std::string_view kGemmFamily = "local";
constexpr std::string_view kGemmAlgorithm = "gemm";
constexpr std::string_view kForward = "forward";
constexpr std::string_view kBackward = "backward";
constexpr std::string_view kPeak = "peak";

// The harness writes flops per call as a number it computed from the same
// catalog shapes; the tolerance only covers a shortened decimal rendering.
constexpr double kFlopsRelativeTolerance = 1e-6;

std::string batch_list(const std::vector<int>& batches) {
  return batches.empty() ? std::string("none") : fmt::to_string(fmt::join(batches, ", "));
}

using models_detail::finite_or_nan;

// A row of one table, and where it is for messages.
struct RowReader {
  const CsvTable& table;
  const std::vector<std::string>& row;
  std::string where;  // "FILE: data row N"

  const std::string& text(std::string_view column) const {
    return row[static_cast<std::size_t>(table.column(column))];
  }
  // A finite number > 0 (whole and >= 1 with `whole`), else the error says
  // what it is and what is accepted.
  double positive(std::string_view column, std::string_view unit, bool whole = false) const {
    const std::string& value_text = text(column);
    const double value = finite_or_nan(value_text);
    const bool ok = whole ? value >= 1 && value == std::floor(value) && value <= 1e9 : value > 0;
    if (!ok) {
      throw std::runtime_error(fmt::format("{}: {} is '{}'; expected {} of {} {}", where, column,
                                           value_text, whole ? "a whole number" : "a finite number",
                                           unit, whole ? ">= 1" : "> 0"));
    }
    return value;
  }
  // median_us as seconds, within its column's range (core/columns.csv): a
  // median of 1e300 us made every predicted iteration 1e294 s.
  double median_seconds() const {
    const double highest = std::ranges::find(columns::kCollbench, std::string_view("median_us"),
                                             &columns::Column::name)
                               ->highest;
    const double value = positive("median_us", "µs");
    if (value > highest) {
      throw std::runtime_error(
          fmt::format("{}: median_us is '{}'; expected a finite number of µs > 0 and <= {:g}",
                      where, text("median_us"), highest));
    }
    return value * 1e-6;
  }
};

// Every repetition's median_us of one benchmark.
struct Samples {
  std::vector<double> seconds;
  double flops = 0;
  int multiplicity = 0;
  std::string where;
};

using LayerKey = std::tuple<std::string, std::string, std::string, int>;

void add_layer_row(const RowReader& r, const std::string& pass, double seconds, double flops,
                   std::map<LayerKey, Samples>& layers) {
  const auto batch = static_cast<int>(r.positive("batch", "samples", true));
  const auto multiplicity = static_cast<int>(r.positive("multiplicity", "layers", true));
  const LayerKey key{r.text("model"), r.text("item"), pass, batch};
  auto [it, fresh] = layers.try_emplace(key);
  Samples& samples = it->second;
  if (fresh) {
    samples.flops = flops;
    samples.multiplicity = multiplicity;
    samples.where = r.where;
  } else if (samples.flops != flops || samples.multiplicity != multiplicity) {
    throw std::runtime_error(fmt::format(
        "{}: {} {} {} at batch {} has flops {:g} and multiplicity {}, but {} has {:g} and {}; "
        "one benchmark's rows must agree",
        r.where, r.text("model"), r.text("item"), pass, batch, flops, multiplicity, samples.where,
        samples.flops, samples.multiplicity));
  }
  samples.seconds.push_back(seconds);
}

// The representative layer's name -> its group (distinct_gemm_layers order).
std::map<std::string, std::size_t> group_of_name(const Model& model,
                                                 const std::vector<DistinctGemm>& distinct) {
  std::map<std::string, std::size_t> groups;
  for (std::size_t g = 0; g < distinct.size(); ++g) {
    groups.emplace(model.gemm_layers[distinct[g].layer].name, g);
  }
  return groups;
}

// 2 x multiply-adds of one call of `pass` (forward, or backward: data plus
// weight gradient) of `layer` at `batch` samples.
double pass_flops(const GemmLayer& layer, std::string_view pass, std::int64_t batch) {
  if (pass == kForward) {
    return 2.0 * static_cast<double>(layer.at_batch(GemmPass::forward, batch).multiply_adds());
  }
  return 2.0 *
         static_cast<double>(layer.at_batch(GemmPass::data_gradient, batch).multiply_adds() +
                             layer.at_batch(GemmPass::weight_gradient, batch).multiply_adds());
}

// A row's multiplicity and flops against the catalog's: a CSV of another
// catalog version would otherwise be read as this one's.
void check_against_catalog(const GemmPoint& point, const GemmLayer& layer,
                           const DistinctGemm& group, std::string_view pass, int batch,
                           const std::string& model) {
  if (point.multiplicity != group.multiplicity) {
    throw std::runtime_error(fmt::format(
        "{}: multiplicity of {} {} is {}, but the catalog's {} has {} layers with its products; "
        "the CSV was measured with another catalog",
        point.where, model, layer.name, point.multiplicity, model, group.multiplicity));
  }
  const double expected = pass_flops(layer, pass, batch);
  if (std::abs(point.flops - expected) > kFlopsRelativeTolerance * expected) {
    throw std::runtime_error(fmt::format(
        "{}: flops of {} {} {} at batch {} is {:g}, but the catalog's shapes give {:g}; the CSV "
        "was measured with another catalog",
        point.where, model, layer.name, pass, batch, point.flops, expected));
  }
}

// t(b) between measured neighbours (b0, t0) and (b1, t1): a power law.
double log_log(double b, double b0, double t0, double b1, double t1) {
  const double weight = std::log(b / b0) / std::log(b1 / b0);
  return t0 * std::pow(t1 / t0, weight);
}

// Seconds of one layer of group `g` at `batch` (checked by layer_seconds).
PassSeconds group_at(const MeasuredCompute& c, std::size_t g, double batch) {
  const std::vector<PassSeconds>& measured = c.group_seconds[g];
  const auto above = std::upper_bound(c.batches.begin(), c.batches.end(), batch);
  const auto i = static_cast<std::size_t>(above - c.batches.begin());  // first batch > `batch`
  if (c.batches[i - 1] == batch) return measured[i - 1];
  if (i == c.batches.size()) {
    const double scale = batch / c.batches.back();
    return {measured.back().forward * scale, measured.back().backward * scale};
  }
  const double b0 = c.batches[i - 1], b1 = c.batches[i];
  return {log_log(batch, b0, measured[i - 1].forward, b1, measured[i].forward),
          log_log(batch, b0, measured[i - 1].backward, b1, measured[i].backward)};
}

std::string number_or_empty(double value, const std::string& path, std::string_view column) {
  if (std::isnan(value)) return "";
  if (!std::isfinite(value)) {
    throw std::runtime_error(fmt::format("{}: {} is {}; not written", path, column, value));
  }
  return fmt::format("{:.6g}", value);
}

void require_time(double seconds, std::string_view what) {
  if (!(seconds >= 0) || !std::isfinite(seconds)) {
    throw std::invalid_argument(
        fmt::format("{} must be a finite number of seconds >= 0, got {}", what, seconds));
  }
}

}  // namespace

std::vector<std::string> gemm_columns() {
  return {"family", "algorithm", "model", "item",     "multiplicity",
          "batch",  "pass",      "flops", "median_us"};
}

void require_gemm_columns(const CsvTable& table, const std::string& source) {
  std::vector<std::string> missing;
  for (const std::string& column : gemm_columns()) {
    if (table.column(column) < 0) missing.push_back(column);
  }
  if (!missing.empty()) {
    throw std::runtime_error(fmt::format(
        "{}: missing column{} {}; the gemm rows of the harness CSV (results/README.md) need {}",
        source, missing.size() > 1 ? "s" : "", fmt::to_string(fmt::join(missing, ", ")),
        fmt::to_string(fmt::join(gemm_columns(), ", "))));
  }
}

std::vector<std::string> GemmMeasurements::models() const {
  std::set<std::string> names;
  for (const auto& [key, point] : layers) names.insert(std::get<0>(key));
  return {names.begin(), names.end()};
}

GemmMeasurements read_gemm_measurements(std::span<const NamedTable> tables) {
  GemmMeasurements out;
  std::vector<std::string> sources;
  std::map<LayerKey, Samples> layers;
  std::map<double, Samples> peaks;  // by flops: one benchmark per size
  for (const NamedTable& named : tables) {
    sources.push_back(named.source);
    const CsvTable& table = named.table;
    const int family = table.column("family"), algorithm = table.column("algorithm");
    if (family < 0 || algorithm < 0) continue;  // not a harness CSV: no gemm rows
    const int check = table.column("check"), blas = table.column("blas");
    bool columns_checked = false;
    for (std::size_t r = 0; r < table.rows.size(); ++r) {
      const std::vector<std::string>& row = table.rows[r];
      if (row[static_cast<std::size_t>(family)] != kGemmFamily ||
          row[static_cast<std::size_t>(algorithm)] != kGemmAlgorithm) {
        continue;
      }
      if (!columns_checked) require_gemm_columns(table, named.source);
      columns_checked = true;
      const RowReader reader{table, row, fmt::format("{}: data row {}", named.source, r + 1)};
      if (check >= 0 && row[static_cast<std::size_t>(check)] == "wrong") continue;
      if (reader.text("median_us").empty()) continue;  // the harness did not time it
      if (blas >= 0 && out.blas.empty()) out.blas = row[static_cast<std::size_t>(blas)];
      const double seconds = reader.median_seconds();
      const double flops = reader.positive("flops", "FLOPs");
      const std::string& pass = reader.text("pass");
      if (pass == kPeak) {
        Samples& peak = peaks[flops];
        peak.seconds.push_back(seconds);
        peak.flops = flops;
      } else if (pass == kForward || pass == kBackward) {
        add_layer_row(reader, pass, seconds, flops, layers);
      } else {
        throw std::runtime_error(fmt::format("{}: pass is '{}'; expected forward, backward or peak",
                                             reader.where, pass));
      }
    }
  }
  out.source = fmt::to_string(fmt::join(sources, ", "));
  for (auto& [key, samples] : layers) {
    out.layers[key] = {quantile(samples.seconds, 0.5), samples.flops, samples.multiplicity,
                       samples.where};
  }
  for (const auto& [flops, samples] : peaks) {
    const double rate = flops / quantile(samples.seconds, 0.5);
    if (std::isnan(out.peak_flops_per_second) || rate > out.peak_flops_per_second) {
      out.peak_flops_per_second = rate;
    }
  }
  return out;
}

GemmMeasurements read_gemm_file(const std::string& path) {
  const NamedTable named{path, read_csv_file(path)};
  require_gemm_columns(named.table, path);
  GemmMeasurements measurements = read_gemm_measurements(std::span(&named, 1));
  if (measurements.empty()) {
    throw std::runtime_error(
        fmt::format("{}: no timed gemm rows (family={}, algorithm={}, pass forward or backward)",
                    path, kGemmFamily, kGemmAlgorithm));
  }
  return measurements;
}

MeasuredCompute measured_compute(const GemmMeasurements& measurements, const Model& model) {
  MeasuredCompute c;
  c.source = measurements.source;
  c.model = model.name;
  c.blas = measurements.blas;
  c.peak_flops_per_second = measurements.peak_flops_per_second;
  const std::vector<DistinctGemm> distinct = distinct_gemm_layers(model);
  const std::map<std::string, std::size_t> groups = group_of_name(model, distinct);
  c.layer_groups = gemm_layer_groups(model);

  std::set<int> batches;
  for (const auto& [key, point] : measurements.layers) {
    const auto& [name, item, pass, batch] = key;
    if (name != model.name) continue;
    const auto group = groups.find(item);
    if (group == groups.end()) {
      throw std::runtime_error(fmt::format(
          "{}: item '{}' is not the first layer of a group of {}'s GEMM layers in the catalog "
          "(collbench-catalog); the CSV was measured with another catalog",
          point.where, item, model.name));
    }
    check_against_catalog(point, model.gemm_layers[distinct[group->second].layer],
                          distinct[group->second], pass, batch, model.name);
    batches.insert(batch);
  }
  c.batches.assign(batches.begin(), batches.end());
  if (c.batches.empty()) {
    const std::vector<std::string> there = measurements.models();
    throw std::runtime_error(fmt::format(
        "{}: no gemm rows for model {}; models there: {}", measurements.source, model.name,
        there.empty() ? std::string("none") : fmt::to_string(fmt::join(there, ", "))));
  }

  c.group_seconds.assign(distinct.size(), std::vector<PassSeconds>(c.batches.size()));
  for (std::size_t g = 0; g < distinct.size(); ++g) {
    const std::string& item = model.gemm_layers[distinct[g].layer].name;
    for (std::size_t b = 0; b < c.batches.size(); ++b) {
      for (std::string_view pass : {kForward, kBackward}) {
        const auto found =
            measurements.layers.find({model.name, item, std::string(pass), c.batches[b]});
        if (found == measurements.layers.end()) {
          throw std::runtime_error(fmt::format(
              "{}: model {} at batch {}: no {} row for layer {} (a group of {}); batches there: "
              "{}",
              measurements.source, model.name, c.batches[b], pass, item, distinct[g].multiplicity,
              batch_list(c.batches)));
        }
        (pass == kForward ? c.group_seconds[g][b].forward : c.group_seconds[g][b].backward) =
            found->second.seconds;
      }
    }
  }
  for (const GemmLayer& layer : model.gemm_layers) {
    c.forward_flops_per_sample += pass_flops(layer, kForward, 1);
    c.backward_flops_per_sample += pass_flops(layer, kBackward, 1);
  }
  return c;
}

std::vector<PassSeconds> layer_seconds_at_rate(const Model& model, double batch,
                                               double flops_per_second) {
  if (!(flops_per_second > 0) || !std::isfinite(flops_per_second) || !(batch > 0)) {
    throw std::invalid_argument(fmt::format(
        "layer_seconds_at_rate: {} FLOP/s at batch {}; both must be > 0", flops_per_second, batch));
  }
  // A product's FLOPs are linear in the batch: one sample's, scaled.
  std::vector<PassSeconds> layers;
  for (const GemmLayer& layer : model.gemm_layers) {
    layers.push_back({pass_flops(layer, kForward, 1) * batch / flops_per_second,
                      pass_flops(layer, kBackward, 1) * batch / flops_per_second});
  }
  return layers;
}

std::vector<PassSeconds> layer_seconds(const MeasuredCompute& compute, double batch) {
  if (compute.batches.empty() || compute.group_seconds.empty()) {
    throw std::invalid_argument(fmt::format("{}: no measured batches", compute.model));
  }
  if (!(batch >= compute.batches.front()) || !std::isfinite(batch)) {
    throw std::runtime_error(fmt::format(
        "{}: model {} at batch {:g}: below the smallest measured batch ({}); batches there: {} "
        "(the time of smaller GEMMs is not extrapolated: measure them)",
        compute.source, compute.model, batch, compute.batches.front(),
        batch_list(compute.batches)));
  }
  std::vector<PassSeconds> per_group;
  per_group.reserve(compute.group_seconds.size());
  for (std::size_t g = 0; g < compute.group_seconds.size(); ++g) {
    per_group.push_back(group_at(compute, g, batch));
  }
  std::vector<PassSeconds> layers;
  layers.reserve(compute.layer_groups.size());
  for (std::size_t group : compute.layer_groups) layers.push_back(per_group[group]);
  return layers;
}

ComputeAtBatch compute_at(const MeasuredCompute& compute, double batch) {
  ComputeAtBatch at;
  at.batch = batch;
  for (const PassSeconds& layer : layer_seconds(compute, batch)) {
    at.forward_seconds += layer.forward;
    at.backward_seconds += layer.backward;
  }
  at.iteration_seconds = at.forward_seconds + at.backward_seconds;
  const double flops =
      (compute.forward_flops_per_sample + compute.backward_flops_per_sample) * batch;
  at.gflops = flops / at.iteration_seconds / 1e9;
  at.efficiency = at.gflops * 1e9 / compute.peak_flops_per_second;  // NaN without a peak
  return at;
}

std::vector<std::string> compute_csv_columns() { return columns::names(columns::kCompute); }

void write_compute_csv(const std::string& path, std::span<const MeasuredCompute> models) {
  // Every row formatted before the file is written: a value that is not
  // finite fails the write, not the reader.
  std::vector<std::vector<std::string>> lines;
  for (const MeasuredCompute& c : models) {
    for (int batch : c.batches) {
      const ComputeAtBatch at = compute_at(c, batch);
      lines.push_back(
          {c.model, std::to_string(batch), number_or_empty(at.forward_seconds, path, "forward_s"),
           number_or_empty(at.backward_seconds, path, "backward_s"),
           number_or_empty(at.iteration_seconds, path, "iteration_s"),
           number_or_empty(at.gflops, path, "gflops"),
           number_or_empty(at.efficiency, path, "efficiency"),
           number_or_empty(c.peak_flops_per_second / 1e9, path, "peak_gflops"), c.blas});
    }
  }
  CsvWriter writer(path, compute_csv_columns(), ExistingFile::overwrite);
  for (const std::vector<std::string>& line : lines) writer.write_row(line);
}

std::string format_compute_report(std::span<const MeasuredCompute> models) {
  if (models.empty()) return "";
  const MeasuredCompute& first = models.front();
  std::string out = fmt::format(
      "\nCompute (gemm rows: each GEMM layer's forward and backward at the per-rank batch{}{})\n",
      first.blas.empty() ? "" : ", BLAS " + first.blas,
      std::isnan(first.peak_flops_per_second)
          ? std::string(", no peak row")
          : fmt::format(", peak {:.1f} GFLOP/s", first.peak_flops_per_second / 1e9));
  const auto at_text = [](const MeasuredCompute& c, int batch) {
    const ComputeAtBatch at = compute_at(c, batch);
    return fmt::format("batch {}: {:.4g} s per iteration, {:.1f} GFLOP/s{}", batch,
                       at.iteration_seconds, at.gflops,
                       std::isnan(at.efficiency)
                           ? std::string()
                           : fmt::format(" ({:.0f}% of peak)", 100 * at.efficiency));
  };
  for (const MeasuredCompute& c : models) {
    out += fmt::format("  {}: {}", c.model, at_text(c, c.batches.front()));
    if (c.batches.size() > 1) out += "; " + at_text(c, c.batches.back());
    out += "\n";
  }
  return out;
}

IterationTimeline schedule_exchanges(double compute_seconds, std::span<const double> ready_seconds,
                                     std::span<const double> exchange_seconds) {
  if (ready_seconds.size() != exchange_seconds.size()) {
    throw std::invalid_argument(fmt::format("schedule_exchanges: {} ready times for {} exchanges",
                                            ready_seconds.size(), exchange_seconds.size()));
  }
  require_time(compute_seconds, "the compute time");
  IterationTimeline timeline;
  timeline.compute_seconds = compute_seconds;
  double free_at = 0;  // when the communication thread has finished the exchanges before
  for (std::size_t k = 0; k < ready_seconds.size(); ++k) {
    require_time(ready_seconds[k], "a bucket's ready time");
    require_time(exchange_seconds[k], "a bucket's exchange time");
    BucketTiming bucket;
    bucket.ready_seconds = ready_seconds[k];
    bucket.start_seconds = std::max(ready_seconds[k], free_at);
    bucket.end_seconds = bucket.start_seconds + exchange_seconds[k];
    free_at = bucket.end_seconds;
    timeline.communication_seconds += exchange_seconds[k];
    timeline.buckets.push_back(bucket);
  }
  timeline.iteration_seconds = std::max(compute_seconds, free_at);
  timeline.exposed_seconds = timeline.iteration_seconds - compute_seconds;
  timeline.overlap = timeline.communication_seconds > 0
                         ? 1 - timeline.exposed_seconds / timeline.communication_seconds
                         : 1.0;
  return timeline;
}

IterationTimeline simulate_iteration(double forward_seconds,
                                     std::span<const double> backward_seconds,
                                     std::span<const TimelineBucket> buckets) {
  require_time(forward_seconds, "the forward time");
  // done_after[l]: when the backward of layer l ends; backprop runs from the
  // last layer to the first, so that is after every layer from l on.
  std::vector<double> done_after(backward_seconds.size());
  double clock = forward_seconds;
  for (std::size_t l = backward_seconds.size(); l-- > 0;) {
    require_time(backward_seconds[l], "a layer's backward time");
    clock += backward_seconds[l];
    done_after[l] = clock;
  }
  std::vector<double> ready, cost;
  for (const TimelineBucket& bucket : buckets) {
    if (bucket.ready_after_gemm_layer >= backward_seconds.size()) {
      throw std::invalid_argument(
          fmt::format("a bucket is ready after GEMM layer {}, but there are {} layers",
                      bucket.ready_after_gemm_layer, backward_seconds.size()));
    }
    ready.push_back(done_after[bucket.ready_after_gemm_layer]);
    cost.push_back(bucket.exchange_seconds);
  }
  return schedule_exchanges(clock, ready, cost);
}

}  // namespace collbench
