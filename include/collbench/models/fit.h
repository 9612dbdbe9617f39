// Cost models fitted to collbench measurements (collbench-fit).
//
// From any mix of collbench CSVs this derives, in this order:
//   1. Hockney α, β of the ping-pong per (transport, provider, placement):
//      t(n) = α + n·β, with t the half round-trip time, split at the
//      library's protocol switch (eager to rendezvous: Open MPI's vader at
//      4 KiB), which bends one line through every size: the switch is the
//      break where two lines, each fitted by relative error, err least; α
//      comes from the line below it, β from the one above, fitted by
//      absolute error so that the largest sizes decide it (each side needs
//      3 sizes; with fewer than 6, one line over all). And, where the input
//      has p2p/sendrecv rows (collbench --families sendrecv), Hockney α, β
//      of that chain exchange per (transport, provider, placement, ranks),
//      t the time of one exchange with every rank sending and receiving.
//      Where the input has a link matrix (collbench-linkmatrix's links CSV),
//      also its Hockney line per (transport, provider): through the median
//      link's latency and its one-way bandwidth transfer.
//   2. γ per (dtype, op) from the local reduce kernel: t(n) = t0 + n·γ, where
//      n is the bytes of ONE operand vector — the same unit as the
//      algorithms' CostTerms::reduce_bytes — and t0 the per-call overhead.
//      The memcpy ceiling is the highest copy bandwidth measured.
//   3. Bottom-up prediction of every allreduce point from the algorithm's own
//      CostTerms (algorithm.h) with α, β of the sendrecv fit at the point's
//      rank count when there is one, else of the ping-pong, and the measured
//      γ. A ping-pong has one message in flight; in an allreduce every rank
//      sends and receives at once and shares the node's memory bandwidth,
//      cores and NIC, which the sendrecv β includes and depends on p.
//      Where the sendrecv is measured, also a by-size prediction
//      (bottom_up_by_size): each exchange priced at the measured sendrecv
//      time and each byte reduced at the measured reduce rate, interpolated
//      at the algorithm's mean message size bytes/messages; each byte at the
//      rate measured at the vector size n instead where that is slower (the
//      working set: in and out, 2n per rank, against 2m for the benchmarks).
//   3b. On several nodes of several ranks each (a layout_placement), the
//      bottom-up prediction over both levels instead (bottom_up_two_level):
//      the algorithm's placed_cost (algorithm.h) on the points' Layout, its
//      intra-node terms priced with α, β of the intra ping-pong, its network
//      terms with those of the link matrix, or without one of the inter
//      ping-pong (both one message between two hosts: a fit of all ranks
//      busy would count the node's ranks sharing its NIC a second time, as
//      placed_cost counts them), and the measured γ.
//   4. Top-down fit per (transport, provider, placement, dtype, op,
//      algorithm): α, β, γ by non-negative least squares on the algorithm's
//      CostTerms, weighted so that each point counts by its relative error.
//   5. Selection: per rank count, the fastest of collbench's own algorithms
//      measured, predicted and fitted at every size (the MPI library's
//      `mpi` is the baseline each choice is compared with, not a
//      candidate), and oneCCL-style selection strings. The
//      measured string is statistical (choose_significant): the exchange of
//      the lowest median, named by a stated rule, with the others within
//      noise of it as ties.
//
// Every fit minimises Σ((model_i − t_i)/t_i)²: the sizes span six decades, and
// an unweighted fit would ignore every latency-bound point. For the same
// reason R² is computed on log(t) (1 − Σ(ln t̂ − ln t)² / Σ(ln t − mean)²).
#pragma once

#include <algorithm>
#include <cstddef>
#include <limits>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "collbench/collectives/algorithm.h"
#include "collbench/core/csv.h"

namespace collbench {

// ---------------------------------------------------------------- measurements

// One measured configuration: the median of median_us over every repetition
// and run that measured it, and the quartiles of the same values (their
// spread: how far a repetition's median may move when the run is repeated).
struct Measurement {
  std::string family;     // "allreduce", "p2p" or "local"
  std::string transport;  // CSV transport column
  std::string provider;   // CSV provider column (empty for MPI)
  // "intra" or "inter": the CSV column for p2p; for a collective derived from
  // the optional nodes column (1 node = intra), or, on several nodes of
  // several ranks each, their layout (layout_placement: "2x2:slot"); empty
  // when unknown or local.
  std::string placement;
  std::string dtype;  // empty for p2p and memcpy
  std::string op;     // empty for p2p and memcpy
  // collective algorithm, "pingpong", "sendrecv", "link_matrix" (a links CSV
  // of collbench-linkmatrix, placement inter), "reduce" or "memcpy"
  std::string algorithm;
  int ranks = 0;
  double bytes = 0;
  double seconds = 0;  // median time
  // Type-7 quartiles (linear interpolation, as numpy's default) of the
  // samples; both equal `seconds` when one row measured the point.
  double q1_seconds = 0, q3_seconds = 0;
  // What the median and quartiles are of (measurements.cpp): each launch's
  // median when the point was measured in several launches, else its rows.
  int samples = 0;
  int launches = 0;                  // distinct values of the rows' launch column
  std::vector<std::string> sources;  // files the rows came from, sorted
};

// The placement of a collective measured on `nodes` nodes of `per_node`
// ranks each, placed as the CSV's map_by column says: "NxK:MAP", e.g.
// "2x2:slot". Its points are fitted apart from other placements, and
// predicted bottom-up over two levels (step 3b).
std::string layout_placement(int nodes, int per_node, std::string_view map_by);
// The Layout of such a placement; nullopt for any other (intra, inter, a
// map_by of "other" or none).
std::optional<Layout> placement_layout(std::string_view placement);

// A parsed CSV and the name errors should use for it (usually its path).
struct NamedTable {
  std::string source;
  CsvTable table;
};

struct LoadSummary {
  std::vector<std::string> files;
  std::size_t rows_read = 0;
  std::size_t rows_used = 0;
  // "family=exchange: 12 rows", "check=wrong: 1 row": what was left out, for the report.
  std::vector<std::string> ignored;
};

// Validates and aggregates the rows that the fits use (collectives, p2p
// pingpong and sendrecv, local reduce/memcpy, and every link of a table that
// is a links CSV of collbench-linkmatrix); other rows are counted in summary->ignored,
// as are rows whose check column says "wrong" and rows the harness left
// untimed (empty median_us, a benchmark that failed). Throws std::runtime_error
// naming the source for an empty table, missing columns, or a value that is
// not a finite number in range (with the data row number, 1 = first row).
std::vector<Measurement> aggregate_measurements(std::span<const NamedTable> tables,
                                                LoadSummary* summary = nullptr);
std::vector<Measurement> load_measurements(std::span<const std::string> paths,
                                           LoadSummary* summary = nullptr);

// Rows measured under load (measurements.cpp), for the export of tuning files
// (collbench/models/tuning.h).
//
// The library's rows whose `loaded` column is `yes` (other work kept more
// than a tenth of a core busy while they ran: results/README.md) are not
// exported. Where the quiet rows left still measure every (collective,
// ranks, size, algorithm) of the library, the export reads them alone;
// where a point was measured only in loaded rows, the choice at its size
// would rest on them, and leave_out_loaded throws std::runtime_error naming
// the collectives, how many sizes and rows, and --allow-loaded, unless
// `allow_loaded`: then every row is kept and the header says so. A CSV
// without the column (written before it) has no loaded rows.
struct LoadedRows {
  std::vector<NamedTable> tables;  // what the export reads
  std::size_t loaded = 0;          // the library's rows marked loaded
  // The line the file's header records; empty when no row was loaded.
  std::string header;
};
LoadedRows leave_out_loaded(std::span<const NamedTable> tables, bool allow_loaded);

// ------------------------------------------------------------- fit quality
// (the solvers that report it: collbench/models/least_squares.h)

struct FitQuality {
  int points = 0;
  double r2_log = 0;          // NaN when every measured time is equal
  double median_rel_err = 0;  // median of |t̂ − t| / t
  double max_rel_err = 0;
};

// Quality of `predicted` against `measured` (both in seconds, measured > 0).
FitQuality fit_quality(std::span<const double> measured, std::span<const double> predicted);

// ------------------------------------------------------------------ models

// α in s per message, β in s per byte, γ in s per byte reduced (algorithm.h).
struct NetworkModel {
  double alpha = 0;
  double beta = 0;
  double gamma = 0;
};

// The CostTerms collbench-fit uses for `algorithm` of `collective` (a name
// of collbench/collectives/collective.h): its own cost() when the collective knows it
// and it has a model of its own; otherwise the collective's lower bound
// (and *own is set to false). mpi is never "own": the library's internal
// algorithm is unknown and changes with size, so the top-down fit of `mpi`
// (and `mpi_bare`) against the lower bound gives the "effective network" the
// library achieves. Throws std::invalid_argument for an unknown collective.
CostTerms model_terms(std::string_view collective, std::string_view algorithm, int ranks,
                      double bytes, bool* own = nullptr);

struct ModelFit {
  // "bottom_up_two_level" (step 3b: params hold the network level's α, β
  // and γ, the note the intra level's);
  // "hockney" (p2p ping-pong), "hockney_sendrecv" (p2p sendrecv, one per rank
  // count), "hockney_link_matrix" (the link matrix's median link, two points), "reduce_gamma"
  // (local reduce), "memcpy" (ceiling), "bottom_up" (prediction, nothing fitted: one per algorithm
  // group, or one per algorithm group and rank count when a sendrecv fit is used, because α and β
  // then depend on p), "bottom_up_by_size" (prediction from measured sendrecv and reduce times at
  // the mean message size, one per algorithm group and rank count; params are NaN: there are none),
  // "top_down" (allreduce fit).
  std::string model;
  std::string family;
  std::string transport, provider, placement, dtype, op, algorithm;
  // "own" (the algorithm's cost()), "lower_bound", "alpha+n*beta" (hockney),
  // "t0+n*gamma" (reduce), "n/bandwidth" (memcpy).
  std::string terms;
  // For reduce_gamma, params.alpha is the per-call overhead t0. For memcpy,
  // params.beta is 1/ceiling.
  NetworkModel params;
  // Relative standard errors of α, β, γ (NaN when not fitted).
  double alpha_rel_stderr = 0, beta_rel_stderr = 0, gamma_rel_stderr = 0;
  // Where γ came from: "fitted", "local" (the reduce_gamma fit, because this
  // group's points cannot determine it), "absorbed" (no local γ either: the
  // reported β includes γ's share), "none" (a collective that reduces
  // nothing: no γ term), or "" when γ plays no role (p2p, memcpy).
  std::string gamma_source;
  FitQuality quality;
  std::vector<int> ranks;  // rank counts among the points
  double min_bytes = 0, max_bytes = 0;
  // hockney: the protocol switch found in the data, the smallest size of β's
  // line (α's line has the sizes below it); NaN where one line was fitted.
  double switch_bytes = std::numeric_limits<double>::quiet_NaN();
  std::vector<std::string> sources;
  std::string note;  // why γ was fixed, which p2p fit was used, ...
  // bottom_up: the model of the fit its α, β came from, "hockney" or
  // "hockney_sendrecv" (models.csv says it in the note); bottom_up_two_level:
  // its network level's, "hockney_link_matrix" or "hockney"; empty otherwise.
  std::string link_model;
};

struct PointPrediction {
  // "hockney", "hockney_sendrecv", "hockney_link_matrix", "reduce_gamma", "bottom_up",
  // "bottom_up_by_size" or "top_down"
  std::string model;
  Measurement point;
  double predicted_seconds = 0;
  double rel_err() const { return (predicted_seconds - point.seconds) / point.seconds; }
};

// The p-quantile (0 ≤ p ≤ 1) of `values` by linear interpolation between
// order statistics (Hyndman and Fan's type 7, numpy's default). Throws
// std::invalid_argument when `values` is empty.
double quantile(std::vector<double> values, double p);

// ------------------------------------------------- statistical selection

// One algorithm's time at one size: the median over repetitions and the
// interquartile range of the repetitions' medians.
struct TimeSpread {
  double median = 0, q1 = 0, q3 = 0;
  int repetitions = 0;
};

// Per size (bytes, ascending), each measured algorithm's time.
using TimesBySize = std::map<double, std::map<std::string, TimeSpread>>;

// The choice at one size, and whether it changed there.
struct Choice {
  double bytes = 0;
  std::string chosen;
  // The chosen exchange, named by its first candidate (same_exchanges),
  // whichever of its algorithms is chosen: two runs that choose one exchange
  // under two names (one saw the first beaten by noise) agree in this name.
  std::string exchange;
  // Set where the choice changed at this size: the choice at the size before.
  std::string previous;
  // At a change: previous median / chosen median (how much faster the new
  // choice is) and previous q1 / chosen q3 (> 1: the interquartile ranges
  // do not overlap); NaN when the previous choice was not measured here.
  double margin = std::numeric_limits<double>::quiet_NaN();
  double gap = std::numeric_limits<double>::quiet_NaN();
  // The chosen algorithm's equivalents within noise here: the same exchange
  // (same_exchanges), not a choice between different algorithms, so not ties.
  std::vector<std::string> same;
  // The algorithms of other exchanges within noise of the fastest here (no
  // algorithm beats them), in candidate order. A second run choosing one of
  // these, or of `same`, instead has not flipped.
  std::vector<std::string> ties;
  // The exchanges of `ties`, each named as `exchange` is, in candidate order.
  std::vector<std::string> tie_exchanges;
  bool changed() const { return !previous.empty(); }
};

// Per candidate, the index of the first candidate with the same α-β-γ cost
// terms (AlgorithmInfo::cost, or placed_cost on a layout placement) at
// `ranks` for every one of `sizes`: the same messages, bytes and reductions,
// e.g. recursive doubling and swing_latency at p = 2, so that which of them
// measures faster is noise. Its own index where none comes earlier; the
// library's algorithms (no cost of their own) are each their own.
std::vector<std::size_t> same_exchanges(std::string_view collective, std::string_view placement,
                                        int ranks, std::span<const std::string> candidates,
                                        std::span<const double> sizes);

// Whether y is faster than x beyond noise: y's q3, raised by `tolerance` (a
// fraction), below x's q1. The one test of the selection, its ties and its
// comparison with the MPI library.
bool beats(const TimeSpread& y, const TimeSpread& x, double tolerance);

// The measured selection. At each size an algorithm y beats x when y's q3,
// raised by `tolerance` (a fraction), is below x's q1: faster beyond both
// interquartile ranges and by more than runs of one machine drift apart.
// The contenders are the measured algorithms no one beats (the lowest
// median always is one). The choice is the first exchange (`exchange`, from
// same_exchanges; empty: every candidate its own) in candidate order with a
// contender whose median is within `tolerance` of the lowest median, named
// by its first contender in candidate order, so that equivalents within
// noise always get the same name; its other contenders are `same`, those
// of other exchanges `ties`. Exchanges are named by their first candidate,
// measured here or not (`exchange`, `tie_exchanges`). There is no hysteresis: the choice at a size
// does not depend on the size before (a choice carried on by it stays at
// the edge of the contenders, where a second run most often leaves it).
// With no spread and no tolerance this is the lowest median's exchange.
// Candidates not measured at a size are skipped. This is the one rule of
// the measured selection: its ties are what it leaves to noise, not a
// second rule.
std::vector<Choice> choose_significant(std::span<const std::string> candidates,
                                       const TimesBySize& times,
                                       std::span<const std::size_t> exchange = {},
                                       double tolerance = 0);

struct SelectionRow {
  double bytes = 0;
  // Empty when no algorithm qualifies (e.g. nothing predicted at this size).
  // `measured` is the lowest median; `chosen` is choose_significant's.
  std::string measured, predicted, fitted;
  double measured_seconds = 0, predicted_seconds = 0, fitted_seconds = 0;
  Choice choice;
  TimeSpread chosen_time;
  // The MPI library's own algorithm ("mpi") at this size, the baseline the
  // choice is compared with (never a candidate); NaN when not measured.
  double mpi_seconds = std::numeric_limits<double>::quiet_NaN();
  // mpi against the choice by `beats`: "faster", "slower" or "tie"; empty
  // when mpi was not measured or nothing was chosen.
  std::string mpi_verdict;
};

struct Selection {
  std::string collective, transport, provider, placement, dtype, op;
  int ranks = 0;
  // collbench's own algorithms measured in this group; the MPI library's
  // rows are the baseline (SelectionRow::mpi_seconds), not candidates.
  std::vector<std::string> candidates;
  std::vector<SelectionRow> rows;  // one per measured size, ascending
  // oneCCL form of the rows' choices (choose_significant), boundaries at
  // measured sizes.
  std::string measured_string;
  // Boundaries at the exact model crossovers (bisection on whole elements),
  // over [0, largest measured size], the last range open ("max").
  std::string predicted_string;  // bottom-up models
  std::string fitted_string;     // top-down fits
};

struct FitOptions {
  // γ of a top-down fit is taken from the local reduce fit when the group's
  // own estimate has a larger relative standard error than this: a γ that
  // uncertain also corrupts β, with which it is nearly collinear.
  double gamma_max_rel_stderr = 0.02;
  // choose_significant's tolerance: between two quiet runs of the main job
  // the ratio of two algorithms' medians within 15% of each other moved by
  // 2.7% (median) and 4.4% (75th percentile) (results/selection/README.md).
  double tie_tolerance = 0.05;
};

struct FitResults {
  std::vector<ModelFit> fits;
  std::vector<PointPrediction> predictions;
  std::vector<Selection> selections;
  std::vector<std::string> notes;  // what was skipped and why
};

// Runs steps 1-5 of the header comment. Throws std::runtime_error naming the
// group, its source files and what is missing when a group has too few
// distinct points to fit (parameters + 1), or when there is nothing to fit.
FitResults fit_measurements(std::span<const Measurement> measurements,
                            const FitOptions& options = {});

// "a:0-8192;b:8193-max" from (size, winner) pairs in ascending size: each
// range ends at the last size its algorithm won, the next starts one byte
// later, the first starts at 0 and the last is open.
std::string selection_string(std::span<const std::pair<double, std::string>> winners);

// Fastest of `candidates` at `bytes` by `seconds(algorithm, bytes)` (which
// returns nullopt where an algorithm has no prediction or cannot run); empty
// when none qualifies. Ties go to the earlier candidate.
template <typename SecondsFn>
std::pair<std::string, double> fastest(std::span<const std::string> candidates, double bytes,
                                       SecondsFn&& seconds) {
  std::pair<std::string, double> best{"", 0.0};
  for (const std::string& name : candidates) {
    const std::optional<double> time = seconds(name, bytes);
    if (time && (best.first.empty() || *time < best.second)) best = {name, *time};
  }
  return best;
}

// The selection string of the model winner over [0, max_bytes] in whole
// elements of `element_bytes`: winners are evaluated on a log grid and every
// change of winner is located exactly by bisection.
template <typename SecondsFn>
std::string crossover_selection_string(std::span<const std::string> candidates, double max_bytes,
                                       double element_bytes, SecondsFn&& seconds);

// ------------------------------------------------------------------ output

// models.csv, predictions.csv and selections.csv (one row per selection and
// measured size: the choice, its spread, the lowest median, the boundary
// margin and the MPI library's time), written to `path` in place;
// collbench-fit writes them to temporaries and replaces all together
// (benchmarks/models/replace_on_commit.h).
void write_models_csv(const std::string& path, const FitResults& results);
void write_predictions_csv(const std::string& path, const FitResults& results);
void write_selections_csv(const std::string& path, const FitResults& results);
// The human-readable report collbench-fit prints.
std::string format_report(const FitResults& results, const LoadSummary& summary,
                          bool all_residuals);

// The few lines scripts/run.sh prints at the end of a run: the p2p α (µs) and
// β (GB/s) (ping-pong, then sendrecv per rank count when measured), each
// algorithm's median relative error (bottom-up and top-down), and the
// measured and predicted selection strings per rank count.
std::string format_brief(const FitResults& results);

// Column names of the files, shared with collbench-predict, plot.py and
// report.py.
std::vector<std::string> models_csv_columns();
std::vector<std::string> predictions_csv_columns();
std::vector<std::string> selections_csv_columns();

// ------------------------------------------------------------ templates

template <typename SecondsFn>
std::string crossover_selection_string(std::span<const std::string> candidates, double max_bytes,
                                       double element_bytes, SecondsFn&& seconds) {
  // Work in whole elements: algorithms only run on whole elements, and
  // bisection on integers terminates exactly.
  const auto winner_at = [&](long long elements) {
    return fastest(candidates, static_cast<double>(elements) * element_bytes, seconds).first;
  };
  const long long last = static_cast<long long>(max_bytes / element_bytes);
  if (last < 1) return "";
  // 32 points per factor of two is far finer than any two crossovers of
  // α-β-γ models, which are straight lines in n.
  std::vector<long long> grid{1};
  for (double x = 1.0; grid.back() < last;) {
    x *= 1.0219;  // 2^(1/32)
    const long long next = std::min(last, static_cast<long long>(x));
    if (next > grid.back()) grid.push_back(next);
  }
  std::vector<std::pair<double, std::string>> winners;  // (last byte of range, winner)
  std::string current = winner_at(grid.front());
  for (std::size_t i = 1; i < grid.size(); ++i) {
    long long lo = grid[i - 1];  // winner_at(lo) == current
    // Usually one change between grid points, but a third algorithm may win
    // a sliver in between: keep bisecting until grid[i] is reached.
    while (winner_at(grid[i]) != current) {
      long long hi = grid[i];
      while (hi - lo > 1) {
        const long long mid = lo + (hi - lo) / 2;
        if (winner_at(mid) == current) {
          lo = mid;
        } else {
          hi = mid;
        }
      }
      // Sizes between lo and hi elements are not whole elements: they stay
      // with the current winner, so its range ends one byte before hi.
      winners.emplace_back(static_cast<double>(hi) * element_bytes - 1, current);
      current = winner_at(hi);
      lo = hi;
    }
  }
  winners.emplace_back(static_cast<double>(last) * element_bytes, current);
  // An empty winner (no model anywhere in a range) cannot be selected.
  std::erase_if(winners, [](const auto& w) { return w.second.empty(); });
  return selection_string(winners);
}

}  // namespace collbench
