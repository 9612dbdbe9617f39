// collbench-predict: how far synchronous data-parallel SGD scales on a
// measured or preset network, per allreduce algorithm (Keuper & Pfreundt
// 2016; the model is described in include/collbench/models/predict.h).
//
// Exit status: 0 on success, 2 on any error, with one line on stderr and no
// partial output file.
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cli_checks.h"
#include "collbench/catalog/catalog.h"
#include "collbench/catalog/sizes.h"
#include "collbench/collectives/collective.h"
#include "collbench/models/predict.h"
#include "plot_runner.h"
#include "replace_on_commit.h"
#include "standard_output.h"

namespace {

// Every p from 1 is predicted, each cost walking its p ranks' messages, so
// the time grows as p²: 4096 nodes with every algorithm took 46 s of CPU
// here (2026-12-06), 8192 about three minutes.
constexpr int kMaxNodes = 8192;
// On a fat-tree or with ranks per node there is no shortcut past the walk,
// so each p costs p² and the curve p³: ps_sharded to 1024 took 23 CPU s
// here (2026-12-06, loaded), 8192 would take hours.
constexpr int kMaxWalkedNodes = 1024;

// The physical inputs, bounded far beyond any real machine and far inside
// double's range, so that T_iter, S(p) and β = 8 / rate stay finite (an
// unbounded --bandwidth-gbps 1e-320 made β inf, 1e308 made 1/β inf).
constexpr double kMinSeconds = 1e-9;  // compute of one iteration: a ns ...
constexpr double kMaxSeconds = 1e9;   // ... to 30 years
constexpr double kMinFlops = collbench::kMinFlopsPerSecond;
constexpr double kMaxFlops = collbench::kMaxFlopsPerSecond;
constexpr double kMaxGammaNs = 1e6;     // ns per byte reduced: 1 kB/s
constexpr double kMinLatencyUs = 1e-6;  // α: a ps to 1000 s
constexpr double kMaxLatencyUs = collbench::kMaxLinkLatencySeconds * 1e6;
constexpr double kMinGbps = collbench::kMinLinkBitsPerSecond / 1e9;
constexpr double kMaxGbps = collbench::kMaxLinkBitsPerSecond / 1e9;

constexpr int kErrorStatus = 2;

// The command line as given; 0 in a number means "not given".
struct Options {
  std::string preset;
  std::string model_name;
  int batch = 0;
  double compute_seconds = 0;
  double flops_per_second = 0;
  std::string compute_from;
  std::string network_name = "fdr";
  std::string network_from;
  collbench::NetworkSelection selection;
  double gamma_ns = collbench::kDefaultGammaSecondsPerByte * 1e9;
  double latency_us = 0;
  double bandwidth_gbps = 0;
  std::string fat_tree;
  bool fat_tree_given = false;  // --fat-tree appeared, even with an empty value
  int ppn = 1;
  double intra_latency_us = 0;
  double intra_bandwidth_gbps = 0;
  std::string algorithm_list;
  bool algorithms_given = false;  // --algorithms appeared, even with an empty value
  bool exchange_given = false;
  int max_nodes = 0;
  std::string dtype = "f32";
  std::string exchange = "whole";
  std::string bucket_cap = "25MiB";
  double overlap_fraction = -1;  // below 0: not given
  bool overlap_buckets = false;
  bool weak = false;
  std::string out_dir;
  bool plot = false;
  std::string plot_script = collbench::default_plot_script();
  std::string python = collbench::default_python();
};

// What to predict: the scenarios, the algorithms and the largest p.
struct Plan {
  std::vector<collbench::ScalingScenario> scenarios;
  std::vector<std::string> algorithms;
  int max_nodes = 0;
};

std::vector<std::string> split(const std::string& list) {
  std::vector<std::string> items;
  std::size_t start = 0;
  while (start <= list.size()) {
    const std::size_t comma = std::min(list.find(',', start), list.size());
    if (comma > start) items.push_back(list.substr(start, comma - start));
    start = comma + 1;
  }
  return items;
}

void write_text(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  out.close();
  if (!out) throw std::runtime_error(fmt::format("cannot write {}", path));
}

// The add_*_options functions are called in the order --help lists them.

void add_workload_options(CLI::App& app, Options& options) {
  app.add_option("--preset", options.preset,
                 "keuper2016: Keuper & Pfreundt (2016) Table I (AlexNet B=256 on CPU/K80/TitanX/"
                 "KNL, GoogLeNet B=32 on CPU/K80/KNL) on FDR, ps_central vs tree vs ring; with "
                 "--compute-from also both models with this machine's measured compute; with "
                 "--out-dir also writes README.md with the conclusion")
      ->check(CLI::IsMember({"keuper2016"}));
  app.add_option("--model", options.model_name, "catalog model (collbench-catalog list)");
  app.add_option("--batch", options.batch,
                 "global batch B (samples per iteration over all nodes); per node with --weak")
      ->check(collbench::cli::whole_number(1, INT32_MAX, "samples"));
  auto* compute_opt =
      app.add_option("--compute-seconds", options.compute_seconds,
                     "seconds per iteration of B samples on one node")
          ->check(collbench::cli::number_at_least(kMinSeconds, false, "seconds", kMaxSeconds));
  auto* flops_opt =
      app.add_option("--flops-per-second", options.flops_per_second,
                     "sustained FLOP/s of one node; compute = 3 x forward FLOPs x "
                     "B / this")
          ->check(collbench::cli::number_at_least(kMinFlops, false, "FLOP/s", kMaxFlops));
  compute_opt->excludes(flops_opt);
  auto* measured_opt =
      app.add_option(
             "--compute-from", options.compute_from,
             "the harness CSV with gemm rows (results/README.md): compute is each GEMM layer's "
             "measured forward and backward time at the per-node batch, B/p (interpolated "
             "log-log between measured batches, so B/p need not be whole; refused below the "
             "smallest measured batch; p > B: one sample's time) or --batch with --weak; with "
             "--overlap-buckets a bucket is ready after its layers' measured backward; "
             "keuper2016: adds the paper's models with this machine's compute beside Table I "
             "(measured, and measured-linear: its time at B divided by p)")
          ->check(CLI::ExistingFile);
  measured_opt->excludes(compute_opt);
  measured_opt->excludes(flops_opt);
}

void add_network_options(CLI::App& app, Options& options) {
  auto* network_opt =
      app.add_option("--network", options.network_name,
                     fmt::format("network preset: {}", collbench::network_preset_names()))
          ->capture_default_str();
  auto* from_opt = app.add_option("--network-from", options.network_from,
                                  "collbench-fit's models.csv: α, β from its p2p (hockney) fit, "
                                  "γ from its reduce fit")
                       ->check(CLI::ExistingFile);
  network_opt->excludes(from_opt);
  // These choose among models.csv's fits: without it they would be ignored.
  app.add_option("--transport", options.selection.transport,
                 "with --network-from: the transport of the p2p fit (default: the only one)")
      ->needs(from_opt);
  app.add_option("--provider", options.selection.provider, "with --network-from: the provider")
      ->needs(from_opt);
  app.add_option("--placement", options.selection.placement,
                 "with --network-from: preferred p2p placement (inter or intra)")
      ->capture_default_str()
      ->check(CLI::IsMember({"inter", "intra"}))
      ->needs(from_opt);
  app.add_flag("--per-algorithm-fits", options.selection.per_algorithm_fits,
               "with --network-from: each algorithm uses its own top-down fit (allows mpi)")
      ->needs(from_opt);
  app.add_option("--gamma", options.gamma_ns,
                 "γ in ns per byte reduced, for presets (default: 0.1, i.e. 10 GB/s, a streaming "
                 "f32 sum on one core) and when models.csv has no reduce fit")
      ->check(collbench::cli::number_at_least(0, false, "ns per byte", kMaxGammaNs));
  app.add_option("--latency-us", options.latency_us, "override α (µs per message)")
      ->check(collbench::cli::number_at_least(kMinLatencyUs, false, "µs", kMaxLatencyUs));
  app.add_option("--bandwidth-gbps", options.bandwidth_gbps,
                 "override the data rate (Gbit/s; β = 8 / rate)")
      ->check(collbench::cli::number_at_least(kMinGbps, false, "Gbit/s", kMaxGbps));
  app.add_option("--fat-tree", options.fat_tree,
                 "K:U, a two-level fat-tree: leaf switches of K nodes (consecutive nodes), each "
                 "with U up-links at the data rate, over which the bytes leaving a leaf switch "
                 "spread; taper K:U. The exchanges are priced by the algorithms' costs on it "
                 "(default: a flat network)");
  app.add_option("--ppn", options.ppn,
                 "K ranks per node: p then counts ranks, K to a node (p < K: one node; other p "
                 "not multiples of K are left out), and each exchange is priced by its "
                 "algorithm's cost on two levels, the node's own links between its ranks "
                 "(--intra-*, or the intra p2p fit of --network-from) and the network between "
                 "nodes (default: 1, a node per rank)")
      ->check(collbench::cli::whole_number(1, kMaxNodes, "ranks"));
  auto* intra_latency_opt =
      app.add_option("--intra-latency-us", options.intra_latency_us,
                     "with --ppn: α between ranks of a node (µs per message)")
          ->check(collbench::cli::number_at_least(kMinLatencyUs, false, "µs", kMaxLatencyUs));
  auto* intra_bandwidth_opt =
      app.add_option("--intra-bandwidth-gbps", options.intra_bandwidth_gbps,
                     "with --ppn: data rate between ranks of a node (Gbit/s)")
          ->check(collbench::cli::number_at_least(kMinGbps, false, "Gbit/s", kMaxGbps));
  intra_latency_opt->needs(intra_bandwidth_opt);
  intra_bandwidth_opt->needs(intra_latency_opt);
}

void add_exchange_options(CLI::App& app, Options& options) {
  app.add_option("--algorithms", options.algorithm_list,
                 "comma-separated allreduce algorithms: " +
                     collbench::find_collective("allreduce")->algorithm_names() +
                     ", lower_bound (default: every algorithm with a cost model of its own; "
                     "keuper2016: ps_central,tree,ring)");
  app.add_option("--max-nodes", options.max_nodes,
                 fmt::format("largest p (default 128; keuper2016: 256; at most {}, {} with "
                             "--fat-tree or --ppn above 1)",
                             kMaxNodes, kMaxWalkedNodes))
      ->check(collbench::cli::whole_number(1, kMaxNodes, "nodes"));
  app.add_option("--dtype", options.dtype, "gradient element type")
      ->capture_default_str()
      ->check(CLI::IsMember({"f32", "f64", "f16", "bf16"}));
  app.add_option("--exchange", options.exchange,
                 "whole: one allreduce of the whole gradient; ddp: one per PyTorch DDP bucket; "
                 "zero2: DeepSpeed ZeRO-2's reduce_scatter buckets (500M elements), then the "
                 "updated parameters' allgather, which nothing hides (each collective priced "
                 "by its algorithm of the --algorithms name)")
      ->capture_default_str()
      ->check(CLI::IsMember({"whole", "ddp", "zero2"}));
  app.add_option("--bucket-cap", options.bucket_cap,
                 "DDP bucket cap: bytes, or with a unit (25MiB, 50MB)")
      ->capture_default_str();
  auto* fraction_opt =
      app.add_option("--overlap-fraction", options.overlap_fraction,
                     "fraction of the exchange hidden behind backprop (at most the backward "
                     "time: 2/3 of linear compute, the measured backward with --compute-from); "
                     "default 0")
          ->check(collbench::cli::number_at_least(0, false, "", 1));
  auto* buckets_opt =
      app.add_flag("--overlap-buckets", options.overlap_buckets,
                   "overlap bucket by bucket as DDP does (implies --exchange ddp unless "
                   "--exchange zero2; refused with --exchange whole)");
  fraction_opt->excludes(buckets_opt);
  app.add_flag("--weak", options.weak, "weak scaling: B/p fixed at --batch samples per node");
}

void add_output_options(CLI::App& app, Options& options) {
  app.add_option("--out-dir", options.out_dir,
                 "write scaling.csv here (keuper2016: also README.md); default: report only")
      ->check(collbench::cli::path());
  app.add_flag("--plot", options.plot,
               "draw speedup/efficiency PNGs into --out-dir via scripts/plot.py");
  app.add_option("--plot-script", options.plot_script, "scripts/plot.py to run")
      ->capture_default_str()
      ->check(CLI::ExistingFile);
  app.add_option("--python", options.python,
                 "Python with matplotlib (a name without '/' is looked up in PATH)")
      ->capture_default_str()
      ->check(collbench::cli::path());
}

// Refuses, before anything is computed, outputs that could not be written.
void check_outputs(const Options& options) {
  if (options.plot && options.out_dir.empty()) {
    throw std::invalid_argument("--plot needs --out-dir");
  }
  if (options.plot) collbench::require_plotting(options.python, options.plot_script);
  if (options.out_dir.empty()) return;
  collbench::require_writable_folder(options.out_dir, "--out-dir");
  std::vector<std::string> inputs;
  for (const std::string& input : {options.network_from, options.compute_from}) {
    if (!input.empty()) inputs.push_back(input);
  }
  collbench::require_outputs_not_inputs(options.out_dir, {"scaling.csv", "README.md"}, inputs,
                                        "--out-dir");
}

// The --network preset or the --network-from fits, with the α and β overrides.
collbench::Network load_network(const Options& options) {
  const double gamma = options.gamma_ns * 1e-9;
  collbench::NetworkSelection selection = options.selection;
  selection.dtype = options.dtype;
  collbench::Network network =
      options.network_from.empty()
          ? collbench::preset_network(options.network_name, gamma)
          : collbench::network_from_models_csv(options.network_from, selection, gamma);
  if (options.latency_us > 0) {
    network.params.alpha = options.latency_us * 1e-6;
    network.description += fmt::format("; α overridden: {} µs", options.latency_us);
  }
  if (options.bandwidth_gbps > 0) {
    network.params.beta = 8.0 / (options.bandwidth_gbps * 1e9);
    network.description += fmt::format("; data rate overridden: {} Gb/s", options.bandwidth_gbps);
  }
  if (options.fat_tree_given) collbench::set_fat_tree(network, options.fat_tree);
  std::optional<collbench::NetworkModel> intra;
  if (options.intra_latency_us > 0) {
    intra = collbench::NetworkModel{options.intra_latency_us * 1e-6,
                                    8.0 / (options.intra_bandwidth_gbps * 1e9), 0};
  }
  collbench::set_ranks_per_node(network, options.ppn, intra);
  return network;
}

// --preset keuper2016: the paper's scenarios, which fix everything a
// scenario is made of, so any option that would change one is refused.
// With --compute-from, the same models and batches with measured compute
// follow Table I's.
Plan plan_preset(const Options& options,
                 const std::optional<collbench::GemmMeasurements>& measured) {
  if (!options.model_name.empty() || options.batch != 0 || options.compute_seconds != 0 ||
      options.flops_per_second != 0 || options.weak || options.overlap_buckets ||
      options.overlap_fraction >= 0 || options.exchange != "whole" || options.dtype != "f32") {
    throw std::invalid_argument(
        "--preset keuper2016 is the paper's setting (model, batch, compute times, f32, one "
        "whole-gradient allreduce, no overlap, strong scaling); do not combine it with "
        "--model, --batch, --compute-seconds, --flops-per-second, --dtype, --exchange, "
        "--overlap-* or --weak (--compute-from adds measured compute beside it)");
  }
  Plan plan;
  plan.scenarios = collbench::keuper2016_scenarios();
  if (measured) {
    for (collbench::ScalingScenario& s : collbench::keuper2016_measured_scenarios(*measured)) {
      plan.scenarios.push_back(std::move(s));
    }
  }
  plan.algorithms = split(options.algorithm_list);
  if (plan.algorithms.empty()) plan.algorithms = collbench::keuper2016_algorithms();
  plan.max_nodes = options.max_nodes == 0 ? 256 : options.max_nodes;
  return plan;
}

// The one scenario of --model, --batch and the compute, exchange and
// overlap options.
collbench::ScalingScenario model_scenario(
    const Options& options, std::uint64_t bucket_cap_bytes,
    const std::optional<collbench::GemmMeasurements>& measured) {
  const collbench::Model& model = collbench::find_model(options.model_name);
  const std::size_t element_bytes = collbench::dtype_element_bytes(options.dtype);
  collbench::ScalingScenario s;
  s.model = model.name;
  s.parameters = static_cast<double>(model.parameters());
  s.dtype = options.dtype;
  s.element_bytes = static_cast<double>(element_bytes);
  s.batch = options.batch;
  if (measured) {
    collbench::use_measured_compute(s, collbench::measured_compute(*measured, model));
  } else if (options.compute_seconds > 0) {
    s.compute_seconds = options.compute_seconds;
  } else {
    s.compute_seconds =
        collbench::compute_seconds_from_flops(model, options.batch, options.flops_per_second);
  }
  s.weak = options.weak;
  if (options.exchange == "zero2") {
    s.messages =
        collbench::zero2_exchange(model, element_bytes, collbench::kZeroReduceBucketElements);
  } else if (options.exchange == "ddp" || options.overlap_buckets) {
    s.messages = collbench::ddp_messages(model, element_bytes, bucket_cap_bytes);
  } else {
    s.messages = collbench::whole_gradient(model, element_bytes);
  }
  if (options.overlap_buckets) {
    s.overlap = collbench::Overlap::buckets;
  } else if (options.overlap_fraction >= 0) {
    s.overlap = collbench::Overlap::fraction;
    s.overlap_fraction = options.overlap_fraction;
  }
  s.label = fmt::format("{} B={}{}", model.name, options.batch, options.weak ? "/node" : "");
  return s;
}

Plan plan_model(const Options& options, std::uint64_t bucket_cap_bytes,
                const std::optional<collbench::GemmMeasurements>& measured) {
  if (options.model_name.empty() || options.batch == 0 ||
      (options.compute_seconds == 0 && options.flops_per_second == 0 && !measured)) {
    throw std::invalid_argument(
        "give --model, --batch and --compute-seconds (or --flops-per-second, or "
        "--compute-from), or --preset keuper2016");
  }
  Plan plan;
  plan.algorithms = split(options.algorithm_list);
  plan.scenarios.push_back(model_scenario(options, bucket_cap_bytes, measured));
  plan.max_nodes = options.max_nodes == 0 ? 128 : options.max_nodes;
  return plan;
}

// Without --algorithms: every algorithm that has a cost model of its own,
// and those the network has a fit of their own for (--per-algorithm-fits).
// Every allreduce algorithm that can price each collective of the
// scenarios: a cost model of its own, or an allreduce fit of its own.
std::vector<std::string> default_algorithms(const Plan& plan, const collbench::Network& network) {
  std::vector<std::string> algorithms;
  for (const collbench::AlgorithmInfo& info : collbench::find_collective("allreduce")->algorithms) {
    bool priced = true;
    for (const collbench::ScalingScenario& scenario : plan.scenarios) {
      for (const collbench::ExchangeMessage& message : scenario.messages) {
        bool own = false;
        const collbench::AlgorithmInfo* algorithm =
            collbench::find_collective(message.collective)->find_algorithm(info.name);
        if (algorithm != nullptr) {
          collbench::model_terms(message.collective, info.name, 2, 1.0, &own);
        }
        // Ranks per node need the cost placed on two levels.
        const bool placed =
            network.ppn == 1 || (algorithm != nullptr && algorithm->placed_cost != nullptr);
        priced = priced && placed &&
                 (own || (message.collective == collbench::kAllreduce &&
                          network.per_algorithm.contains(std::string(info.name))));
      }
    }
    if (priced) algorithms.emplace_back(info.name);
  }
  return algorithms;
}

std::vector<collbench::ScalingResult> predict(const Plan& plan, const collbench::Network& network) {
  std::vector<collbench::ScalingResult> results;
  for (const collbench::ScalingScenario& scenario : plan.scenarios) {
    collbench::ScalingResult result;
    result.scenario = scenario;
    result.rows = collbench::predict_scaling(scenario, network, plan.algorithms, plan.max_nodes);
    result.summary = collbench::summarize_scaling(result.rows);
    results.push_back(std::move(result));
  }
  return results;
}

void print_reports(const std::vector<collbench::ScalingResult>& results,
                   const collbench::Network& network) {
  for (std::size_t i = 0; i < results.size(); ++i) {
    if (i > 0) std::fputs("\n", stdout);
    std::fputs(collbench::format_scaling_report(results[i], network).c_str(), stdout);
  }
}

// scaling.csv, README.md (--preset) and the plots into --out-dir: all of
// this run's, or, when one fails, all of the run before's.
void write_outputs(const Options& options, const std::vector<collbench::ScalingResult>& results,
                   const collbench::Network& network, int argc, char** argv) {
  collbench::ReplaceTogether outputs(options.out_dir);
  const std::string csv_path = outputs.path("scaling.csv");
  const std::string readme = outputs.path("README.md");
  std::vector<std::string> plots;
  try {
    const std::string csv_temp = outputs.add("scaling.csv");
    collbench::write_scaling_csv(csv_temp, results, network);
    if (!options.preset.empty()) {
      std::string command = "collbench-predict";
      for (int i = 1; i < argc; ++i) command += std::string(" ") + argv[i];
      write_text(outputs.add("README.md"),
                 collbench::keuper2016_readme(results, network, command, options.plot));
    }
    if (options.plot) {
      plots = collbench::plot_together(outputs, options.out_dir, options.python,
                                       options.plot_script, {"scaling", csv_temp});
    }
    outputs.commit();
  } catch (const std::runtime_error& e) {
    throw std::runtime_error(
        fmt::format("{}; {} keeps the outputs it had (none replaced)", e.what(), options.out_dir));
  }
  std::printf("\nwrote %s\n", csv_path.c_str());
  if (!options.preset.empty()) std::printf("wrote %s\n", readme.c_str());
  for (const std::string& png : plots) std::printf("wrote %s\n", png.c_str());
}

// Values CLI11 cannot judge alone: an empty list, and options that
// contradict each other.
void check_options(const Options& options) {
  if (options.algorithms_given && split(options.algorithm_list).empty()) {
    throw std::invalid_argument(fmt::format(
        "--algorithms is empty; accepted: comma-separated allreduce algorithms: {}, lower_bound "
        "(leave it out for the default)",
        collbench::find_collective("allreduce")->algorithm_names()));
  }
  if (options.ppn == 1 && options.intra_latency_us > 0) {
    throw std::invalid_argument(
        "--intra-latency-us and --intra-bandwidth-gbps describe the links between ranks of a "
        "node; with --ppn 1 there are none: add --ppn K (K > 1) or leave them out");
  }
  if (options.overlap_buckets && options.exchange_given && options.exchange == "whole") {
    throw std::invalid_argument(
        "--overlap-buckets overlaps DDP's buckets one by one and cannot go with --exchange whole "
        "(one allreduce of the whole gradient); drop one of them");
  }
}

// Everything after parsing; any error is an exception with the one line to show.
void predict_and_report(const Options& options, int argc, char** argv) {
  check_options(options);
  check_outputs(options);
  // Checked even where no DDP bucket uses it: a bad value is a mistake.
  const std::uint64_t bucket_cap_bytes = collbench::parse_byte_size(options.bucket_cap);
  const collbench::Network network = load_network(options);
  std::optional<collbench::GemmMeasurements> measured;
  if (!options.compute_from.empty()) measured = collbench::read_gemm_file(options.compute_from);
  Plan plan = options.preset.empty() ? plan_model(options, bucket_cap_bytes, measured)
                                     : plan_preset(options, measured);
  if (plan.algorithms.empty()) plan.algorithms = default_algorithms(plan, network);
  if (plan.max_nodes > options.ppn && plan.max_nodes % options.ppn != 0) {
    throw std::invalid_argument(
        fmt::format("--max-nodes {} is not a multiple of --ppn {}: its nodes would hold unequal "
                    "ranks",
                    plan.max_nodes, options.ppn));
  }
  const bool walked = options.fat_tree_given || options.ppn > 1;
  if (walked && plan.max_nodes > kMaxWalkedNodes) {
    throw std::invalid_argument(
        fmt::format("--max-nodes {} with --fat-tree or --ppn above 1 is at most {}: every p's "
                    "cost walks its messages there (p^2 each), so the curve would take hours",
                    plan.max_nodes, kMaxWalkedNodes));
  }
  const std::vector<collbench::ScalingResult> results = predict(plan, network);
  print_reports(results, network);
  if (!options.out_dir.empty()) write_outputs(options, results, network, argc, argv);
}

}  // namespace

int main(int argc, char** argv) {
  collbench::cli::fail_on_unwritten_standard_output("collbench-predict");
  CLI::App app{
      "Predicts speedup and efficiency of synchronous data-parallel SGD on p nodes per "
      "allreduce algorithm: T_iter(p) = T_compute(B/p) + T_exchange(p, |W|) (minus what "
      "backprop hides), S(p) = T_iter(1)/T_iter(p).\n"
      "Network from a preset or collbench-fit's models.csv; exchange costs from each "
      "algorithm's own cost terms; compute linear in the batch (a time or FLOP rate) or "
      "measured per GEMM layer (--compute-from).\n"
      "Example: collbench-predict --model alexnet --batch 256 --compute-seconds 2 --network fdr "
      "--algorithms ps_central,tree,ring --max-nodes 128",
      "collbench-predict"};
  Options options;
  add_workload_options(app, options);
  add_network_options(app, options);
  add_exchange_options(app, options);
  add_output_options(app, options);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::fprintf(stderr, "collbench-predict: %s (see --help)\n", e.what());
    return kErrorStatus;
  }
  options.algorithms_given = app.count("--algorithms") > 0;
  options.exchange_given = app.count("--exchange") > 0;
  options.fat_tree_given = app.count("--fat-tree") > 0;
  try {
    predict_and_report(options, argc, argv);
  } catch (const std::exception& e) {
    std::fflush(stdout);
    std::fprintf(stderr, "collbench-predict: %s\n", e.what());
    return kErrorStatus;
  }
  return 0;
}
