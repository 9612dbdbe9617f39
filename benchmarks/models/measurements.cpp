// Reads collbench CSVs into the aggregated points the fits use.
//
// Any number of files from any mix of runs: rows are grouped by everything
// that makes a configuration (family, transport, provider, placement, dtype,
// op, algorithm, ranks, bytes) and each group keeps the median of median_us,
// so repetitions and repeated runs count alike and an outlier run cannot drag
// a point the way a mean would.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <map>
#include <set>
#include <stdexcept>
#include <tuple>

#include "collbench/fit.h"

namespace collbench {
namespace {

// Columns every row must have (results/README.md); placement only matters for
// p2p rows and is checked when there is one.
constexpr std::string_view kRequiredColumns[] = {
    "family", "transport", "provider", "algorithm", "ranks", "dtype", "op", "bytes", "median_us"};

struct RowContext {
  const std::string& source;
  std::size_t row;  // 1 = first data row
};

double parse_number(std::string_view text, std::string_view column, const RowContext& where,
                    std::string_view accepted) {
  double value = 0;
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (text.empty() || ec != std::errc() || ptr != end || !std::isfinite(value)) {
    throw std::runtime_error(fmt::format("{}: data row {}: {} is '{}'; expected {}", where.source,
                                         where.row, column, text, accepted));
  }
  return value;
}

// The configuration a row measured; rows with equal keys are aggregated.
using PointKey = std::tuple<std::string, std::string, std::string, std::string, std::string,
                            std::string, std::string, int, double>;

struct PointSamples {
  std::vector<double> seconds;
  std::set<std::string> sources;
};

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const std::size_t mid = values.size() / 2;
  return values.size() % 2 == 1 ? values[mid] : 0.5 * (values[mid - 1] + values[mid]);
}

// sync_modes: the sync value seen so far (at most one) and where it was first seen.
void add_table(const NamedTable& named, std::map<PointKey, PointSamples>& points,
               std::map<std::string, std::size_t>& ignored,
               std::map<std::string, std::string>& sync_modes, LoadSummary& summary) {
  const CsvTable& table = named.table;
  const std::string& source = named.source;
  if (table.header.empty() || (table.header.size() == 1 && table.header[0].empty())) {
    throw std::runtime_error(fmt::format(
        "{}: empty file (no header); expected a collbench CSV (see results/README.md)", source));
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
  const auto index = [&](std::string_view name) {
    return static_cast<std::size_t>(table.column(name));
  };
  const std::size_t family_col = index("family"), transport_col = index("transport"),
                    provider_col = index("provider"), algorithm_col = index("algorithm"),
                    ranks_col = index("ranks"), dtype_col = index("dtype"), op_col = index("op"),
                    bytes_col = index("bytes"), median_col = index("median_us");
  const int placement_col = table.column("placement");
  const int nodes_col = table.column("nodes");
  const int check_col = table.column("check");
  const int sync_col = table.column("sync");

  for (std::size_t r = 0; r < table.rows.size(); ++r) {
    const std::vector<std::string>& row = table.rows[r];
    const RowContext where{source, r + 1};
    ++summary.rows_read;
    const std::string& family = row[family_col];
    const std::string& algorithm = row[algorithm_col];
    const bool used = (family == "allreduce") ||
                      (family == "p2p" && (algorithm == "pingpong" || algorithm == "sendrecv")) ||
                      (family == "local" && (algorithm == "reduce" || algorithm == "reduce_all" ||
                                             algorithm == "memcpy"));
    if (!used) {
      ++ignored[fmt::format("family={} algorithm={}", family, algorithm)];
      continue;
    }
    if (check_col >= 0 && row[static_cast<std::size_t>(check_col)] == "wrong") {
      ++ignored["check=wrong (a wrong result is not a valid time)"];
      continue;
    }
    const double ranks_value =
        parse_number(row[ranks_col], "ranks", where, "a whole number of ranks >= 1");
    if (ranks_value < 1 || ranks_value != std::floor(ranks_value) || ranks_value > 1e9) {
      throw std::runtime_error(
          fmt::format("{}: data row {}: ranks is '{}'; expected a whole number of ranks >= 1",
                      source, where.row, row[ranks_col]));
    }
    const double bytes =
        parse_number(row[bytes_col], "bytes", where, "a whole number of bytes >= 0");
    if (bytes < 0 || bytes != std::floor(bytes)) {
      throw std::runtime_error(
          fmt::format("{}: data row {}: bytes is '{}'; expected a whole number of bytes >= 0",
                      source, where.row, row[bytes_col]));
    }
    // The harness leaves the statistics empty for a benchmark that failed
    // (e.g. an algorithm that cannot run at this size): there is no time to
    // fit, which is not the same as a time that is not a number.
    if (row[median_col].empty()) {
      ++ignored["median_us empty (benchmark not timed)"];
      continue;
    }
    const double median_us =
        parse_number(row[median_col], "median_us", where, "a finite time in µs > 0");
    if (median_us <= 0) {
      throw std::runtime_error(
          fmt::format("{}: data row {}: median_us is '{}'; expected a finite time in µs > 0",
                      source, where.row, row[median_col]));
    }
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
    } else if (family == "allreduce" && nodes_col >= 0 &&
               !row[static_cast<std::size_t>(nodes_col)].empty()) {
      const double nodes = parse_number(row[static_cast<std::size_t>(nodes_col)], "nodes", where,
                                        "a whole number of hosts >= 1");
      placement = nodes <= 1 ? "intra" : "inter";
    }
    // Ping-pong and memcpy move bytes; only reductions have an element type.
    if ((family == "allreduce" || algorithm == "reduce" || algorithm == "reduce_all") &&
        dtype.empty()) {
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
    PointKey key{family,
                 row[transport_col],
                 row[provider_col],
                 placement,
                 dtype,
                 op,
                 algorithm,
                 static_cast<int>(ranks_value),
                 bytes};
    PointSamples& samples = points[key];
    samples.seconds.push_back(median_us * 1e-6);
    samples.sources.insert(source);
    ++summary.rows_used;
  }
}

}  // namespace

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
    m.seconds = median(samples.seconds);
    m.samples = static_cast<int>(samples.seconds.size());
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

}  // namespace collbench
