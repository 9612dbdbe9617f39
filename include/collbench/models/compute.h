// Measured compute of data-parallel training: each GEMM layer's forward and
// backward time at any per-rank batch, from the harness's gemm rows, and the
// timeline of one iteration whose gradient buckets are exchanged while
// backprop runs (DESIGN.md, "Compute and overlap").
//
// The gemm rows (results/README.md: family=local, algorithm=gemm) time one
// layer of each distinct group of a catalog model's GEMM layers
// (distinct_gemm_layers; item = the group's first layer, multiplicity = its
// layers) at per-rank batches b, pass `forward` (the layer's forward
// product) and `backward` (its data-gradient plus weight-gradient
// products), and a large square GEMM (pass `peak`, model and item empty)
// whose rate the efficiency is measured against.
//
// Phases and their cost (R rows, G groups, L layers, N measured batches):
//   1. read_gemm_measurements: one pass over the rows, O(R log R): the gemm
//      rows by (model, item, pass, batch), each the median of median_us over
//      its repetitions and runs, as collbench-fit aggregates.
//   2. measured_compute: the model's groups against the catalog, O(G·N):
//      every group must have both passes at every batch the model was
//      measured at, with the catalog's multiplicity and FLOPs (a file from
//      another catalog version is refused, not misread).
//   3. layer_seconds / compute_at: one batch, O(G log N + L).
//
// A time at batch b, per group and pass:
//   - b measured: the measured time;
//   - between two measured batches: interpolated linearly in log(time)
//     against log(batch) (a power law between neighbours: a GEMM's time
//     grows with b at the rate its efficiency allows, smoothly in between);
//     a batch that is not a whole number (B/p in strong scaling) is
//     interpolated the same way;
//   - above the largest measured batch b_max: t(b_max)·b/b_max, time
//     proportional to batch (the GFLOP/s of b_max, already near the large-
//     GEMM rate; a larger batch may run a little faster, so this leans
//     pessimistic);
//   - below the smallest measured batch: refused (std::runtime_error naming
//     the file, model, batch and the batches there): the efficiency of
//     small GEMMs falls steeply and is not extrapolated.
// Only the GEMMs are timed: batch-norm, activations, pooling, softmax and
// the optimizer step are not (the catalog's FLOPs leave them out too).
//
// The timeline (simulate_iteration): forward, then backprop from the last
// GEMM layer to the first; a bucket is ready when all of its gradients are,
// i.e. after the backward of the smallest ready_after_gemm_layer among its
// tensors. Exchanges run one after another in bucket order on one
// communication thread, as DDP's reducer issues them:
//   start_k = max(ready_k, end_{k-1}),  end_k = start_k + cost_k,
//   iteration = max(forward + Σ backward, end of the last bucket),
//   exposed   = iteration − compute,
//   overlap   = 1 − exposed / Σ cost_k  (1 when there is nothing to send).
#pragma once

#include <cstddef>
#include <limits>
#include <map>
#include <span>
#include <string>
#include <tuple>
#include <vector>

#include "collbench/catalog/catalog.h"
#include "collbench/core/csv.h"
#include "collbench/models/fit.h"

namespace collbench {

// ------------------------------------------------------------- measurements

// The columns of a gemm row that collbench reads (results/README.md).
std::vector<std::string> gemm_columns();

// Throws std::runtime_error naming `source` and every missing column of
// gemm_columns(): what collbench-predict --compute-from asks of its file
// before anything else.
void require_gemm_columns(const CsvTable& table, const std::string& source);

// One benchmark of the gemm rows: the median over its rows' median_us.
struct GemmPoint {
  double seconds = 0;  // one call
  double flops = 0;    // one call, as the rows give it
  int multiplicity = 0;
  std::string where;  // "FILE data row N", its first row, for messages
};

struct GemmMeasurements {
  std::string source;  // the files, ", "-separated, for messages
  // (model, item, pass, batch) -> the point; pass "forward" or "backward".
  std::map<std::tuple<std::string, std::string, std::string, int>, GemmPoint> layers;
  // The fastest peak benchmark's FLOP/s (pass=peak); NaN without one.
  double peak_flops_per_second = std::numeric_limits<double>::quiet_NaN();
  std::string blas;  // the blas column of the first gemm row; empty without one

  bool empty() const { return layers.empty(); }
  // The models with gemm rows, sorted.
  std::vector<std::string> models() const;
};

// The gemm rows of `tables` (other rows are skipped; none is fine: empty()),
// skipping rows whose check is "wrong" and rows with an empty median_us (not
// timed). Throws std::runtime_error naming the file and data row for a
// missing column (when the table has gemm rows), a value out of range
// (batch a whole number >= 1; median_us, flops > 0), an unknown pass, and
// rows of one benchmark that disagree on flops or multiplicity.
GemmMeasurements read_gemm_measurements(std::span<const NamedTable> tables);
// One file that must have gemm rows (collbench-predict --compute-from):
// also refuses a file without the columns of gemm_columns() or without any
// gemm row.
GemmMeasurements read_gemm_file(const std::string& path);

// ------------------------------------------------------------------ compute

// One layer's (or the model's) seconds in each pass.
struct PassSeconds {
  double forward = 0;
  double backward = 0;
};

// A model's measured GEMM groups, ready to be evaluated at any batch.
struct MeasuredCompute {
  std::string source;  // the file(s)
  std::string model;
  std::string blas;
  std::vector<int> batches;  // measured, ascending
  // [group][batch index]: one layer of the group (distinct_gemm_layers order)
  std::vector<std::vector<PassSeconds>> group_seconds;
  std::vector<std::size_t> layer_groups;  // gemm_layer_groups(model)
  // 2 x multiply-adds of one sample, from the catalog's shapes.
  double forward_flops_per_sample = 0;
  double backward_flops_per_sample = 0;
  double peak_flops_per_second = std::numeric_limits<double>::quiet_NaN();
};

// Throws std::runtime_error naming the file and the model when the model has
// no gemm rows (listing the models there), a group lacks a pass at one of
// the model's batches, a row's item is no group's first layer, or a row's
// multiplicity or flops differ from the catalog's.
MeasuredCompute measured_compute(const GemmMeasurements& measurements, const Model& model);

// Per GEMM layer of the model, forward order, at `batch` samples (see the
// file comment for batches between, above and below the measured ones).
std::vector<PassSeconds> layer_seconds(const MeasuredCompute& compute, double batch);

struct ComputeAtBatch {
  double batch = 0;
  double forward_seconds = 0;
  double backward_seconds = 0;
  double iteration_seconds = 0;  // forward + backward
  double gflops = 0;             // the iteration's FLOPs / its seconds, in GFLOP/s
  double efficiency = 0;         // gflops / the peak's; NaN without a peak
};
ComputeAtBatch compute_at(const MeasuredCompute& compute, double batch);

// Per GEMM layer of `model`, forward order, at `batch` samples on a rank
// that runs every product at `flops_per_second` (an assumed rate, not a
// measurement): the forward product's FLOPs, and the backward's (the data
// gradient, where the layer has one, plus the weight gradient), over the
// rate. Throws std::invalid_argument unless the rate and batch are > 0.
std::vector<PassSeconds> layer_seconds_at_rate(const Model& model, double batch,
                                               double flops_per_second);

// fit/compute.csv: per model and measured batch, the columns of
// compute_csv_columns(); written to `path` in place (collbench-fit replaces
// its outputs together).
std::vector<std::string> compute_csv_columns();
void write_compute_csv(const std::string& path, std::span<const MeasuredCompute> models);
// collbench-fit's report lines: per model, its GFLOP/s and efficiency at
// the smallest and largest batch.
std::string format_compute_report(std::span<const MeasuredCompute> models);

// ----------------------------------------------------------------- timeline

// One gradient bucket of an iteration's exchange.
struct TimelineBucket {
  std::size_t ready_after_gemm_layer = 0;  // the smallest of its tensors'
  double exchange_seconds = 0;
};

struct BucketTiming {
  double ready_seconds = 0;  // from the start of the iteration
  double start_seconds = 0;
  double end_seconds = 0;
};

struct IterationTimeline {
  std::vector<BucketTiming> buckets;
  double compute_seconds = 0;        // forward + Σ backward
  double communication_seconds = 0;  // Σ exchange_seconds
  double iteration_seconds = 0;      // max(compute, end of the last bucket)
  double exposed_seconds = 0;        // iteration − compute
  double overlap = 1;                // 1 − exposed / communication; 1 when that is 0
};

// The exchanges of buckets ready at `ready_seconds`, with costs
// `exchange_seconds`, run in order on one thread, against compute that ends
// at `compute_seconds`. Throws std::invalid_argument for sizes that differ
// or times that are negative or not finite.
IterationTimeline schedule_exchanges(double compute_seconds, std::span<const double> ready_seconds,
                                     std::span<const double> exchange_seconds);

// The timeline of one iteration: forward_seconds, then the layers' backward
// (backward_seconds in forward order, run last layer first), each bucket
// ready after the backward of its ready layer. Throws std::invalid_argument
// for a ready layer beyond the layers, or times that are negative or not
// finite.
IterationTimeline simulate_iteration(double forward_seconds,
                                     std::span<const double> backward_seconds,
                                     std::span<const TimelineBucket> buckets);

}  // namespace collbench
