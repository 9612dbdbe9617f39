// collbench-predict: how far synchronous data-parallel SGD scales on a
// measured or preset network, per allreduce algorithm (Keuper & Pfreundt
// 2016; the model is described in include/collbench/predict.h).
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
#include <string>
#include <vector>

#include "cli_checks.h"
#include "collbench/catalog.h"
#include "collbench/collective.h"
#include "collbench/predict.h"
#include "collbench/sizes.h"
#include "plot_runner.h"
#include "replace_on_commit.h"

namespace {

// Every p from 1 is predicted: 2^20 nodes take seconds, far more would take hours.
constexpr int kMaxNodes = 1 << 20;

// The physical inputs, bounded far beyond any real machine and far inside
// double's range, so that T_iter, S(p) and β = 8 / rate stay finite (an
// unbounded --bandwidth-gbps 1e-320 made β inf, 1e308 made 1/β inf).
constexpr double kMinSeconds = 1e-9;  // compute of one iteration: a ns ...
constexpr double kMaxSeconds = 1e9;   // ... to 30 years
constexpr double kMinFlops = 1e3;
constexpr double kMaxFlops = 1e21;   // a zettaFLOP/s node
constexpr double kMaxGammaNs = 1e6;  // ns per byte reduced: 1 kB/s
constexpr double kMinLatencyUs = 1e-6;
constexpr double kMaxLatencyUs = 1e9;  // α: a ps to 1000 s
constexpr double kMinGbps = 1e-6;      // 1 kbit/s ...
constexpr double kMaxGbps = 1e6;       // ... to 1 Pbit/s

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

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "Predicts speedup and efficiency of synchronous data-parallel SGD on p nodes per "
      "allreduce algorithm: T_iter(p) = T_compute(B/p) + T_exchange(p, |W|) (minus what "
      "backprop hides), S(p) = T_iter(1)/T_iter(p).\n"
      "Network from a preset or collbench-fit's models.csv; exchange costs from each "
      "algorithm's own cost terms.\n"
      "Example: collbench-predict --model alexnet --batch 256 --compute-seconds 2 --network fdr "
      "--algorithms ps_central,tree,ring --max-nodes 128",
      "collbench-predict"};
  std::string preset;
  std::string model_name;
  int batch = 0;
  double compute_seconds = 0;
  double flops_per_second = 0;
  std::string network_name = "fdr";
  std::string network_from;
  collbench::NetworkSelection selection;
  double gamma_ns = collbench::kDefaultGammaSecondsPerByte * 1e9;
  double latency_us = 0;
  double bandwidth_gbps = 0;
  std::string algorithm_list;
  int max_nodes = 0;
  std::string dtype = "f32";
  std::string exchange = "whole";
  std::string bucket_cap = "25MiB";
  double overlap_fraction = -1;
  bool overlap_buckets = false;
  bool weak = false;
  std::string out_dir;
  bool plot = false;
  std::string plot_script = collbench::default_plot_script();
  std::string python = collbench::default_python();

  app.add_option("--preset", preset,
                 "keuper2016: Keuper & Pfreundt (2016) Table I (AlexNet B=256 on CPU/K80/TitanX/"
                 "KNL, GoogLeNet B=32 on CPU/K80/KNL) on FDR, ps_central vs tree vs ring; with "
                 "--out-dir also writes README.md with the conclusion")
      ->check(CLI::IsMember({"keuper2016"}));
  app.add_option("--model", model_name, "catalog model (collbench-catalog list)");
  app.add_option("--batch", batch,
                 "global batch B (samples per iteration over all nodes); per node with --weak")
      ->check(collbench::cli::whole_number(1, INT32_MAX, "samples"));
  auto* compute_opt =
      app.add_option("--compute-seconds", compute_seconds,
                     "seconds per iteration of B samples on one node")
          ->check(collbench::cli::number_at_least(kMinSeconds, false, "seconds", kMaxSeconds));
  auto* flops_opt =
      app.add_option("--flops-per-second", flops_per_second,
                     "sustained FLOP/s of one node; compute = 3 x forward FLOPs x "
                     "B / this")
          ->check(collbench::cli::number_at_least(kMinFlops, false, "FLOP/s", kMaxFlops));
  compute_opt->excludes(flops_opt);
  auto* network_opt =
      app.add_option("--network", network_name,
                     fmt::format("network preset: {}", collbench::network_preset_names()))
          ->capture_default_str();
  auto* from_opt = app.add_option("--network-from", network_from,
                                  "collbench-fit's models.csv: α, β from its p2p (hockney) fit, "
                                  "γ from its reduce fit")
                       ->check(CLI::ExistingFile);
  network_opt->excludes(from_opt);
  app.add_option("--transport", selection.transport,
                 "with --network-from: the transport of the p2p fit (default: the only one)");
  app.add_option("--provider", selection.provider, "with --network-from: the provider");
  app.add_option("--placement", selection.placement,
                 "with --network-from: preferred p2p placement (inter or intra)")
      ->capture_default_str()
      ->check(CLI::IsMember({"inter", "intra"}));
  app.add_flag("--per-algorithm-fits", selection.per_algorithm_fits,
               "with --network-from: each algorithm uses its own top-down fit (allows mpi)");
  app.add_option("--gamma", gamma_ns,
                 "γ in ns per byte reduced, for presets (default: 0.1, i.e. 10 GB/s, a streaming "
                 "f32 sum on one core) and when models.csv has no reduce fit")
      ->check(collbench::cli::number_at_least(0, false, "ns per byte", kMaxGammaNs));
  app.add_option("--latency-us", latency_us, "override α (µs per message)")
      ->check(collbench::cli::number_at_least(kMinLatencyUs, false, "µs", kMaxLatencyUs));
  app.add_option("--bandwidth-gbps", bandwidth_gbps,
                 "override the data rate (Gbit/s; β = 8 / rate)")
      ->check(collbench::cli::number_at_least(kMinGbps, false, "Gbit/s", kMaxGbps));
  app.add_option("--algorithms", algorithm_list,
                 "comma-separated allreduce algorithms: " +
                     collbench::find_collective("allreduce")->algorithm_names() +
                     ", lower_bound (default: every algorithm with a cost model of its own; "
                     "keuper2016: ps_central,tree,ring)");
  app.add_option("--max-nodes", max_nodes,
                 fmt::format("largest p (default 128; keuper2016: 256; at most {})", kMaxNodes))
      ->check(collbench::cli::whole_number(1, kMaxNodes, "nodes"));
  app.add_option("--dtype", dtype, "gradient element type")
      ->capture_default_str()
      ->check(CLI::IsMember({"f32", "f64", "f16", "bf16"}));
  app.add_option("--exchange", exchange,
                 "whole: one allreduce of the whole gradient; ddp: one per PyTorch DDP bucket")
      ->capture_default_str()
      ->check(CLI::IsMember({"whole", "ddp"}));
  app.add_option("--bucket-cap", bucket_cap, "DDP bucket cap: bytes, or with a unit (25MiB, 50MB)")
      ->capture_default_str();
  auto* fraction_opt =
      app.add_option("--overlap-fraction", overlap_fraction,
                     "fraction of the exchange hidden behind backprop (at most the backward "
                     "time, 2/3 of compute); default 0")
          ->check(collbench::cli::number_at_least(0, false, "", 1));
  auto* buckets_opt = app.add_flag("--overlap-buckets", overlap_buckets,
                                   "overlap bucket by bucket as DDP does (implies --exchange ddp)");
  fraction_opt->excludes(buckets_opt);
  app.add_flag("--weak", weak, "weak scaling: B/p fixed at --batch samples per node");
  app.add_option("--out-dir", out_dir,
                 "write scaling.csv here (keuper2016: also README.md); default: report only")
      ->check(collbench::cli::path());
  app.add_flag("--plot", plot, "draw speedup/efficiency PNGs into --out-dir via scripts/plot.py");
  app.add_option("--plot-script", plot_script, "scripts/plot.py to run")
      ->capture_default_str()
      ->check(CLI::ExistingFile);
  app.add_option("--python", python, "Python with matplotlib")
      ->capture_default_str()
      ->check(collbench::cli::path());
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::fprintf(stderr, "collbench-predict: %s (see --help)\n", e.what());
    return 2;
  }

  try {
    if (plot && out_dir.empty()) throw std::invalid_argument("--plot needs --out-dir");
    if (plot) collbench::require_plotting(python, plot_script);
    if (!out_dir.empty()) {
      collbench::require_writable_folder(out_dir, "--out-dir");
      if (!network_from.empty()) {
        collbench::require_outputs_not_inputs(out_dir, {"scaling.csv", "README.md"}, {network_from},
                                              "--out-dir");
      }
    }
    // Checked even where no DDP bucket uses it: a bad value is a mistake.
    const std::uint64_t bucket_cap_bytes = collbench::parse_byte_size(bucket_cap);
    const double gamma = gamma_ns * 1e-9;
    collbench::Network network = network_from.empty()
                                     ? collbench::preset_network(network_name, gamma)
                                     : collbench::network_from_models_csv(
                                           network_from,
                                           [&] {
                                             selection.dtype = dtype;
                                             return selection;
                                           }(),
                                           gamma);
    if (latency_us > 0) {
      network.params.alpha = latency_us * 1e-6;
      network.description += fmt::format("; α overridden: {} µs", latency_us);
    }
    if (bandwidth_gbps > 0) {
      network.params.beta = 8.0 / (bandwidth_gbps * 1e9);
      network.description += fmt::format("; data rate overridden: {} Gb/s", bandwidth_gbps);
    }

    std::vector<collbench::ScalingScenario> scenarios;
    std::vector<std::string> algorithms = split(algorithm_list);
    if (!preset.empty()) {
      if (!model_name.empty() || batch != 0 || compute_seconds != 0 || flops_per_second != 0 ||
          weak || overlap_buckets || overlap_fraction >= 0 || exchange != "whole" ||
          dtype != "f32") {
        throw std::invalid_argument(
            "--preset keuper2016 is the paper's setting (model, batch, compute times, f32, one "
            "whole-gradient allreduce, no overlap, strong scaling); do not combine it with "
            "--model, --batch, --compute-seconds, --flops-per-second, --dtype, --exchange, "
            "--overlap-* or --weak");
      }
      scenarios = collbench::keuper2016_scenarios();
      if (algorithms.empty()) algorithms = {"ps_central", "tree", "ring"};
      if (max_nodes == 0) max_nodes = 256;
    } else {
      if (model_name.empty() || batch == 0 || (compute_seconds == 0 && flops_per_second == 0)) {
        throw std::invalid_argument(
            "give --model, --batch and --compute-seconds (or --flops-per-second), or "
            "--preset keuper2016");
      }
      const collbench::Model& model = collbench::find_model(model_name);
      const std::size_t element_bytes = collbench::dtype_element_bytes(dtype);
      collbench::ScalingScenario s;
      s.model = model.name;
      s.parameters = static_cast<double>(model.parameters());
      s.dtype = dtype;
      s.element_bytes = static_cast<double>(element_bytes);
      s.batch = batch;
      s.compute_seconds = compute_seconds > 0 ? compute_seconds
                                              : collbench::compute_seconds_from_flops(
                                                    model, batch, flops_per_second);
      s.weak = weak;
      if (exchange == "ddp" || overlap_buckets) {
        s.messages = collbench::ddp_messages(model, element_bytes, bucket_cap_bytes);
      } else {
        s.messages = collbench::whole_gradient(model, element_bytes);
      }
      if (overlap_buckets) {
        s.overlap = collbench::Overlap::buckets;
      } else if (overlap_fraction >= 0) {
        s.overlap = collbench::Overlap::fraction;
        s.overlap_fraction = overlap_fraction;
      }
      s.label = fmt::format("{} B={}{}", model.name, batch, weak ? "/node" : "");
      scenarios.push_back(std::move(s));
      if (max_nodes == 0) max_nodes = 128;
    }
    if (algorithms.empty()) {
      for (const collbench::AlgorithmInfo& info :
           collbench::find_collective("allreduce")->algorithms) {
        bool own = true;
        collbench::model_terms("allreduce", info.name, 2, 1.0, &own);
        if (own || network.per_algorithm.contains(std::string(info.name))) {
          algorithms.emplace_back(info.name);
        }
      }
    }

    std::vector<collbench::ScalingResult> results;
    for (const collbench::ScalingScenario& scenario : scenarios) {
      collbench::ScalingResult result;
      result.scenario = scenario;
      result.rows = collbench::predict_scaling(scenario, network, algorithms, max_nodes);
      result.summary = collbench::summarize_scaling(result.rows);
      results.push_back(std::move(result));
    }
    for (std::size_t i = 0; i < results.size(); ++i) {
      if (i > 0) std::fputs("\n", stdout);
      std::fputs(collbench::format_scaling_report(results[i], network).c_str(), stdout);
    }

    if (!out_dir.empty()) {
      // scaling.csv, README.md and the plots of this run, or all of the one before.
      collbench::ReplaceTogether outputs(out_dir);
      const std::string csv_path = outputs.path("scaling.csv");
      const std::string readme = outputs.path("README.md");
      std::vector<std::string> plots;
      try {
        const std::string csv_temp = outputs.add("scaling.csv");
        collbench::write_scaling_csv(csv_temp, results, network);
        if (!preset.empty()) {
          std::string command = "collbench-predict";
          for (int i = 1; i < argc; ++i) command += std::string(" ") + argv[i];
          write_text(outputs.add("README.md"),
                     collbench::keuper2016_readme(results, network, command));
        }
        if (plot) {
          plots = collbench::plot_together(outputs, out_dir, python, plot_script,
                                           {"scaling", csv_temp});
        }
        outputs.commit();
      } catch (const std::runtime_error& e) {
        throw std::runtime_error(
            fmt::format("{}; {} keeps the outputs it had (none replaced)", e.what(), out_dir));
      }
      std::printf("\nwrote %s\n", csv_path.c_str());
      if (!preset.empty()) std::printf("wrote %s\n", readme.c_str());
      for (const std::string& png : plots) std::printf("wrote %s\n", png.c_str());
    }
  } catch (const std::exception& e) {
    std::fflush(stdout);
    std::fprintf(stderr, "collbench-predict: %s\n", e.what());
    return 2;
  }
  return 0;
}
