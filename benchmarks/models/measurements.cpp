// Reads collbench CSVs into the aggregated points the fits use.
//
// Any number of files from any mix of runs: rows are grouped by everything
// that makes a configuration (family, transport, provider, placement, dtype,
// op, algorithm, ranks, bytes) and each group keeps the median of its
// samples, so that an outlier cannot drag a point the way a mean would; their
// quartiles are the spread the selection weighs a difference against. The
// samples are the launches (the launch column) when the point was measured in
// two or more, each launch's median one sample: the repetitions of one launch
// share its offset (the machine moved a 2 MiB ping-pong from 145 to 187 µs
// between launches whose repetitions did not overlap), so they would count
// one launch's luck several times. Otherwise, and for rows without a launch,
// every row is a sample.
// The rows measured under load are left out here too, for the export of
// tuning files (leave_out_loaded), since it is a filter of what the reader
// reads.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>
#include <span>
#include <stdexcept>
#include <tuple>

#include "collbench/collectives/collective.h"
#include "collbench/core/columns.h"
#include "collbench/models/fit.h"
#include "finite_number.h"
#include "tuning_choice.h"

namespace collbench {
namespace {

using columns::Column;

// Columns every row must have (core/columns.csv); placement only matters for
// p2p rows and is checked when there is one.
constexpr std::string_view kRequiredColumns[] = {
    "family", "transport", "provider", "algorithm", "ranks", "dtype", "op", "bytes", "median_us"};
static_assert(std::ranges::all_of(kRequiredColumns, [](std::string_view column) {
  return columns::has(columns::kCollbench, column);
}));

struct RowContext {
  const std::string& source;
  std::size_t row;  // 1 = first data row
  // The columns of the file's kind, whose rules its values must meet.
  std::span<const Column> schema;
};

// What a value that is not empty (empty: not measured) must be comes from
// core/columns.csv (its range), as for scripts/collbench_csv.py, the reader
// of every script, so that one bad CSV is refused alike by all of them
// (tests/bad_inputs.tsv: csv_* rows).
const Column& rule_of(std::span<const Column> schema, std::string_view column) {
  for (const Column& rule : schema) {
    if (rule.name == column && rule.checked) return rule;
  }
  throw std::logic_error(fmt::format("no column rule for {}", column));
}

// "a whole number of ranks >= 1", "a finite number of µs > 0", ...
std::string accepted(const Column& rule) {
  // A fraction or a pure number has no unit to name.
  const bool named = rule.unit != "none" && rule.unit != "fraction";
  return fmt::format("{}{}{}{}",
                     rule.type == columns::Type::integer ? "a whole number" : "a finite number",
                     named ? fmt::format(" of {}", rule.unit) : "",
                     std::isinf(rule.lowest)
                         ? ""
                         : fmt::format(" {} {:g}", rule.lowest_included ? ">=" : ">", rule.lowest),
                     std::isinf(rule.highest) ? "" : fmt::format(" and <= {:g}", rule.highest));
}

using models_detail::finite_or_nan;

bool satisfies(const Column& rule, double value) {
  return std::isfinite(value) &&
         (rule.type != columns::Type::integer || value == std::floor(value)) &&
         (rule.lowest_included ? value >= rule.lowest : value > rule.lowest) &&
         value <= rule.highest;
}

// Length of the valid UTF-8 sequence at text[i], 0 when it is not one.
std::size_t utf8_sequence(std::string_view text, std::size_t i) {
  const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(text[k]); };
  const unsigned char lead = byte(i);
  if (lead < 0x80) return 1;
  std::size_t length = 0;
  unsigned char low = 0x80, high = 0xBF;  // range of the second byte
  if (lead >= 0xC2 && lead <= 0xDF) {
    length = 2;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    length = 3;
    if (lead == 0xE0) low = 0xA0;   // overlong
    if (lead == 0xED) high = 0x9F;  // surrogates
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    length = 4;
    if (lead == 0xF0) low = 0x90;
    if (lead == 0xF4) high = 0x8F;
  } else {
    return 0;
  }
  if (i + length > text.size()) return 0;
  for (std::size_t k = 1; k < length; ++k) {
    const unsigned char c = byte(i + k);
    if (k == 1 ? (c < low || c > high) : (c < 0x80 || c > 0xBF)) return 0;
  }
  return length;
}

// Binary data or text that is not UTF-8, in file order (header, then rows):
// refused as collbench_csv.py refuses the file.
void check_text(const CsvTable& table, const std::string& source) {
  const auto each_field = [&](auto&& visit) {
    for (const std::string& field : table.header) visit(field);
    for (const auto& row : table.rows) {
      for (const std::string& field : row) visit(field);
    }
  };
  each_field([&](const std::string& field) {
    if (field.find('\0') != std::string::npos) {
      throw std::runtime_error(
          fmt::format("{}: binary data (a NUL byte); expected a CSV text file", source));
    }
  });
  each_field([&](const std::string& field) {
    for (std::size_t i = 0; i < field.size();) {
      const std::size_t length = utf8_sequence(field, i);
      if (length == 0) {
        throw std::runtime_error(
            fmt::format("{}: not UTF-8 text (byte 0x{:02x}); expected a CSV text file", source,
                        static_cast<unsigned char>(field[i])));
      }
      i += length;
    }
  });
}

// Every value of a checked column of `schema`, in every row.
void check_column_values(const CsvTable& table, const std::string& source,
                         std::span<const Column> schema) {
  std::vector<std::pair<std::size_t, const Column*>> checked;
  for (const Column& rule : schema) {
    if (const int c = table.column(rule.name); rule.checked && c >= 0) {
      checked.emplace_back(static_cast<std::size_t>(c), &rule);
    }
  }
  std::sort(checked.begin(), checked.end());  // header order, as the scripts report
  for (std::size_t r = 0; r < table.rows.size(); ++r) {
    for (const auto& [c, rule] : checked) {
      const std::string& text = table.rows[r][c];
      if (!text.empty() && !satisfies(*rule, finite_or_nan(text))) {
        throw std::runtime_error(fmt::format("{}: data row {}: {} is '{}'; expected {}", source,
                                             r + 1, rule->name, text, accepted(*rule)));
      }
    }
  }
}

// The value of a checked column that the row needs (not empty).
double required_number(std::string_view text, std::string_view column, const RowContext& where) {
  const Column& rule = rule_of(where.schema, column);
  const double value = finite_or_nan(text);
  if (!satisfies(rule, value)) {
    throw std::runtime_error(fmt::format("{}: data row {}: {} is '{}'; expected {}", where.source,
                                         where.row, column, text, accepted(rule)));
  }
  return value;
}

// The columns of collbench-linkmatrix's links CSV (one row per directed host
// pair) that collbench-fit reads; a table with src and dst and no family
// column is such a CSV.
constexpr std::string_view kLinkMatrixColumns[] = {
    "src",           "dst",        "transport",       "provider",
    "latency_bytes", "latency_us", "bandwidth_bytes", "bandwidth_GBps"};
static_assert(std::ranges::all_of(kLinkMatrixColumns, [](std::string_view column) {
  return columns::has(columns::kLinks, column);
}));

bool is_link_matrix(const CsvTable& table) {
  return table.column("family") < 0 && table.column("src") >= 0 && table.column("dst") >= 0;
}

// The configuration a row measured; rows with equal keys are aggregated.
using PointKey = std::tuple<std::string, std::string, std::string, std::string, std::string,
                            std::string, std::string, int, double>;

struct PointSamples {
  // Each row's median by its launch; a row that names none is a launch of
  // its own (aggregate_measurements).
  std::map<std::string, std::vector<double>> seconds_by_launch;
  std::set<std::string> sources;
  void add(const std::string& launch, double seconds, const std::string& source) {
    seconds_by_launch[launch].push_back(seconds);
    sources.insert(source);
  }
};

// The key of a named launch; a row without one gets a key unique to the row.
constexpr std::string_view kLaunch = "launch ";

std::string row_launch(const std::string& source, std::size_t row) {
  return fmt::format("row {}#{}", source, row);
}

// A links CSV of collbench-linkmatrix: each directed link gives two p2p
// points of algorithm "link_matrix" between hosts (placement inter): its
// latency (the half round trip at latency_bytes) and the one-way time of its
// bandwidth transfer (bandwidth_bytes / bandwidth_GBps, which includes one
// latency: the matrix subtracts only the acknowledgement's). Aggregated like
// any rows, each point is then the median link's.
void add_link_matrix_table(const NamedTable& named, std::map<PointKey, PointSamples>& points,
                           LoadSummary& summary) {
  const CsvTable& table = named.table;
  const std::string& source = named.source;
  std::vector<std::string> missing;
  for (std::string_view column : kLinkMatrixColumns) {
    if (table.column(column) < 0) missing.emplace_back(column);
  }
  if (!missing.empty()) {
    throw std::runtime_error(fmt::format(
        "{}: a collbench-linkmatrix links CSV without column{} {}; collbench-fit needs {}", source,
        missing.size() > 1 ? "s" : "", fmt::to_string(fmt::join(missing, ", ")),
        fmt::to_string(fmt::join(kLinkMatrixColumns, ", "))));
  }
  if (table.rows.empty()) {
    throw std::runtime_error(fmt::format("{}: no links (only the header); nothing to fit", source));
  }
  check_column_values(table, source, columns::kLinks);
  const auto text = [&](const std::vector<std::string>& row, std::string_view column) {
    return row[static_cast<std::size_t>(table.column(column))];
  };
  // Each directed link once: a repeated row would count twice toward the
  // median link. (Repeated runs come as separate files and count alike.)
  std::map<std::tuple<std::string, std::string, std::string, std::string>, std::size_t> links;
  for (std::size_t r = 0; r < table.rows.size(); ++r) {
    const std::vector<std::string>& row = table.rows[r];
    const RowContext where{source, r + 1, columns::kLinks};
    ++summary.rows_read;
    const std::string& src = text(row, "src");
    const std::string& dst = text(row, "dst");
    if (src.empty() || dst.empty()) {
      throw std::runtime_error(fmt::format("{}: data row {}: {} is empty; expected a host name",
                                           source, where.row, src.empty() ? "src" : "dst"));
    }
    if (src == dst) {
      throw std::runtime_error(
          fmt::format("{}: data row {}: src and dst are both '{}'; a link joins two hosts "
                      "(collbench-linkmatrix measures none from a host to itself)",
                      source, where.row, src));
    }
    const auto [first, inserted] =
        links.try_emplace({src, dst, text(row, "transport"), text(row, "provider")}, where.row);
    if (!inserted) {
      throw std::runtime_error(fmt::format(
          "{}: data row {}: the link {} -> {} repeats data row {}; each directed link is measured "
          "once per file",
          source, where.row, src, dst, first->second));
    }
    const double latency_bytes =
        required_number(text(row, "latency_bytes"), "latency_bytes", where);
    const double latency_us = required_number(text(row, "latency_us"), "latency_us", where);
    const double bandwidth_bytes =
        required_number(text(row, "bandwidth_bytes"), "bandwidth_bytes", where);
    const double bandwidth_GBps =
        required_number(text(row, "bandwidth_GBps"), "bandwidth_GBps", where);
    if (bandwidth_bytes <= latency_bytes) {
      throw std::runtime_error(fmt::format(
          "{}: data row {}: bandwidth_bytes {} is not above latency_bytes {}; a Hockney line "
          "needs two sizes (collbench-linkmatrix --size above --latency-size)",
          source, where.row, text(row, "bandwidth_bytes"), text(row, "latency_bytes")));
    }
    const auto add = [&](double bytes, double seconds) {
      points[PointKey{"p2p", text(row, "transport"), text(row, "provider"), "inter", "", "",
                      "link_matrix", 2, bytes}]
          .add(row_launch(source, where.row), seconds, source);
    };
    add(latency_bytes, latency_us * 1e-6);
    add(bandwidth_bytes, bandwidth_bytes / (bandwidth_GBps * 1e9));
    ++summary.rows_used;
  }
}

// sync_modes: the sync value seen so far (at most one) and where it was first seen.
void add_table(const NamedTable& named, std::map<PointKey, PointSamples>& points,
               std::map<std::string, std::size_t>& ignored,
               std::map<std::string, std::string>& sync_modes, LoadSummary& summary) {
  const CsvTable& table = named.table;
  const std::string& source = named.source;
  check_text(table, source);
  if (table.header.empty() || (table.header.size() == 1 && table.header[0].empty())) {
    throw std::runtime_error(fmt::format(
        "{}: empty file (no header); expected a collbench CSV (see results/README.md)", source));
  }
  if (!table.header_complete) {
    throw std::runtime_error(fmt::format(
        "{}: the header line is cut short (no line break ends it, and no row follows): the file "
        "was torn while it was written; nothing to fit",
        source));
  }
  if (is_link_matrix(table)) {
    add_link_matrix_table(named, points, summary);
    return;
  }
  std::vector<std::string> missing;
  for (std::string_view column : kRequiredColumns) {
    if (table.column(column) < 0) missing.emplace_back(column);
  }
  if (!missing.empty()) {
    std::vector<std::string> required(std::begin(kRequiredColumns), std::end(kRequiredColumns));
    throw std::runtime_error(fmt::format(
        "{}: missing column{} {}; collbench-fit needs {}", source, missing.size() > 1 ? "s" : "",
        fmt::to_string(fmt::join(missing, ", ")), fmt::to_string(fmt::join(required, ", "))));
  }
  if (table.rows.empty()) {
    throw std::runtime_error(
        fmt::format("{}: no data rows (only the header); nothing to fit", source));
  }
  check_column_values(table, source, columns::kCollbench);
  const auto index = [&](std::string_view name) {
    return static_cast<std::size_t>(table.column(name));
  };
  const std::size_t family_col = index("family"), transport_col = index("transport"),
                    provider_col = index("provider"), algorithm_col = index("algorithm"),
                    ranks_col = index("ranks"), dtype_col = index("dtype"), op_col = index("op"),
                    bytes_col = index("bytes"), median_col = index("median_us");
  const int placement_col = table.column("placement");
  const int nodes_col = table.column("nodes");
  const int per_node_col = table.column("ranks_per_node");
  const int map_by_col = table.column("map_by");
  const int check_col = table.column("check");
  const int sync_col = table.column("sync");
  const int segment_col = table.column("segment_bytes");
  const int launch_col = table.column("launch");

  for (std::size_t r = 0; r < table.rows.size(); ++r) {
    const std::vector<std::string>& row = table.rows[r];
    const RowContext where{source, r + 1, columns::kCollbench};
    ++summary.rows_read;
    const std::string& family = row[family_col];
    const std::string& algorithm = row[algorithm_col];
    const bool collective = find_collective(family) != nullptr;
    const bool used =
        collective || (family == "p2p" && (algorithm == "pingpong" || algorithm == "sendrecv")) ||
        (family == "local" &&
         (algorithm == "reduce" || algorithm == "reduce_all" || algorithm == "memcpy"));
    if (!used) {
      ++ignored[fmt::format("family={} algorithm={}", family, algorithm)];
      continue;
    }
    if (check_col >= 0 && row[static_cast<std::size_t>(check_col)] == "wrong") {
      ++ignored["check=wrong (a wrong result is not a valid time)"];
      continue;
    }
    const double ranks_value = required_number(row[ranks_col], "ranks", where);
    const double bytes = required_number(row[bytes_col], "bytes", where);
    if (bytes == 0) {
      throw std::runtime_error(fmt::format(
          "{}: data row {}: bytes is 0; collbench never times an empty message (its smallest size "
          "is 1 byte), so the row is not a measurement to fit",
          source, where.row));
    }
    // The harness leaves the statistics empty for a benchmark that failed
    // (e.g. an algorithm that cannot run at this size): there is no time to
    // fit, which is not the same as a time that is not a number.
    if (row[median_col].empty()) {
      ++ignored["median_us empty (benchmark not timed)"];
      continue;
    }
    const double median_us = required_number(row[median_col], "median_us", where);
    std::string placement;
    std::string dtype = row[dtype_col];
    std::string op = row[op_col];
    if (family == "p2p") {
      if (placement_col < 0) {
        throw std::runtime_error(
            fmt::format("{}: missing column placement; p2p rows need it (intra or inter)", source));
      }
      placement = row[static_cast<std::size_t>(placement_col)];
      if (placement != "intra" && placement != "inter") {
        throw std::runtime_error(
            fmt::format("{}: data row {}: placement is '{}'; expected intra or inter", source,
                        where.row, placement));
      }
      // Ping-pong and sendrecv move bytes: element type and operation do not matter.
      dtype.clear();
      op.clear();
    } else if (collective && nodes_col >= 0 && !row[static_cast<std::size_t>(nodes_col)].empty()) {
      const double nodes =
          required_number(row[static_cast<std::size_t>(nodes_col)], "nodes", where);
      placement = nodes <= 1 ? "intra" : "inter";
      const double per_node =
          per_node_col >= 0 && !row[static_cast<std::size_t>(per_node_col)].empty()
              ? required_number(row[static_cast<std::size_t>(per_node_col)], "ranks_per_node",
                                where)
              : 1;
      if (nodes > 1 && per_node > 1) {
        placement = layout_placement(
            static_cast<int>(nodes), static_cast<int>(per_node),
            map_by_col >= 0 ? row[static_cast<std::size_t>(map_by_col)] : std::string());
      }
    }
    // Ping-pong and memcpy move bytes; only reductions have an element type.
    if ((collective || algorithm == "reduce" || algorithm == "reduce_all") && dtype.empty()) {
      throw std::runtime_error(
          fmt::format("{}: data row {}: dtype is empty; expected one of f32, f64, f16, bf16",
                      source, where.row));
    }
    if (sync_col >= 0) {
      // Back-to-back calls (sync=none) carry one call's skew into the next;
      // their times are a different measurement, not more samples.
      const std::string& sync = row[static_cast<std::size_t>(sync_col)];
      if (!sync_modes.contains(sync)) {
        if (!sync_modes.empty()) {
          const auto& [other, first_seen] = *sync_modes.begin();
          throw std::runtime_error(fmt::format(
              "{}: data row {}: sync is '{}' but {} has sync '{}'; fit one sync mode at a time",
              source, where.row, sync, first_seen, other));
        }
        sync_modes.emplace(sync, fmt::format("{} data row {}", source, where.row));
      }
    }
    if (segment_col >= 0 && !row[static_cast<std::size_t>(segment_col)].empty() &&
        required_number(row[static_cast<std::size_t>(segment_col)], "segment_bytes", where) !=
            static_cast<double>(kDefaultSegmentBytes)) {
      // The costs count the default segment (AlgorithmInfo::cost is flat and
      // segment-free); a row of another segment would be fitted to the
      // wrong formula.
      throw std::runtime_error(fmt::format(
          "{}: data row {}: segment_bytes is {}; collbench-fit prices the default segment ({} "
          "bytes): fit a run without --segment",
          source, where.row, row[static_cast<std::size_t>(segment_col)], kDefaultSegmentBytes));
    }
    PointKey key{family,
                 row[transport_col],
                 row[provider_col],
                 placement,
                 dtype,
                 op,
                 algorithm,
                 static_cast<int>(ranks_value),
                 bytes};
    const std::string launch =
        launch_col >= 0 ? row[static_cast<std::size_t>(launch_col)] : std::string();
    points[key].add(launch.empty() ? row_launch(source, where.row) : std::string(kLaunch) + launch,
                    median_us * 1e-6, source);
    ++summary.rows_used;
  }
}

// The samples of one point: each launch's median when there are several
// launches, else the one launch's rows (its repetitions).
std::vector<double> point_samples(const std::map<std::string, std::vector<double>>& by_launch) {
  if (by_launch.size() == 1) return by_launch.begin()->second;
  std::vector<double> medians;
  for (const auto& [launch, seconds] : by_launch) medians.push_back(quantile(seconds, 0.5));
  return medians;
}

}  // namespace

std::string layout_placement(int nodes, int per_node, std::string_view map_by) {
  return fmt::format("{}x{}:{}", nodes, per_node, map_by.empty() ? "unknown" : map_by);
}

std::optional<Layout> placement_layout(std::string_view placement) {
  int nodes = 0, per_node = 0;
  char map_by[8] = {};
  const std::string text(placement);
  if (std::sscanf(text.c_str(), "%dx%d:%7s", &nodes, &per_node, map_by) != 3 || nodes < 1 ||
      per_node < 1 || text != layout_placement(nodes, per_node, map_by)) {
    return std::nullopt;
  }
  const std::string_view how = map_by;
  if (how == "slot") return Layout{nodes, per_node, MapBy::slot};
  if (how == "node") return Layout{nodes, per_node, MapBy::node};
  return std::nullopt;
}

double quantile(std::vector<double> values, double p) {
  if (values.empty()) throw std::invalid_argument("quantile of no values");
  std::sort(values.begin(), values.end());
  const double h = (static_cast<double>(values.size()) - 1) * std::clamp(p, 0.0, 1.0);
  const auto below = static_cast<std::size_t>(std::floor(h));
  const std::size_t above = std::min(below + 1, values.size() - 1);
  return values[below] + (h - static_cast<double>(below)) * (values[above] - values[below]);
}

std::vector<Measurement> aggregate_measurements(std::span<const NamedTable> tables,
                                                LoadSummary* summary) {
  LoadSummary local_summary;
  LoadSummary& out = summary != nullptr ? *summary : local_summary;
  if (tables.empty()) throw std::runtime_error("no CSV files given; nothing to fit");
  std::map<PointKey, PointSamples> points;
  std::map<std::string, std::size_t> ignored;
  std::map<std::string, std::string> sync_modes;
  for (const NamedTable& table : tables) {
    out.files.push_back(table.source);
    add_table(table, points, ignored, sync_modes, out);
  }
  for (const auto& [what, count] : ignored) {
    out.ignored.push_back(fmt::format("{}: {} row{}", what, count, count == 1 ? "" : "s"));
  }
  std::vector<Measurement> result;
  result.reserve(points.size());
  for (const auto& [key, samples] : points) {
    Measurement m;
    std::tie(m.family, m.transport, m.provider, m.placement, m.dtype, m.op, m.algorithm, m.ranks,
             m.bytes) = key;
    const std::vector<double> values = point_samples(samples.seconds_by_launch);
    m.seconds = quantile(values, 0.5);
    m.q1_seconds = quantile(values, 0.25);
    m.q3_seconds = quantile(values, 0.75);
    m.samples = static_cast<int>(values.size());
    m.launches =
        static_cast<int>(std::ranges::count_if(samples.seconds_by_launch, [](const auto& launch) {
          return launch.first.starts_with(kLaunch);
        }));
    m.sources.assign(samples.sources.begin(), samples.sources.end());
    result.push_back(std::move(m));
  }
  return result;
}

std::vector<Measurement> load_measurements(std::span<const std::string> paths,
                                           LoadSummary* summary) {
  std::vector<NamedTable> tables;
  tables.reserve(paths.size());
  for (const std::string& path : paths) tables.push_back({path, read_csv_file(path)});
  return aggregate_measurements(tables, summary);
}

// ---- Rows measured under load: what the export of tuning files reads -------

LoadedRows leave_out_loaded(std::span<const NamedTable> tables, bool allow_loaded) {
  LoadedRows result;
  std::size_t library_rows = 0;
  for (const NamedTable& named : tables) {
    NamedTable& quiet = result.tables.emplace_back(named);
    const int loaded = named.table.column("loaded");
    const int family = named.table.column("family");
    const int algorithm = named.table.column("algorithm");
    if (family < 0 || algorithm < 0) continue;
    std::erase_if(quiet.table.rows, [&](const std::vector<std::string>& row) {
      if (!tuning_internal::is_library_row(row[static_cast<std::size_t>(family)],
                                           row[static_cast<std::size_t>(algorithm)])) {
        return false;
      }
      ++library_rows;
      const bool marked = loaded >= 0 && row[static_cast<std::size_t>(loaded)] == "yes";
      result.loaded += marked ? 1 : 0;
      return marked;
    });
  }
  if (result.loaded == 0) {
    result.tables.assign(tables.begin(), tables.end());
    return result;
  }
  // A file of loaded rows only is left out whole (an empty table is bad input).
  std::erase_if(result.tables, [](const NamedTable& named) { return named.table.rows.empty(); });
  // A library point that no quiet row measured: the choice at its size
  // would rest on loaded rows alone. Per collective: sizes and rows.
  const auto key = [](const Measurement& m) {
    return std::tuple(m.family, m.transport, m.provider, m.placement, m.dtype, m.op, m.algorithm,
                      m.ranks, m.bytes);
  };
  std::set<decltype(key(Measurement{}))> measured_quietly;
  for (const Measurement& m : aggregate_measurements(result.tables))
    measured_quietly.insert(key(m));
  std::map<std::string, std::pair<std::set<std::pair<int, double>>, int>> resting;
  for (const Measurement& m : aggregate_measurements(tables)) {
    if (!tuning_internal::is_library_row(m.family, m.algorithm) ||
        measured_quietly.contains(key(m)))
      continue;
    auto& [sizes, rows] = resting[m.family];
    sizes.emplace(m.ranks, m.bytes);
    rows += m.samples;
  }
  if (!resting.empty() && !allow_loaded) {
    std::vector<std::string> parts;
    for (const auto& [collective, found] : resting) {
      const auto& [sizes, rows] = found;
      parts.push_back(fmt::format("{} at {} size{} ({} row{})", collective, sizes.size(),
                                  sizes.size() == 1 ? "" : "s", rows, rows == 1 ? "" : "s"));
    }
    throw std::runtime_error(fmt::format(
        "the choice of {} rests on rows measured under load only (column loaded = yes: other "
        "work kept the machine busy; {} of the library's {} rows are marked): measure them "
        "again on a quiet machine, or pass --allow-loaded to export from them",
        fmt::join(parts, ", "), result.loaded, library_rows));
  }
  if (allow_loaded) {
    result.tables.assign(tables.begin(), tables.end());
    result.header = fmt::format(
        "--allow-loaded: {} of the library's {} rows were measured under load (loaded = yes) "
        "and are included{}",
        result.loaded, library_rows,
        resting.empty() ? std::string()
                        : fmt::format("; {} collective{} choices rest on them", resting.size(),
                                      resting.size() == 1 ? "'s" : "s'"));
  } else {
    result.header = fmt::format(
        "{} of the library's {} rows were measured under load (loaded = yes) and are left out; "
        "every choice rests on quiet rows",
        result.loaded, library_rows);
  }
  return result;
}

}  // namespace collbench
