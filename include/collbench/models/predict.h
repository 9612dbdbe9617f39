// Scalability of synchronous data-parallel SGD on a modelled network
// (collbench-predict), after Keuper & Pfreundt (2016), "Distributed Training
// of Deep Neural Networks: Theoretical and Practical Limits of Parallel
// Scalability".
//
// With global batch B split over p nodes, one iteration takes
//   T_iter(p) = T_compute(B/p) + T_exchange(p, |W|) − T_hidden(p)
// and the speedup is S(p) = T_iter(1) / T_iter(p), the efficiency S(p)/p.
// With several ranks per node (Network::ppn) p counts ranks, and each
// collective costs its algorithm's placed cost on the two levels.
// The exchange is one allreduce per message of the gradient — the whole
// gradient as one message unless buckets are asked for; ZeRO-2's
// reduce_scatter buckets and allgather — each costing the algorithm's
// CostTerms (algorithm.h) for its collective on the network's α, β, γ.
//
// Compute, one of:
//   linear    T_compute(B/p) = T_compute(B)/p, from a given time or FLOP
//             rate: the GEMM efficiency that falls at small B/p (the
//             paper's second limit) is not modelled, so these predictions
//             are upper bounds in that respect. Backpropagation is taken as
//             2/3 of it (the backward pass costs about twice the forward).
//   measured  each GEMM layer's forward and backward time at the per-node
//             batch B/p (strong) or the batch per node (weak), from the
//             harness's gemm rows (compute.h: measured batches exactly,
//             log-log interpolation between them, B/p need not be whole).
//             Beyond the batch limit (p > B) a node still processes one
//             sample: one sample's time.
// Only the backward pass can hide communication.
//
// Overlap:
//   none       T_hidden = 0
//   fraction f T_hidden = min(f·T_exchange, T_backward)
//   buckets    messages (DDP buckets) start when their last gradient is ready
//              and run one after another (compute.h, schedule_exchanges);
//              T_iter = max(T_compute, end of the last message). With
//              measured compute a bucket is ready after the backward of its
//              ready GEMM layer (simulate_iteration); with linear compute,
//              after the share of the backward pass proportional to the
//              parameters of tensors 0..i in backprop order.
// Weak scaling keeps B/p fixed (the given batch per node): T_compute is
// constant, S(p) = p·T_iter(1)/T_iter(p) is the throughput ratio and there is
// no batch limit. Strong scaling marks p > B as beyond the batch limit: a
// node cannot process less than one sample.
#pragma once

#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "collbench/catalog/catalog.h"
#include "collbench/catalog/workload.h"
#include "collbench/collectives/algorithm.h"
#include "collbench/models/compute.h"
#include "collbench/models/fit.h"

namespace collbench {

// ------------------------------------------------------------------ networks

struct NetworkPreset {
  std::string_view name;
  std::string_view description;  // link, data rate and where the latency comes from
  double alpha_seconds;          // per message, MPI-level
  double data_gbit_per_second;   // after line encoding
};

// 1gbe, 10gbe, 100gbe, fdr, edr, hdr, ndr.
std::span<const NetworkPreset> network_presets();
std::string network_preset_names();

// γ used with presets unless --gamma overrides it: 0.1 ns per byte reduced
// (10 GB/s of operand), a streaming f32 sum on one core of a current server
// CPU (two loads and a store per element at ~30 GB/s of memory traffic).
inline constexpr double kDefaultGammaSecondsPerByte = 0.1e-9;

// The range of a link's latency and data rate that collbench-predict and the
// simulator accept: far beyond any real machine and far inside double's
// range, so that every time computed from them stays finite (a data rate of
// 1e300 GB/s made SimGrid abort, 1e-320 Gbit/s made β inf).
inline constexpr double kMaxLinkLatencySeconds = 1e3;
inline constexpr double kMinLinkBitsPerSecond = 1e3;   // 1 kbit/s ...
inline constexpr double kMaxLinkBitsPerSecond = 1e15;  // ... to 1 Pbit/s
// The range of an assumed compute rate, FLOP/s of one node or rank, that
// collbench-predict and the simulator accept, for the same reason (1e-300
// FLOP/s made a layer's simulated compute inf, after the run had started).
inline constexpr double kMinFlopsPerSecond = 1e3;
inline constexpr double kMaxFlopsPerSecond = 1e21;  // a zettaFLOP/s node

struct Network {
  std::string name;         // "fdr", "models.csv mpi/inter", ...
  std::string description;  // for the report and the CSV
  NetworkModel params;      // α s, β s/B, γ s/B
  std::string gamma_origin;
  // Top-down fits per algorithm, used instead of `params` for those
  // algorithms when non-empty (collbench-predict --per-algorithm-fits).
  std::map<std::string, NetworkModel> per_algorithm;
  // A tapered two-level fat-tree (collbench-predict --fat-tree K:U), 0: a
  // flat network. Set, the exchanges are priced by the algorithms' placed
  // costs on it (Layout::switch_nodes, Layout::switch_uplinks).
  int switch_nodes = 0;
  int switch_uplinks = 0;
  // Ranks per node (collbench-predict --ppn K), 1: a node per rank. Above 1,
  // p counts ranks, K to a node (below K: one node of p), and the exchanges
  // are priced by the algorithms' placed costs on two levels: `intra` (α, β
  // of a node's own links) between ranks of a node, `params` between nodes.
  int ppn = 1;
  NetworkModel intra;
  // A models.csv's p2p fit of placement intra beside the inter one it was
  // read for: `intra` unless --intra-* flags give it.
  std::optional<NetworkModel> intra_fit;
};

// Throws std::invalid_argument naming `name` and listing the presets.
Network preset_network(std::string_view name, double gamma_seconds_per_byte);

// --fat-tree K:U: leaf switches of K consecutive nodes, each with U up-links,
// set on `network` and added to its description. Throws
// std::invalid_argument naming the flag.
void set_fat_tree(Network& network, std::string_view spec);

// --ppn K: K ranks per node, the node's own level from `intra` (the flags)
// or else the network's intra_fit, added to its description. Throws
// std::invalid_argument when K > 1 has neither.
void set_ranks_per_node(Network& network, int ppn, std::optional<NetworkModel> intra);

struct NetworkSelection {
  // Empty = any; an error lists the candidates when more than one matches.
  std::string transport, provider;
  std::string placement = "inter";  // preferred; the other is used when only it exists
  std::string dtype = "f32";        // which reduce_gamma row gives γ
  bool per_algorithm_fits = false;  // also read the top_down rows
};

// Reads collbench-fit's models.csv: α, β from the selected hockney row, γ
// from the reduce_gamma row of the dtype (or `fallback_gamma` when there is
// none, said so in gamma_origin). Throws std::runtime_error naming the file
// and what is missing or ambiguous.
Network network_from_models_csv(const std::string& path, const NetworkSelection& selection,
                                double fallback_gamma);

// --------------------------------------------------------------- scenarios

enum class Overlap { none, fraction, buckets };
std::string_view to_string(Overlap overlap);

// One message of the exchange: its collective (workload.h's names) and
// bytes, and when all of its gradients exist: after this fraction of the
// backward pass (linear compute) or after the backward of this GEMM layer
// (measured compute; the smallest ready_after_gemm_layer of its tensors,
// 0 = the end of backprop).
struct ExchangeMessage {
  double bytes = 0;
  double ready_fraction = 1;
  std::size_t ready_after_gemm_layer = 0;
  std::string_view collective = kAllreduce;
};

struct ScalingScenario {
  std::string label;      // e.g. "alexnet_caffe B=256 K80"
  std::string model;      // catalog name, for the CSV
  double parameters = 0;  // |W|
  std::string dtype = "f32";
  double element_bytes = 4;
  std::vector<ExchangeMessage> messages;  // per iteration, backprop order
  int batch = 1;                          // B (global, strong) or per node (weak)
  double compute_seconds = 0;             // one iteration of `batch` samples on one node
  // Set: measured compute (compute_seconds is its iteration at `batch`);
  // empty: linear compute.
  std::optional<MeasuredCompute> measured_compute;
  bool weak = false;
  Overlap overlap = Overlap::none;
  double overlap_fraction = 0;
};

// The gradient of `model` as one message, or as its DDP buckets (cap in
// bytes) with their ready fractions and layers; throws std::invalid_argument
// for a zero element size or cap.
std::vector<ExchangeMessage> whole_gradient(const Model& model, std::size_t element_bytes);
std::vector<ExchangeMessage> ddp_messages(const Model& model, std::size_t element_bytes,
                                          std::uint64_t cap_bytes);
// DeepSpeed ZeRO-2 (workload.h, zero2_messages): its gradient buckets
// reduce-scattered as DDP's are allreduced, then the updated parameters'
// allgather, ready at the end of backprop and after the last bucket (the
// messages run one after another), so nothing hides it. Throws
// std::invalid_argument for a zero element size or bucket.
std::vector<ExchangeMessage> zero2_exchange(const Model& model, std::size_t element_bytes,
                                            std::uint64_t bucket_elements);

// 3 × forward FLOPs (forward + backward) × batch / sustained FLOP/s.
double compute_seconds_from_flops(const Model& model, int batch, double flops_per_second);

// A scenario's compute: measured from `compute` (its iteration at the
// scenario's batch) instead of linear. Throws std::runtime_error when that
// batch is below the measured ones.
void use_measured_compute(ScalingScenario& scenario, MeasuredCompute compute);

struct ScalingRow {
  std::string algorithm;
  int nodes = 1;
  double samples_per_node = 0;
  double compute_seconds = 0;
  double exchange_seconds = 0;  // all messages back to back
  double hidden_seconds = 0;    // of that, overlapped with backprop
  double iteration_seconds = 0;
  double speedup = 0;
  double efficiency = 0;
  bool within_batch_limit = true;
};

// Rows for p = 1..max_nodes per algorithm (with ppn K > 1 only p < K and
// the multiples of K: nodes of equal ranks; registry names: each message
// priced by its collective's algorithm of that name; or "lower_bound" for
// each collective's lower bound). Per-algorithm fits are allreduce fits:
// they price allreduce messages only. Throws std::invalid_argument for an
// algorithm unknown to a collective of the scenario, one without a cost
// model of its own and no per-algorithm fit (mpi), max_nodes < 1, batch < 1
// or compute_seconds <= 0, and with ppn > 1 for lower_bound (a flat
// network's) and an algorithm without a placed cost;
// std::runtime_error when measured compute has no time for a node's batch
// (below the smallest measured one).
std::vector<ScalingRow> predict_scaling(const ScalingScenario& scenario, const Network& network,
                                        std::span<const std::string> algorithms, int max_nodes);

struct ScalingSummary {
  std::string algorithm;
  int peak_nodes = 1;  // argmax of speedup within the batch limit
  double peak_speedup = 1;
  bool peak_at_max = false;           // still rising at the largest p considered
  int half_efficiency_nodes = 0;      // first p with efficiency < 50%; 0 = none up to max
  double exchange_share_at_peak = 0;  // exposed exchange / iteration at the peak
};

std::vector<ScalingSummary> summarize_scaling(std::span<const ScalingRow> rows);

// ------------------------------------------------------------------ output

std::vector<std::string> scaling_csv_columns();

struct ScalingResult {
  ScalingScenario scenario;
  std::vector<ScalingRow> rows;
  std::vector<ScalingSummary> summary;
};

// One CSV for any number of scenarios, written to `path` in place
// (collbench-predict writes a temporary and replaces its outputs together).
void write_scaling_csv(const std::string& path, std::span<const ScalingResult> results,
                       const Network& network);
// The table collbench-predict prints: powers of two, the peak and the last p.
std::string format_scaling_report(const ScalingResult& result, const Network& network);

// The Keuper & Pfreundt (2016) Table I settings: AlexNet (alexnet_caffe) at
// B=256 on CPU, K80, TitanX, KNL; GoogLeNet at B=32 on CPU, K80, KNL.
std::vector<ScalingScenario> keuper2016_scenarios();
// The exchanges the paper compares (its Section IV: a central parameter
// server, a binary tree, a ring), the preset's algorithms unless
// --algorithms names others.
std::vector<std::string> keuper2016_algorithms();
// The same models and batches with the compute measured on this machine:
// per model "MODEL B=N measured" (per GEMM layer at B/p) and "MODEL B=N
// measured-linear" (its T_compute(B), divided by p as Table I's are: this
// machine's speed without the falling GEMM efficiency). Throws
// std::runtime_error naming the file when a model's gemm rows are missing
// (predict_scaling, when they do not reach down to the per-node batches).
std::vector<ScalingScenario> keuper2016_measured_scenarios(const GemmMeasurements& measurements);
// The README of results/paper: setting, summary table, and one paragraph
// that says which of the paper's conclusions the numbers support (from the
// Table I scenarios); with measured scenarios among the results, also a
// section setting each beside the paper's CPU time and its measured-linear
// twin: the measured compute over T_compute(B)/p, efficiency against p per
// compute model and the p at 50% of each, and where each limit bites. With
// `plots` (collbench-predict --plot) it links the PNGs plot.py scaling
// draws: scaling_<scenario>.png per scenario, efficiency_<model>_B<batch>.png
// per measured model.
std::string keuper2016_readme(std::span<const ScalingResult> results, const Network& network,
                              std::string_view command_line, bool plots = false);

}  // namespace collbench
