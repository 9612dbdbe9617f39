// The networks collbench-predict prices on (predict.h, "networks"): the
// presets, a fit's models.csv, and --fat-tree's leaf switches (which
// predict.cpp's costs then place the ranks on).
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <charconv>
#include <cmath>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "collbench/catalog/workload.h"
#include "collbench/core/csv.h"
#include "collbench/models/predict.h"

namespace collbench {
namespace {

// Link data rates after line coding: InfiniBand FDR signals 14.0625 Gbaud per
// lane and EDR 25.78125, both 64b/66b over 4 lanes; HDR and NDR are quoted as
// their 4x data rates. Latencies are MPI ping-pong half round trips as
// vendors and OSU benchmarks report them for a single switch hop; Ethernet
// figures are for kernel TCP.
constexpr NetworkPreset kPresets[] = {
    {"1gbe", "1 Gigabit Ethernet, 1 Gb/s, ~50 µs kernel TCP latency", 50e-6, 1.0},
    {"10gbe", "10 Gigabit Ethernet, 10 Gb/s, ~10 µs kernel TCP latency", 10e-6, 10.0},
    {"100gbe", "100 Gigabit Ethernet, 100 Gb/s, ~5 µs kernel TCP latency", 5e-6, 100.0},
    {"fdr",
     "InfiniBand FDR 4x: 56 Gb/s signalling, 14.0625 Gbaud x 4 lanes x 64/66 = 54.55 Gb/s "
     "data, ~1 µs latency",
     1.0e-6, 14.0625 * 4 * 64 / 66},
    {"edr", "InfiniBand EDR 4x: 25.78125 Gbaud x 4 lanes x 64/66 = 100 Gb/s data, ~0.8 µs latency",
     0.8e-6, 25.78125 * 4 * 64 / 66},
    {"hdr", "InfiniBand HDR 4x: 200 Gb/s data, ~0.7 µs latency", 0.7e-6, 200.0},
    {"ndr", "InfiniBand NDR 4x: 400 Gb/s data, ~0.6 µs latency", 0.6e-6, 400.0},
};

// A parameter of a models.csv row. collbench-fit writes every α, β and γ a
// network model is built from (0 included), so an empty one is a damaged or
// hand-edited file, not a zero.
double parse_field(const CsvTable& table, const std::vector<std::string>& row,
                   std::string_view column, const std::string& path, std::size_t row_number) {
  const std::string& text = row[static_cast<std::size_t>(table.column(column))];
  double value = 0;
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (!text.empty() && ec == std::errc() && ptr == end && std::isfinite(value) && value >= 0) {
    return value;
  }
  throw std::runtime_error(fmt::format("{}: data row {}: {} {}; expected a finite number >= 0",
                                       path, row_number, column,
                                       text.empty() ? "is empty" : fmt::format("is '{}'", text)));
}

// The p2p fit of placement intra of a transport and provider, if the file
// has one (a two-level fit): the level inside a node, for --ppn.
std::optional<NetworkModel> intra_link(const CsvTable& table, const std::string& path,
                                       const std::string& transport, const std::string& provider) {
  const auto field = [&](const std::vector<std::string>& row, std::string_view column) {
    return row[static_cast<std::size_t>(table.column(column))];
  };
  for (std::size_t r = 0; r < table.rows.size(); ++r) {
    const std::vector<std::string>& row = table.rows[r];
    if (field(row, "model") != "hockney" || field(row, "placement") != "intra" ||
        field(row, "transport") != transport || field(row, "provider") != provider) {
      continue;
    }
    NetworkModel intra;
    intra.alpha = parse_field(table, row, "alpha_us", path, r + 1) * 1e-6;
    intra.beta = parse_field(table, row, "beta_ns_per_byte", path, r + 1) * 1e-9;
    if (intra.beta > 0) return intra;
  }
  return std::nullopt;
}

}  // namespace

std::span<const NetworkPreset> network_presets() { return kPresets; }

std::string network_preset_names() {
  std::vector<std::string> names;
  for (const NetworkPreset& preset : kPresets) names.emplace_back(preset.name);
  return fmt::to_string(fmt::join(names, ", "));
}

Network preset_network(std::string_view name, double gamma_seconds_per_byte) {
  for (const NetworkPreset& preset : kPresets) {
    if (preset.name != name) continue;
    Network network;
    network.name = std::string(preset.name);
    network.description = std::string(preset.description);
    network.params.alpha = preset.alpha_seconds;
    network.params.beta = 8.0 / (preset.data_gbit_per_second * 1e9);
    network.params.gamma = gamma_seconds_per_byte;
    // The default arrives as ns·1e-9 from the command line: compare loosely.
    network.gamma_origin =
        std::abs(gamma_seconds_per_byte - kDefaultGammaSecondsPerByte) <
                1e-6 * kDefaultGammaSecondsPerByte
            ? "assumed 0.1 ns/B (10 GB/s of operand: a streaming f32 sum on one server core)"
            : fmt::format("given: {:.4g} ns/B", gamma_seconds_per_byte * 1e9);
    return network;
  }
  throw std::invalid_argument(
      fmt::format("unknown network '{}'; presets: {}", name, network_preset_names()));
}

Network network_from_models_csv(const std::string& path, const NetworkSelection& selection,
                                double fallback_gamma) {
  const CsvTable table = read_csv_file(path);
  if (table.header.empty() || (table.header.size() == 1 && table.header[0].empty())) {
    throw std::runtime_error(
        fmt::format("{}: empty file; expected collbench-fit's models.csv", path));
  }
  std::vector<std::string> missing;
  // `family` is optional: a models.csv written before collbench-fit fitted
  // other collectives has none, and its every fit is an allreduce's.
  for (const char* column : {"model", "transport", "provider", "placement", "dtype", "op",
                             "algorithm", "alpha_us", "beta_ns_per_byte", "gamma_ns_per_byte"}) {
    if (table.column(column) < 0) missing.emplace_back(column);
  }
  if (!missing.empty()) {
    throw std::runtime_error(
        fmt::format("{}: missing column{} {}; expected collbench-fit's models.csv", path,
                    missing.size() > 1 ? "s" : "", fmt::to_string(fmt::join(missing, ", "))));
  }
  const auto field = [&](const std::vector<std::string>& row, std::string_view column) {
    return row[static_cast<std::size_t>(table.column(column))];
  };
  const auto matches = [&](const std::vector<std::string>& row) {
    return (selection.transport.empty() || field(row, "transport") == selection.transport) &&
           (selection.provider.empty() || field(row, "provider") == selection.provider);
  };

  // The p2p link: the preferred placement when there is one, else any.
  std::vector<std::size_t> links;
  for (std::size_t r = 0; r < table.rows.size(); ++r) {
    if (field(table.rows[r], "model") == "hockney" && matches(table.rows[r])) links.push_back(r);
  }
  if (links.empty()) {
    throw std::runtime_error(fmt::format(
        "{}: no hockney row (p2p fit) for transport='{}' provider='{}'; run collbench-fit on a "
        "CSV with p2p ping-pong rows, or choose --transport/--provider from the file",
        path, selection.transport, selection.provider));
  }
  std::vector<std::size_t> preferred;
  for (std::size_t r : links) {
    if (field(table.rows[r], "placement") == selection.placement) preferred.push_back(r);
  }
  if (!preferred.empty()) links = preferred;
  if (links.size() > 1) {
    std::vector<std::string> choices;
    for (std::size_t r : links) {
      choices.push_back(
          fmt::format("transport={} provider='{}' placement={}", field(table.rows[r], "transport"),
                      field(table.rows[r], "provider"), field(table.rows[r], "placement")));
    }
    throw std::runtime_error(
        fmt::format("{}: {} p2p fits match; choose one with --transport, "
                    "--provider, --placement: {}",
                    path, links.size(), fmt::to_string(fmt::join(choices, "; "))));
  }
  const std::vector<std::string>& link = table.rows[links.front()];
  Network network;
  // fmt, not operator+: GCC 12 warns falsely (-Wrestrict) on "/" + std::string.
  const std::string& provider_name = field(link, "provider");
  network.name =
      fmt::format("{} {}{}{}/{}", path, field(link, "transport"), provider_name.empty() ? "" : "/",
                  provider_name, field(link, "placement"));
  network.params.alpha = parse_field(table, link, "alpha_us", path, links.front() + 1) * 1e-6;
  network.params.beta =
      parse_field(table, link, "beta_ns_per_byte", path, links.front() + 1) * 1e-9;
  if (network.params.beta <= 0) {
    throw std::runtime_error(
        fmt::format("{}: data row {}: the p2p fit has β = 0; a network "
                    "model needs a bandwidth",
                    path, links.front() + 1));
  }
  network.description = fmt::format("measured p2p: α = {:.3f} µs, {:.3f} GB/s",
                                    network.params.alpha * 1e6, 1e-9 / network.params.beta);
  network.intra_fit = intra_link(table, path, field(link, "transport"), field(link, "provider"));

  // γ: the reduce fit of the dtype, sum preferred.
  std::optional<std::size_t> gamma_row;
  for (std::size_t r = 0; r < table.rows.size(); ++r) {
    const auto& row = table.rows[r];
    if (field(row, "model") != "reduce_gamma" || field(row, "dtype") != selection.dtype) continue;
    if (!gamma_row || field(row, "op") == "sum") gamma_row = r;
  }
  if (gamma_row) {
    network.params.gamma =
        parse_field(table, table.rows[*gamma_row], "gamma_ns_per_byte", path, *gamma_row + 1) *
        1e-9;
    network.gamma_origin =
        fmt::format("measured local reduce {} {}: {:.4g} ns/B", selection.dtype,
                    field(table.rows[*gamma_row], "op"), network.params.gamma * 1e9);
  } else {
    network.params.gamma = fallback_gamma;
    network.gamma_origin = fmt::format("no reduce_gamma row for {} in {}; assumed {:.4g} ns/B",
                                       selection.dtype, path, fallback_gamma * 1e9);
  }

  if (selection.per_algorithm_fits) {
    const std::string transport = field(link, "transport"), provider = field(link, "provider");
    std::map<std::string, std::string> op_used;
    const bool has_family = table.column("family") >= 0;
    for (std::size_t r = 0; r < table.rows.size(); ++r) {
      const auto& row = table.rows[r];
      // The gradient exchange is allreduces: the other collectives' fits
      // (the same algorithm names) are not its.
      const bool allreduce = !has_family || field(row, "family") == kAllreduce;
      if (field(row, "model") != "top_down" || !allreduce || field(row, "transport") != transport ||
          field(row, "provider") != provider || field(row, "dtype") != selection.dtype) {
        continue;
      }
      const std::string& placement = field(row, "placement");
      if (!placement.empty() && placement != field(link, "placement")) continue;
      const std::string algorithm = field(row, "algorithm");
      if (op_used.contains(algorithm) && op_used[algorithm] == "sum") continue;
      op_used[algorithm] = field(row, "op");
      network.per_algorithm[algorithm] = {
          parse_field(table, row, "alpha_us", path, r + 1) * 1e-6,
          parse_field(table, row, "beta_ns_per_byte", path, r + 1) * 1e-9,
          parse_field(table, row, "gamma_ns_per_byte", path, r + 1) * 1e-9};
    }
    if (network.per_algorithm.empty()) {
      throw std::runtime_error(fmt::format(
          "{}: --per-algorithm-fits given but no top_down rows for transport={} provider='{}' "
          "dtype={}",
          path, transport, provider, selection.dtype));
    }
  }
  return network;
}

void set_fat_tree(Network& network, std::string_view spec) {
  const auto colon = spec.find(':');
  const auto whole = [](std::string_view text, int& value) {
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
    return error == std::errc() && end == text.data() + text.size() && value >= 1;
  };
  if (colon == std::string_view::npos || !whole(spec.substr(0, colon), network.switch_nodes) ||
      !whole(spec.substr(colon + 1), network.switch_uplinks)) {
    throw std::invalid_argument(fmt::format(
        "--fat-tree '{}': give K:U, nodes per leaf switch and its up-links, whole numbers >= 1 "
        "(e.g. 8:4, a 2:1 taper)",
        spec));
  }
  network.description += fmt::format("; fat-tree of {} nodes per leaf switch, {} up-links",
                                     network.switch_nodes, network.switch_uplinks);
}

void set_ranks_per_node(Network& network, int ppn, std::optional<NetworkModel> intra) {
  network.ppn = ppn;
  if (ppn == 1) return;
  const bool given = intra.has_value();
  if (!given) intra = network.intra_fit;
  if (!intra) {
    throw std::invalid_argument(fmt::format(
        "--ppn {} needs the level inside a node: give --intra-latency-us and "
        "--intra-bandwidth-gbps, or a --network-from models.csv with a p2p fit of placement "
        "intra",
        ppn));
  }
  network.intra = *intra;
  network.description += fmt::format(
      "; {} ranks per node, inside a node α = {:.4g} µs, {:.4g} GB/s ({})", ppn,
      network.intra.alpha * 1e6, 1e-9 / network.intra.beta, given ? "given" : "its intra p2p fit");
}

}  // namespace collbench
