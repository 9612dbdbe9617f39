// What collbench-fit writes: models.csv, predictions.csv, selections.csv and
// the report.
//
// Parameters carry their unit in the column name (alpha_us, beta_ns_per_byte,
// beta_GBps, ...): β in ns/B is exactly 1/(bandwidth in GB/s), so both are
// given and a reader never converts.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <set>
#include <string_view>
#include <tuple>

#include "collbench/core/columns.h"
#include "collbench/models/fit.h"

namespace collbench {
namespace {

// Empty for NaN (not applicable), "inf" for an undetermined error estimate.
std::string number(double value) {
  if (std::isnan(value)) return "";
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
  return fmt::format("{:.6g}", value);
}

// A size in bytes, whole: "{:.6g}" wrote 1048576 as 1.04858e+06, which
// reads back as 1048580.
std::string bytes_text(double bytes) { return fmt::format("{:.0f}", bytes); }

std::string per_second(double seconds_per_byte) {
  // GB/s for a cost in s/B; empty when the cost is zero (no rate to give).
  return seconds_per_byte > 0 ? number(1e-9 / seconds_per_byte) : "";
}

std::string join_ranks(const std::vector<int>& ranks) {
  std::vector<std::string> items;
  for (int r : ranks) items.push_back(std::to_string(r));
  return fmt::to_string(fmt::join(items, ";"));
}

std::string percent(double fraction) {
  if (std::isnan(fraction)) return "-";
  return fmt::format("{:.1f}%", 100 * fraction);
}

std::string fixed(double value, int digits) {
  if (std::isnan(value)) return "-";
  return fmt::format("{:.{}f}", value, digits);
}

std::string rate(double seconds_per_byte) {
  return seconds_per_byte > 0 ? fmt::format("{:.3f}", 1e-9 / seconds_per_byte) : "-";
}

std::string dash_if_empty(const std::string& s) { return s.empty() ? "-" : s; }

bool same_group(const ModelFit& a, const ModelFit& b) {
  return a.family == b.family && a.algorithm == b.algorithm && a.transport == b.transport &&
         a.provider == b.provider && a.placement == b.placement && a.dtype == b.dtype &&
         a.op == b.op;
}

// The bottom-up fits of `top_down`'s group: one, or one per rank count when
// α, β came from sendrecv fits.
std::vector<const ModelFit*> bottom_up_fits(const FitResults& results, const ModelFit& top_down) {
  std::vector<const ModelFit*> found;
  for (const ModelFit& f : results.fits) {
    if (f.model == "bottom_up" && same_group(f, top_down)) found.push_back(&f);
  }
  return found;
}

// The bottom-up quality of a group over all its points: the fit's own when
// there is one fit, else recomputed from the predictions of every rank count.
std::optional<FitQuality> bottom_up_quality(const FitResults& results, const ModelFit& top_down) {
  const std::vector<const ModelFit*> fits = bottom_up_fits(results, top_down);
  if (fits.empty()) return std::nullopt;
  if (fits.size() == 1) return fits.front()->quality;
  std::vector<double> measured, predicted;
  for (const PointPrediction& p : results.predictions) {
    const Measurement& m = p.point;
    if (p.model == "bottom_up" && m.family == top_down.family &&
        m.algorithm == top_down.algorithm && m.transport == top_down.transport &&
        m.provider == top_down.provider && m.placement == top_down.placement &&
        m.dtype == top_down.dtype && m.op == top_down.op) {
      measured.push_back(m.seconds);
      predicted.push_back(p.predicted_seconds);
    }
  }
  return fit_quality(measured, predicted);
}

// The ping-pong β of the same link as a sendrecv fit, for their ratio.
const ModelFit* ping_pong_of(const FitResults& results, const ModelFit& exchange) {
  for (const ModelFit& f : results.fits) {
    if (f.model == "hockney" && f.transport == exchange.transport &&
        f.provider == exchange.provider && f.placement == exchange.placement) {
      return &f;
    }
  }
  return nullptr;
}

// `path` is written in place: collbench-fit writes temporaries and replaces
// models.csv and predictions.csv together (replace_on_commit.h).
template <typename Writer>
void write_csv(const std::string& path, std::vector<std::string> columns, Writer&& rows) {
  CsvWriter writer(path, std::move(columns), ExistingFile::overwrite);
  rows(writer);
}

std::string bytes_label(double bytes) {
  static constexpr const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int unit = 0;
  double value = bytes;
  while (value >= 1024 && unit < 4 && std::fmod(value, 1024) == 0) {
    value /= 1024;
    ++unit;
  }
  return fmt::format("{:.0f} {}", value, kUnits[unit]);
}

// The report being written, one line at a time.
class Report {
 public:
  void line(const std::string& text) {
    out_ += text;
    out_ += '\n';
  }
  std::string take() && { return std::move(out_); }

 private:
  std::string out_;
};

std::vector<const ModelFit*> fits_of(const FitResults& results, std::string_view model) {
  std::vector<const ModelFit*> found;
  for (const ModelFit& f : results.fits) {
    if (f.model == model) found.push_back(&f);
  }
  return found;
}

void report_inputs(Report& report, const LoadSummary& summary) {
  report.line(fmt::format("collbench-fit: {} file{}, {} rows read, {} used", summary.files.size(),
                          summary.files.size() == 1 ? "" : "s", summary.rows_read,
                          summary.rows_used));
  for (const std::string& ignored : summary.ignored) report.line("  left out: " + ignored);
}

void report_ping_pongs(Report& report, const FitResults& results) {
  const auto hockney = fits_of(results, "hockney");
  if (hockney.empty()) return;
  report.line("");
  report.line(
      "Point-to-point, Hockney t(n) = α + n·β (half round trip; α from the sizes below the "
      "protocol switch, β from those above)");
  report.line(
      fmt::format("  {:<9} {:<14} {:<9} {:>6} {:>10} {:>10} {:>10} {:>10} {:>8} {:>8} {:>8}",
                  "transport", "provider", "placement", "points", "switch", "α (µs)", "β (ns/B)",
                  "β (GB/s)", "R² log", "median", "max"));
  for (const ModelFit* f : hockney) {
    report.line(fmt::format(
        "  {:<9} {:<14} {:<9} {:>6} {:>10} {:>10.3f} {:>10.5f} {:>10} {:>8} {:>8} {:>8}",
        f->transport, dash_if_empty(f->provider), f->placement, f->quality.points,
        std::isnan(f->switch_bytes) ? std::string("-") : bytes_label(f->switch_bytes),
        f->params.alpha * 1e6, f->params.beta * 1e9, rate(f->params.beta),
        fixed(f->quality.r2_log, 4), percent(f->quality.median_rel_err),
        percent(f->quality.max_rel_err)));
  }
}

// The directed links a link-matrix fit's median is taken over: the rows its
// points aggregate.
int links_of(const FitResults& results, const ModelFit& matrix) {
  int links = 0;
  for (const PointPrediction& p : results.predictions) {
    if (p.model == matrix.model && p.point.transport == matrix.transport &&
        p.point.provider == matrix.provider) {
      links = std::max(links, p.point.samples);
    }
  }
  return links;
}

void report_link_matrices(Report& report, const FitResults& results) {
  const auto matrices = fits_of(results, "hockney_link_matrix");
  if (matrices.empty()) return;
  report.line("");
  report.line(
      "Link matrix, Hockney t(n) = α + n·β of the median link between hosts (the two-level "
      "predictions' network level)");
  report.line(fmt::format("  {:<9} {:<14} {:>6} {:>10} {:>10} {:>10}  {}", "transport", "provider",
                          "links", "α (µs)", "β (ns/B)", "β (GB/s)", "sizes"));
  for (const ModelFit* f : matrices) {
    report.line(fmt::format("  {:<9} {:<14} {:>6} {:>10.3f} {:>10.5f} {:>10}  {} and {}",
                            f->transport, dash_if_empty(f->provider), links_of(results, *f),
                            f->params.alpha * 1e6, f->params.beta * 1e9, rate(f->params.beta),
                            bytes_label(f->min_bytes), bytes_label(f->max_bytes)));
  }
}

void report_exchanges(Report& report, const FitResults& results) {
  const auto exchanges = fits_of(results, "hockney_sendrecv");
  if (exchanges.empty()) return;
  report.line("");
  report.line(
      "Sendrecv chain, Hockney t(n) = α + n·β per rank count (one exchange: every rank sends n "
      "to r+1 and receives n from r−1 at once)");
  report.line(
      fmt::format("  {:<9} {:<14} {:<9} {:>5} {:>6} {:>10} {:>10} {:>10} {:>10} {:>8} {:>8} {:>8}",
                  "transport", "provider", "placement", "ranks", "points", "α (µs)", "β (ns/B)",
                  "β (GB/s)", "β/ping-pong", "R² log", "median", "max"));
  for (const ModelFit* f : exchanges) {
    const ModelFit* ping_pong = ping_pong_of(results, *f);
    const std::string ratio = ping_pong != nullptr && ping_pong->params.beta > 0
                                  ? fmt::format("{:.2f}", f->params.beta / ping_pong->params.beta)
                                  : "-";
    report.line(fmt::format(
        "  {:<9} {:<14} {:<9} {:>5} {:>6} {:>10.3f} {:>10.5f} {:>10} {:>10} {:>8} {:>8} {:>8}",
        f->transport, dash_if_empty(f->provider), f->placement, join_ranks(f->ranks),
        f->quality.points, f->params.alpha * 1e6, f->params.beta * 1e9, rate(f->params.beta), ratio,
        fixed(f->quality.r2_log, 4), percent(f->quality.median_rel_err),
        percent(f->quality.max_rel_err)));
  }
}

// γ per (dtype, op) and the memcpy ceilings.
void report_local_kernels(Report& report, const FitResults& results) {
  const auto gammas = fits_of(results, "reduce_gamma");
  const auto copies = fits_of(results, "memcpy");
  if (gammas.empty() && copies.empty()) return;
  report.line("");
  report.line("Local kernels, reduce t(n) = t0 + n·γ (n = bytes of one operand vector)");
  if (!gammas.empty()) {
    report.line(fmt::format("  {:<6} {:<4} {:>6} {:>10} {:>10} {:>10} {:>8} {:>8} {:>8}", "dtype",
                            "op", "points", "t0 (µs)", "γ (ns/B)", "γ (GB/s)", "R² log", "median",
                            "max"));
  }
  for (const ModelFit* f : gammas) {
    report.line(fmt::format("  {:<6} {:<4} {:>6} {:>10.3f} {:>10.5f} {:>10} {:>8} {:>8} {:>8}",
                            f->dtype, f->op, f->quality.points, f->params.alpha * 1e6,
                            f->params.gamma * 1e9, rate(f->params.gamma),
                            fixed(f->quality.r2_log, 4), percent(f->quality.median_rel_err),
                            percent(f->quality.max_rel_err)));
  }
  for (const ModelFit* f : copies) {
    report.line(fmt::format("  memcpy ceiling ({}): {} GB/s, {}", f->transport,
                            rate(f->params.beta), f->note));
  }
}

// The collective fits are reported in blocks of one (collective, transport,
// provider, placement, dtype, op) each.
using Block =
    std::tuple<std::string, std::string, std::string, std::string, std::string, std::string>;

// One line per algorithm of the block: its bottom-up error and top-down fit.
void report_algorithm_table(Report& report, const FitResults& results,
                            const std::vector<const ModelFit*>& fits) {
  report.line(fmt::format("  {:<19} {:>17} | {:>9} {:>9} {:>9} {:<9} {:>7} {:>8} {:>8}  {}",
                          "algorithm", "bottom-up med/max", "α (µs)", "β (GB/s)", "γ (GB/s)",
                          "γ from", "R² log", "median", "max", "ranks"));
  std::set<std::string> algorithms_here;
  for (const ModelFit* f : fits) algorithms_here.insert(f->algorithm);
  for (const std::string& algorithm : algorithms_here) {
    const ModelFit* top_down = nullptr;
    for (const ModelFit* f : fits) {
      if (f->algorithm == algorithm && f->model == "top_down") top_down = f;
    }
    if (top_down == nullptr) continue;
    const std::optional<FitQuality> bottom_up = bottom_up_quality(results, *top_down);
    const std::string bottom = bottom_up ? fmt::format("{}/{}", percent(bottom_up->median_rel_err),
                                                       percent(bottom_up->max_rel_err))
                                         : "-";
    report.line(fmt::format("  {:<19} {:>17} | {:>9.3f} {:>9} {:>9} {:<9} {:>7} {:>8} {:>8}  {}",
                            algorithm, bottom, top_down->params.alpha * 1e6,
                            rate(top_down->params.beta), rate(top_down->params.gamma),
                            top_down->gamma_source, fixed(top_down->quality.r2_log, 4),
                            percent(top_down->quality.median_rel_err),
                            percent(top_down->quality.max_rel_err), join_ranks(top_down->ranks)));
  }
}

// The top-down notes of the block: one line per distinct note, naming every
// algorithm it applies to.
void report_top_down_notes(Report& report, const std::vector<const ModelFit*>& fits) {
  std::map<std::string, std::vector<std::string>> notes;
  for (const ModelFit* f : fits) {
    if (f->model != "top_down") continue;
    if (f->terms == "lower_bound") {
      notes["top-down on the lower-bound terms ⌈lg p⌉α + 2(p−1)/p·nβ + (p−1)/p·nγ"].push_back(
          f->algorithm);
    }
    if (!f->note.empty()) notes[f->note].push_back(f->algorithm);
  }
  for (const auto& [note, names] : notes) {
    report.line(fmt::format("  {}: {}", fmt::to_string(fmt::join(names, ", ")), note));
  }
}

// Where the bottom-up α, β came from, when not one ping-pong fit for all.
void report_bottom_up_sources(Report& report, const std::vector<const ModelFit*>& fits) {
  std::set<int> from_exchange, from_ping_pong;
  for (const ModelFit* f : fits) {
    if (f->model != "bottom_up") continue;
    (f->link_model == "hockney_sendrecv" ? from_exchange : from_ping_pong)
        .insert(f->ranks.begin(), f->ranks.end());
  }
  if (from_exchange.empty()) return;
  report.line(fmt::format(
      "  bottom-up α, β from the sendrecv fit at ranks {}{}", fmt::join(from_exchange, ", "),
      from_ping_pong.empty() ? std::string()
                             : fmt::format(", from the ping-pong at ranks {} (no sendrecv rows)",
                                           fmt::join(from_ping_pong, ", "))));
}

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const std::size_t mid = values.size() / 2;
  return values.size() % 2 ? values[mid] : 0.5 * (values[mid - 1] + values[mid]);
}

// Bottom-up error per rank count shows where a model stops describing an
// algorithm (e.g. contention at high p), which one number hides.
void report_error_table(Report& report, const FitResults& results, const Block& block,
                        const std::string& model, const std::string& title) {
  std::map<std::string, std::map<int, std::vector<double>>> errors;
  std::set<int> rank_counts;
  for (const PointPrediction& p : results.predictions) {
    const Measurement& m = p.point;
    if (p.model != model ||
        Block{m.family, m.transport, m.provider, m.placement, m.dtype, m.op} != block) {
      continue;
    }
    errors[m.algorithm][m.ranks].push_back(std::abs(p.rel_err()));
    rank_counts.insert(m.ranks);
  }
  if (errors.empty()) return;
  report.line("  " + title);
  std::string header = fmt::format("  {:<19}", "ranks");
  for (int r : rank_counts) header += fmt::format(" {:>7}", r);
  report.line(header);
  for (const auto& [algorithm, by_ranks] : errors) {
    std::string row = fmt::format("  {:<19}", algorithm);
    for (int r : rank_counts) {
      const auto it = by_ranks.find(r);
      row += fmt::format(" {:>7}", it == by_ranks.end() ? "-" : percent(median(it->second)));
    }
    report.line(row);
  }
}

void report_collective_block(Report& report, const FitResults& results, const Block& block,
                             const std::vector<const ModelFit*>& fits) {
  const auto& [collective, transport, provider, placement, dtype, op] = block;
  report.line("");
  report.line(fmt::format("{} transport={} provider={} placement={} dtype={} op={}", collective,
                          transport, dash_if_empty(provider), dash_if_empty(placement), dtype,
                          dash_if_empty(op)));
  report_algorithm_table(report, results, fits);
  report_top_down_notes(report, fits);
  report_bottom_up_sources(report, fits);
  report_error_table(report, results, block, "bottom_up",
                     "bottom-up median |relative error| by rank count");
  report_error_table(report, results, block, "bottom_up_by_size",
                     "bottom-up by size (sendrecv and reduce times at the mean message size) "
                     "median |relative error| by rank count");
  const bool from_matrix = std::any_of(fits.begin(), fits.end(), [](const ModelFit* f) {
    return f->model == "bottom_up_two_level" && f->link_model == "hockney_link_matrix";
  });
  report_error_table(report, results, block, "bottom_up_two_level",
                     fmt::format("bottom-up over two levels ({}) median |relative error| by rank "
                                 "count",
                                 from_matrix ? "intra ping-pong, link matrix between nodes"
                                             : "intra and inter ping-pong"));
}

void report_collective_fits(Report& report, const FitResults& results) {
  std::map<Block, std::vector<const ModelFit*>> blocks;
  for (const ModelFit& f : results.fits) {
    if (f.model == "bottom_up" || f.model == "top_down" || f.model == "bottom_up_two_level") {
      blocks[{f.family, f.transport, f.provider, f.placement, f.dtype, f.op}].push_back(&f);
    }
  }
  for (const auto& [block, fits] : blocks) report_collective_block(report, results, block, fits);
}

// The algorithms of `s`'s group that have a bottom-up prediction.
std::set<std::string> predictable_algorithms(const FitResults& results, const Selection& s) {
  std::set<std::string> predictable;
  for (const ModelFit& f : results.fits) {
    if (f.model == "bottom_up" && f.family == s.collective && f.transport == s.transport &&
        f.provider == s.provider && f.placement == s.placement && f.dtype == s.dtype &&
        f.op == s.op) {
      predictable.insert(f.algorithm);
    }
  }
  return predictable;
}

// "at 4 KiB: ring replaces tree, 1.35x faster (IQRs 1.20x apart)".
std::string boundary_text(const SelectionRow& row) {
  const Choice& c = row.choice;
  if (std::isnan(c.margin)) {
    return fmt::format("at {}: {} replaces {}, which was not measured there",
                       bytes_label(row.bytes), c.chosen, c.previous);
  }
  return fmt::format("at {}: {} replaces {}, {:.2f}x faster (IQRs {:.2f}x apart)",
                     bytes_label(row.bytes), c.chosen, c.previous, c.margin, c.gap);
}

// One line of a selection's table, its header included: the columns in one place.
template <typename... Cells>
std::string selection_line(const Cells&... cells) {
  return fmt::format(
      "  {:>10}  {:<19} {:>10} {:>21}  {:<19} {:>10}  {:<19} {:>10}  {:<19} {:>10}  {:<14}",
      cells...);
}

// A named algorithm's time in µs for the report; "-" where none was named.
std::string report_microseconds(const std::string& name, double seconds) {
  return name.empty() ? std::string("-") : fmt::format("{:.2f}", seconds * 1e6);
}

void report_selection(Report& report, const FitResults& results, const Selection& s) {
  report.line("");
  report.line(
      fmt::format("Selection {} ranks={} transport={} provider={} placement={} dtype={} op={}",
                  s.collective, s.ranks, s.transport, dash_if_empty(s.provider),
                  dash_if_empty(s.placement), s.dtype, dash_if_empty(s.op)));
  report.line(selection_line("bytes", "chosen", "µs", "IQR µs", "lowest median", "µs",
                             "predicted fastest", "µs", "fitted fastest", "µs", "vs mpi"));
  int agree = 0, compared = 0;
  const std::set<std::string> predictable = predictable_algorithms(results, s);
  std::vector<std::string> boundaries;
  for (const SelectionRow& row : s.rows) {
    const std::string& chosen = row.choice.chosen;
    const std::string spread =
        chosen.empty()
            ? std::string("-")
            : fmt::format("{:.2f}-{:.2f}", row.chosen_time.q1 * 1e6, row.chosen_time.q3 * 1e6);
    report.line(selection_line(
        bytes_label(row.bytes), dash_if_empty(chosen),
        report_microseconds(chosen, row.chosen_time.median), spread, dash_if_empty(row.measured),
        report_microseconds(row.measured, row.measured_seconds), dash_if_empty(row.predicted),
        report_microseconds(row.predicted, row.predicted_seconds), dash_if_empty(row.fitted),
        report_microseconds(row.fitted, row.fitted_seconds),
        row.mpi_verdict.empty()
            ? std::string("-")
            : fmt::format("{:.2f} {}", row.mpi_seconds / row.chosen_time.median, row.mpi_verdict)));
    if (row.choice.changed()) boundaries.push_back(boundary_text(row));
    // Only where the measured winner has a model of its own can the
    // bottom-up prediction pick it (mpi has none).
    if (!row.predicted.empty() && predictable.contains(row.measured)) {
      ++compared;
      agree += row.predicted == row.measured ? 1 : 0;
    }
  }
  report.line("  measured:  " + dash_if_empty(s.measured_string));
  int mpi_faster = 0, mpi_measured = 0;
  for (const SelectionRow& row : s.rows) {
    mpi_measured += row.mpi_verdict.empty() ? 0 : 1;
    mpi_faster += row.mpi_verdict == "faster" ? 1 : 0;
  }
  if (mpi_measured > 0) {
    report.line(
        fmt::format("  vs mpi (the library's median over the choice's; mpi is the baseline, not a "
                    "candidate): mpi faster beyond noise at {} of {} sizes",
                    mpi_faster, mpi_measured));
  }
  for (const std::string& boundary : boundaries) report.line("    " + boundary);
  report.line("  predicted: " + dash_if_empty(s.predicted_string));
  report.line("  fitted:    " + dash_if_empty(s.fitted_string));
  if (compared > 0) {
    report.line(
        fmt::format("  bottom-up picks the measured winner at {} of the {} sizes won by an "
                    "algorithm with a cost model of its own",
                    agree, compared));
  }
}

void report_residuals(Report& report, const FitResults& results) {
  report.line("");
  report.line("Top-down residuals (predicted − measured) / measured");
  report.line(fmt::format("  {:<19} {:<9} {:<5} {:>6} {:>12} {:>12} {:>12} {:>8}", "algorithm",
                          "transport", "dtype", "ranks", "bytes", "measured µs", "fitted µs",
                          "rel err"));
  for (const PointPrediction& p : results.predictions) {
    if (p.model != "top_down") continue;
    const Measurement& m = p.point;
    report.line(fmt::format("  {:<19} {:<9} {:<5} {:>6} {:>12.0f} {:>12.3f} {:>12.3f} {:>+7.1f}%",
                            m.algorithm, m.transport, m.dtype, m.ranks, m.bytes, m.seconds * 1e6,
                            p.predicted_seconds * 1e6, 100 * p.rel_err()));
  }
}

// Each distinct note once, in the order first given.
void report_notes(Report& report, const FitResults& results) {
  if (results.notes.empty()) return;
  report.line("");
  report.line("Notes");
  std::set<std::string> seen;
  for (const std::string& note : results.notes) {
    if (seen.insert(note).second) report.line("  - " + note);
  }
}

}  // namespace

std::vector<std::string> models_csv_columns() { return columns::names(columns::kModels); }

std::vector<std::string> predictions_csv_columns() { return columns::names(columns::kPredictions); }

std::vector<std::string> selections_csv_columns() { return columns::names(columns::kSelections); }

namespace {
// A named algorithm's time in µs for selections.csv; empty where none was named.
std::string csv_microseconds(const std::string& name, double seconds) {
  return name.empty() ? std::string() : number(seconds * 1e6);
}
}  // namespace

void write_selections_csv(const std::string& path, const FitResults& results) {
  write_csv(path, selections_csv_columns(), [&](CsvWriter& writer) {
    for (const Selection& s : results.selections) {
      for (const SelectionRow& row : s.rows) {
        writer.write_row({s.collective,
                          s.transport,
                          s.provider,
                          s.placement,
                          s.dtype,
                          s.op,
                          std::to_string(s.ranks),
                          bytes_text(row.bytes),
                          row.choice.chosen,
                          row.choice.exchange,
                          csv_microseconds(row.choice.chosen, row.chosen_time.median),
                          csv_microseconds(row.choice.chosen, row.chosen_time.q1),
                          csv_microseconds(row.choice.chosen, row.chosen_time.q3),
                          std::to_string(row.chosen_time.repetitions),
                          row.measured,
                          csv_microseconds(row.measured, row.measured_seconds),
                          row.choice.changed() ? "1" : "0",
                          row.choice.previous,
                          number(row.choice.margin),
                          number(row.choice.gap),
                          fmt::format("{}", fmt::join(row.choice.same, ";")),
                          fmt::format("{}", fmt::join(row.choice.ties, ";")),
                          fmt::format("{}", fmt::join(row.choice.tie_exchanges, ";")),
                          number(row.mpi_seconds * 1e6),
                          row.choice.chosen.empty()
                              ? std::string()
                              : number(row.mpi_seconds / row.chosen_time.median),
                          row.mpi_verdict,
                          row.predicted,
                          csv_microseconds(row.predicted, row.predicted_seconds),
                          row.fitted,
                          csv_microseconds(row.fitted, row.fitted_seconds)});
      }
    }
  });
}

void write_models_csv(const std::string& path, const FitResults& results) {
  write_csv(path, models_csv_columns(), [&](CsvWriter& writer) {
    for (const ModelFit& f : results.fits) {
      // β is written wherever the model has one, 0 included: an empty β
      // would read as "not fitted" (collbench-predict refuses it).
      writer.write_row({f.model,
                        f.family,
                        f.transport,
                        f.provider,
                        f.placement,
                        f.dtype,
                        f.op,
                        f.algorithm,
                        f.terms,
                        join_ranks(f.ranks),
                        std::to_string(f.quality.points),
                        bytes_text(f.min_bytes),
                        bytes_text(f.max_bytes),
                        std::isnan(f.switch_bytes) ? "" : bytes_text(f.switch_bytes),
                        f.model == "memcpy" ? "" : number(f.params.alpha * 1e6),
                        f.model == "reduce_gamma" ? "" : number(f.params.beta * 1e9),
                        per_second(f.params.beta),
                        f.gamma_source.empty() ? "" : number(f.params.gamma * 1e9),
                        f.gamma_source.empty() ? "" : per_second(f.params.gamma),
                        f.gamma_source,
                        number(f.alpha_rel_stderr),
                        number(f.beta_rel_stderr),
                        number(f.gamma_rel_stderr),
                        number(f.quality.r2_log),
                        number(f.quality.median_rel_err),
                        number(f.quality.max_rel_err),
                        f.note,
                        fmt::to_string(fmt::join(f.sources, ";"))});
    }
  });
}

void write_predictions_csv(const std::string& path, const FitResults& results) {
  write_csv(path, predictions_csv_columns(), [&](CsvWriter& writer) {
    for (const PointPrediction& p : results.predictions) {
      const Measurement& m = p.point;
      writer.write_row({p.model, m.family, m.transport, m.provider, m.placement, m.dtype, m.op,
                        m.algorithm, std::to_string(m.ranks), bytes_text(m.bytes),
                        number(m.seconds * 1e6), number(p.predicted_seconds * 1e6),
                        number(p.rel_err()), std::to_string(m.samples)});
    }
  });
}

std::string format_report(const FitResults& results, const LoadSummary& summary,
                          bool all_residuals) {
  Report report;
  report_inputs(report, summary);
  report_ping_pongs(report, results);
  report_link_matrices(report, results);
  report_exchanges(report, results);
  report_local_kernels(report, results);
  report_collective_fits(report, results);
  for (const Selection& s : results.selections) report_selection(report, results, s);
  if (all_residuals) report_residuals(report, results);
  report_notes(report, results);
  return std::move(report).take();
}

std::string format_brief(const FitResults& results) {
  std::string out;
  for (const ModelFit& f : results.fits) {
    if (f.model != "hockney") continue;
    out +=
        fmt::format("p2p {}{}{} {}: alpha {:.3f} us, beta {} GB/s ({}R2 log {}, median error {})\n",
                    f.transport, f.provider.empty() ? "" : " ", f.provider, f.placement,
                    f.params.alpha * 1e6, rate(f.params.beta),
                    std::isnan(f.switch_bytes)
                        ? std::string()
                        : fmt::format("protocol switch at {}, ", bytes_label(f.switch_bytes)),
                    fixed(f.quality.r2_log, 4), percent(f.quality.median_rel_err));
  }
  for (const ModelFit& f : results.fits) {
    if (f.model != "hockney_sendrecv") continue;
    out += fmt::format(
        "sendrecv {}{}{} {} ranks={}: alpha {:.3f} us, beta {} GB/s (R2 log {}, median error {})\n",
        f.transport, f.provider.empty() ? "" : " ", f.provider, f.placement, join_ranks(f.ranks),
        f.params.alpha * 1e6, rate(f.params.beta), fixed(f.quality.r2_log, 4),
        percent(f.quality.median_rel_err));
  }
  for (const ModelFit& f : results.fits) {
    if (f.model != "top_down") continue;
    const std::optional<FitQuality> quality = bottom_up_quality(results, f);
    const std::string bottom_up = quality ? percent(quality->median_rel_err) : "-";
    out += fmt::format("{} {} {}{}{} {} {} {}: median relative error bottom-up {}, top-down {}\n",
                       f.family, f.algorithm, f.transport, f.provider.empty() ? "" : " ",
                       f.provider, dash_if_empty(f.placement), f.dtype, f.op, bottom_up,
                       percent(f.quality.median_rel_err));
  }
  for (const Selection& s : results.selections) {
    const std::string where = fmt::format(
        "{} {}{}{} {} {} {} ranks={}", s.collective, s.transport, s.provider.empty() ? "" : " ",
        s.provider, dash_if_empty(s.placement), s.dtype, dash_if_empty(s.op), s.ranks);
    out += fmt::format("selection {} measured:  {}\n", where, dash_if_empty(s.measured_string));
    out += fmt::format("selection {} predicted: {}\n", where, dash_if_empty(s.predicted_string));
  }
  return out;
}

}  // namespace collbench
