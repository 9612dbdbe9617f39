#include "sim_options.h"

#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cctype>
#include <stdexcept>
#include <string>
#include <utility>

#include "cli_checks.h"
#include "metadata.h"

#ifdef COLLBENCH_HAVE_SIMGRID
#include "collbench/models/predict.h"
#endif

namespace collbench::harness {

void add_sim_options(CLI::App& app, SimFlags& flags) {
  const auto add = [&](const char* name, std::string& value, const char* type,
                       const std::string& help) {
    return app.add_option(name, value, help)
        ->type_name(type)
        ->each([&flags, name](const std::string&) { flags.given.emplace_back(name); });
  };
  add("--platform", flags.platform, "SPEC",
      "--transport sim: star (every node on one switch; default), star:N, fat-tree:L;D..;U..;C.. "
      "(SimGrid's string, so a 2:1 taper can be written), torus:AxB, torus:AxBxC, "
      "dragonfly:G,g;C,c;R,r;N (SimGrid's string), or a SimGrid platform XML file (ranks on its "
      "hosts in the order it declares them). --ranks must equal its nodes x --ppn");
  app.add_option("--ppn", flags.ppn,
                 "--transport sim: ranks per node, each behind an intra-node link (default: 1)")
      ->type_name("K")
      ->check(CLI::Range(1, 1 << 20))
      ->each([&flags](const std::string&) { flags.given.emplace_back("--ppn"); });
  add("--link-latency", flags.link_latency, "TIME",
      "--transport sim: latency of each network link, with its unit: s, ms, us, ns (default: "
      "1us). The CSV records the end-to-end α a ping-pong between two nodes sees");
  add("--link-bandwidth", flags.link_bandwidth, "RATE",
      "--transport sim: bandwidth of each network link: Bps, kBps, MBps, GBps (bytes) or bps, "
      "kbps, Mbps, Gbps (bits), SI (default: 10GBps)");
  add("--intra-latency", flags.intra_latency, "TIME",
      "--transport sim, --ppn > 1: latency of a rank's link inside its node (default: 100ns)");
  add("--intra-bandwidth", flags.intra_bandwidth, "RATE",
      "--transport sim, --ppn > 1: bandwidth of that link (default: 50GBps)");
  add("--gamma", flags.gamma, "RATE",
      "--transport sim: reduction speed, bytes of one operand reduced per second, charged as "
      "simulated time (n·γ), or 0 (default: 10GBps, collbench-predict's)");
  add("--memory-rate", flags.memory_rate, "RATE",
      "--transport sim: speed of the algorithms' local copies, or 0: free (default: 0)");
  add("--overhead", flags.overhead, "TIME",
      "--transport sim: LogGP's o, CPU time per message on the sender and on the receiver "
      "(default: 0s)");
  app.add_flag("--no-payload", flags.no_payload,
               "--transport sim: size-only mode: the same messages and simulated times, no byte "
               "copied or reduced (--check refused), for p·n beyond this machine's memory")
      ->each([&flags](const std::string&) { flags.given.emplace_back("--no-payload"); });
  add("--calibration", flags.calibration, "FILE",
      "--transport sim, --platform star, fat-tree or torus, --ppn 1: α and β of the network "
      "from a collbench-fit models.csv (its p2p ping-pong fit, placement inter), γ from its "
      "reduce fit of the run's --dtype; they replace --link-latency, --link-bandwidth and "
      "--gamma. The end-to-end α less 2o is split evenly over the links of the route between "
      "the first two nodes (2 on a star, 2 per fat-tree level climbed, 1 on a torus), so that "
      "their ping-pong measures it; farther nodes cross more links")
      ->check(cli::path());
  add("--compute-from", flags.compute_from, "FILE",
      "--transport sim, --families train: each rank's forward and backward pass per GEMM layer "
      "take the time this machine measured (a harness CSV with gemm rows, the file "
      "collbench-predict --compute-from reads), at the per-rank batch")
      ->check(cli::path());
  add("--flops", flags.flops, "RATE",
      "--transport sim, --families train: instead, every GEMM runs at this assumed rate, FLOP/s "
      "per rank with an SI prefix (10T, 500G); the CSV's sim_compute column says which");
  app.add_option("--global-batch", flags.global_batch,
                 "--transport sim, --families train: strong scaling, B samples per iteration "
                 "over all ranks, B/ranks each (may be fractional; below 1, one sample's "
                 "compute); default: --train-batch per rank (weak scaling)")
      ->type_name("B")
      ->check(CLI::Range(1, 1 << 30))
      ->each([&flags](const std::string&) { flags.given.emplace_back("--global-batch"); });
  app.add_flag("--no-overlap", flags.no_overlap,
               "--transport sim, --families train: no bucket is exchanged before the whole "
               "backward pass has ended")
      ->each([&flags](const std::string&) { flags.given.emplace_back("--no-overlap"); });
  app.add_flag("--reuse-buckets", flags.reuse_buckets,
               "--transport sim, --families train: a bucket of a size already exchanged in the "
               "iteration takes that exchange's simulated time on each rank instead of being "
               "simulated again (exact when the ranks start it together on an idle network, "
               "as one bucket at a time does; --check refused); the CSV's sim_compute says how "
               "many buckets reused a time")
      ->each([&flags](const std::string&) { flags.given.emplace_back("--reuse-buckets"); });
  app.add_option("--simgrid-arg", flags.simgrid_args,
                 "--transport sim: an argument for SimGrid itself, e.g. "
                 "--simgrid-arg=--log=root.thresh:info (repeatable; its log is silent otherwise). "
                 "Tried first in a child process: one SimGrid dies on is refused")
      ->type_name("ARG")
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll)
      ->each([&flags](const std::string&) { flags.given.emplace_back("--simgrid-arg"); });
}

#ifdef COLLBENCH_HAVE_SIMGRID
namespace {

// Why a time (seconds) or a rate (bytes per second; 0, nothing charged,
// where the parameter allows it) lies outside the range of a link that the
// tools accept (predict.h), or "" when it does not.
std::string beyond_latency(double seconds) {
  if (seconds <= kMaxLinkLatencySeconds) return {};
  return fmt::format("{:.4g} s is beyond the {:g} s a link may take", seconds,
                     kMaxLinkLatencySeconds);
}

std::string beyond_rate(double bytes_per_second) {
  const double lowest = kMinLinkBitsPerSecond / 8, highest = kMaxLinkBitsPerSecond / 8;
  if (bytes_per_second == 0 || (bytes_per_second >= lowest && bytes_per_second <= highest)) {
    return {};
  }
  return fmt::format("{:.4g} B/s is outside {:g} to {:g} B/s ({:g} to {:g} bit/s)",
                     bytes_per_second, lowest, highest, kMinLinkBitsPerSecond,
                     kMaxLinkBitsPerSecond);
}

// Parses one flag's value, naming the flag when it is bad or out of range.
template <typename Parse, typename Beyond>
double parsed(Parse parse, Beyond beyond, const char* flag, const std::string& value) {
  try {
    const double parsed_value = parse(value);
    if (const std::string why = beyond(parsed_value); !why.empty()) {
      throw std::invalid_argument(why);
    }
    return parsed_value;
  } catch (const std::invalid_argument& bad) {
    throw std::invalid_argument(fmt::format("{} {}: {}", flag, value, bad.what()));
  }
}

// SimGrid reads its own options only (anything else it ignores, and
// --help or --version end the process with status 0 and no output), and
// dies on a --cfg without its value: so an argument must be one of the two
// whole forms the help names. A control character (a newline) in it would
// break the one-line message that names it, and no setting has one.
void check_simgrid_arg(const std::string& arg) {
  if (std::any_of(arg.begin(), arg.end(), [](unsigned char c) { return std::iscntrl(c); })) {
    throw std::invalid_argument(fmt::format(
        "--simgrid-arg {:?}: a control character in it; give SimGrid's --cfg=NAME:VALUE or "
        "--log=SETTING on one line",
        arg));
  }
  const std::size_t colon = arg.find(':');
  const bool cfg = arg.starts_with("--cfg=") && colon != std::string::npos && colon > 6 &&
                   colon + 1 < arg.size();
  const bool log = arg.starts_with("--log=") && arg.size() > 6;
  if (!cfg && !log) {
    throw std::invalid_argument(
        fmt::format("--simgrid-arg={}: give SimGrid's --cfg=NAME:VALUE or --log=SETTING", arg));
  }
}

// α, β, γ from collbench-fit's models.csv. The fit's α is end to end: the
// route between two nodes (first_route_links of them, one latency each)
// plus 2o, so each link gets (α − 2o) / links.
void calibrate(const SimFlags& flags, DType dtype, SimParams& params, std::string& note) {
  const int links = first_route_links(params);
  if (links == 0) {
    throw std::invalid_argument(fmt::format(
        "--calibration {}: converting the fit's end-to-end α into per-link latency is defined for "
        "--platform star, fat-tree or torus with --ppn 1; for --platform {}{} give "
        "--link-latency and --link-bandwidth",
        flags.calibration, params.platform,
        params.ppn != 1 ? fmt::format(" --ppn {}", params.ppn) : ""));
  }
  NetworkSelection selection;
  selection.dtype = std::string(to_string(dtype));
  Network network;
  try {
    network = network_from_models_csv(flags.calibration, selection, kDefaultGammaSecondsPerByte);
  } catch (const std::exception& failure) {
    throw std::invalid_argument(fmt::format("--calibration: {}", failure.what()));
  }
  const double route_latency = network.params.alpha - 2 * params.overhead;
  if (route_latency < 0 || network.params.beta <= 0) {
    throw std::invalid_argument(fmt::format(
        "--calibration {}: its α ({:.3g} us) is below 2o ({:.3g} us) or its β is not positive",
        flags.calibration, network.params.alpha * 1e6, 2 * params.overhead * 1e6));
  }
  params.link_latency = route_latency / links;
  params.link_bandwidth = 1 / network.params.beta;
  params.gamma_rate = network.params.gamma > 0 ? 1 / network.params.gamma : 0;
  for (const auto& [what, why] : {std::pair{"α per link", beyond_latency(params.link_latency)},
                                  std::pair{"1/β", beyond_rate(params.link_bandwidth)},
                                  std::pair{"1/γ", beyond_rate(params.gamma_rate)}}) {
    if (!why.empty()) {
      throw std::invalid_argument(
          fmt::format("--calibration {}: its {}: {}", flags.calibration, what, why));
    }
  }
  note = fmt::format(
      "calibrated from {} ({}): α {:.4g} us end to end = {} links of {:.4g} us + 2o; β {:.4g} "
      "GB/s; γ {:.4g} GB/s ({})",
      flags.calibration, network.description, network.params.alpha * 1e6, links,
      params.link_latency * 1e6, params.link_bandwidth / 1e9,
      params.gamma_rate > 0 ? params.gamma_rate / 1e9 : 0.0, network.gamma_origin);
}

}  // namespace

void describe_simulation(const RankGroup& group, const SimFlags& flags, RunMetadata& metadata) {
  const auto* simulation = dynamic_cast<const SimRankGroup*>(&group);
  if (simulation == nullptr) return;
  // As the group was built (sim_params, once).
  const SimParams& params = simulation->params();
  const EndToEndLinks links = simulation->end_to_end();
  RunMetadata::Simulation& row = metadata.simulation;
  row.platform = params.platform;
  row.network = std::string(SimRankGroup::kNetworkModel);
  row.payload = params.payload ? "real" : "size-only";
  row.alpha_us = fmt::format("{:.6g}", links.alpha * 1e6);
  row.beta_GBps = links.beta > 0 ? fmt::format("{:.6g}", 1 / links.beta / 1e9) : "";
  row.gamma_GBps = fmt::format("{:.6g}", params.gamma_rate / 1e9);
  row.overhead_us = fmt::format("{:.6g}", params.overhead * 1e6);
  row.calibration = flags.calibration.empty() ? "as given" : flags.calibration;
  metadata.ranks_per_node = params.ppn;
  metadata.nodes = group.size() / params.ppn;
  metadata.rank_nodes.resize(static_cast<std::size_t>(group.size()));
  for (int rank = 0; rank < group.size(); ++rank) {
    metadata.rank_nodes[static_cast<std::size_t>(rank)] = rank / params.ppn;
  }
}

SimParams sim_params(const SimFlags& flags, int ranks, DType dtype, std::string& note) {
  SimParams params;
  params.ranks = ranks;
  params.platform = flags.platform;
  params.ppn = flags.ppn;
  params.link_latency = parsed(parse_latency, beyond_latency, "--link-latency", flags.link_latency);
  params.link_bandwidth =
      parsed(parse_bandwidth, beyond_rate, "--link-bandwidth", flags.link_bandwidth);
  params.intra_latency =
      parsed(parse_latency, beyond_latency, "--intra-latency", flags.intra_latency);
  params.intra_bandwidth =
      parsed(parse_bandwidth, beyond_rate, "--intra-bandwidth", flags.intra_bandwidth);
  params.gamma_rate = parsed(parse_rate_or_zero, beyond_rate, "--gamma", flags.gamma);
  params.memory_rate = parsed(parse_rate_or_zero, beyond_rate, "--memory-rate", flags.memory_rate);
  params.overhead = parsed(parse_latency, beyond_latency, "--overhead", flags.overhead);
  params.payload = !flags.no_payload;
  for (const std::string& arg : flags.simgrid_args) check_simgrid_arg(arg);
  params.simgrid_args = flags.simgrid_args;
  note = "links, γ and o as given";
  if (!flags.calibration.empty()) calibrate(flags, dtype, params, note);
  return params;
}
#else
void describe_simulation(const RankGroup&, const SimFlags&, RunMetadata&) {}
#endif

}  // namespace collbench::harness
