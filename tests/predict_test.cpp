// collbench-predict's library: the Keuper & Pfreundt iteration model against
// hand-computed speedup tables, overlap and weak scaling, measured compute
// (per-node batch, bucket readiness from the layers' backward), network
// presets, models.csv round trip, and the paper's scenario.
#include "collbench/models/predict.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "collbench/catalog/workload.h"
#include "compute_synthetic.h"
#include "models_synthetic.h"

namespace collbench {
namespace {

Network test_network() {
  Network network;
  network.name = "test";
  network.params = {1e-3, 1e-9, 0.5e-9};  // α = 1 ms, 1 GB/s, γ = 0.5 ns/B
  return network;
}

ScalingScenario one_message(double compute_seconds, int batch) {
  ScalingScenario s;
  s.label = "test";
  s.model = "test";
  s.parameters = 250000;
  s.messages = {{1e6, 1.0}};  // 1 MB: 250k f32 parameters
  s.batch = batch;
  s.compute_seconds = compute_seconds;
  return s;
}

const ScalingRow& row_of(const std::vector<ScalingRow>& rows, const std::string& algorithm,
                         int nodes) {
  for (const ScalingRow& row : rows) {
    if (row.algorithm == algorithm && row.nodes == nodes) return row;
  }
  throw std::out_of_range(algorithm + " at " + std::to_string(nodes));
}

TEST(PredictScaling, ReproducesAHandComputedSpeedupTable) {
  // T_iter(p) = 1/p + exchange, exchange from the design's formulas with
  // α = 1e-3, β = 1e-9, γ = 0.5e-9, n = 1e6:
  //   ring p=2: 2α + nβ + n/2·γ            = 0.002 + 0.001 + 0.00025   -> T 0.50325
  //   ring p=3: 4α + 4/3·nβ + 2/3·nγ       = 0.004 + 0.001333 + 0.000333 -> T 0.339
  //   ring p=4: 6α + 3/2·nβ + 3/4·nγ       = 0.006 + 0.0015 + 0.000375 -> T 0.257875
  //   ps_central p=2: 2α + 2nβ + nγ        = 0.0045                    -> T 0.5045
  //   ps_central p=4: 6α + 6nβ + 3nγ       = 0.0135                    -> T 0.2635
  //   tree p=3 (⌈lg 3⌉ = 2): 4α + 4nβ + 2nγ = 0.009                    -> T 0.342333
  //   tree p=4: the same 0.009                                         -> T 0.259
  // and S = T_iter(1) / T_iter(p) = 1 / T.
  const std::vector<std::string> algorithms = {"ps_central", "tree", "ring"};
  const std::vector<ScalingRow> rows =
      predict_scaling(one_message(1.0, 4), test_network(), algorithms, 4);
  ASSERT_EQ(rows.size(), 12u);
  const struct {
    const char* algorithm;
    int nodes;
    double speedup;
  } table[] = {
      {"ring", 1, 1.0},
      {"ring", 2, 1.987083954297069},
      {"ring", 3, 2.949852507374631},
      {"ring", 4, 3.8778477944740666},
      {"ps_central", 2, 1.9821605550049557},
      {"ps_central", 4, 3.795066413662239},
      {"tree", 3, 2.9211295034079847},
      {"tree", 4, 3.861003861003861},
  };
  for (const auto& expected : table) {
    const ScalingRow& row = row_of(rows, expected.algorithm, expected.nodes);
    EXPECT_NEAR(row.speedup, expected.speedup, 1e-12)
        << expected.algorithm << " p=" << expected.nodes;
    EXPECT_NEAR(row.efficiency, expected.speedup / expected.nodes, 1e-12);
    EXPECT_DOUBLE_EQ(row.samples_per_node, 4.0 / expected.nodes);
    EXPECT_TRUE(row.within_batch_limit);
  }
  EXPECT_NEAR(row_of(rows, "ring", 2).exchange_seconds, 0.00325, 1e-15);
  EXPECT_NEAR(row_of(rows, "tree", 3).iteration_seconds, 1.0 / 3 + 0.009, 1e-15);
}

TEST(PredictScaling, FatTreePricesTheTaper) {
  // Recursive doubling, n = 1 MB on 16 nodes, leaf switches of 8 with 4
  // up-links: 4α + 5nβ (the distance-8 step's 8 flows share 4 up-links:
  // 2nβ) + 4nγ; up to 8 nodes one switch, the flat cost.
  Network tapered = test_network();
  tapered.switch_nodes = 8;
  tapered.switch_uplinks = 4;
  const std::vector<std::string> doubling = {"recursive_doubling"};
  const std::vector<ScalingRow> rows = predict_scaling(one_message(1.0, 16), tapered, doubling, 16);
  EXPECT_NEAR(row_of(rows, "recursive_doubling", 16).exchange_seconds, 4e-3 + 5 * 1e-3 + 4 * 0.5e-3,
              1e-15);
  const std::vector<ScalingRow> flat =
      predict_scaling(one_message(1.0, 16), test_network(), doubling, 16);
  EXPECT_NEAR(row_of(flat, "recursive_doubling", 16).exchange_seconds, 4e-3 + 4 * 1e-3 + 4 * 0.5e-3,
              1e-15);
  EXPECT_DOUBLE_EQ(row_of(rows, "recursive_doubling", 8).exchange_seconds,
                   row_of(flat, "recursive_doubling", 8).exchange_seconds);
}

TEST(PredictScaling, RanksPerNodePriceTheNodesOwnLinks) {
  // Ring, n = 1 MB, 4 ranks per node; inside a node α = 1 µs, 100 GB/s.
  // p = 2 is one node: 2 steps inside it, 2·1 µs + n·0.01 ns + n/2·γ. p = 8
  // is two nodes: each of the 14 steps has one message between them, so it
  // is the network's, as on a node per rank: 14α + 14/8·nβ + 7/8·nγ.
  Network nodes = test_network();
  set_ranks_per_node(nodes, 4, NetworkModel{1e-6, 1e-11, 0});
  const std::vector<std::string> ring = {"ring"};
  const std::vector<ScalingRow> rows = predict_scaling(one_message(1.0, 8), nodes, ring, 8);
  EXPECT_NEAR(row_of(rows, "ring", 2).exchange_seconds, 2e-6 + 1e-5 + 2.5e-4, 1e-15);
  EXPECT_NEAR(row_of(rows, "ring", 8).exchange_seconds, 0.014 + 0.00175 + 0.0004375, 1e-15);
  // Nodes of unequal ranks are left out: p = 1..4 and 8.
  std::vector<int> ranks;
  for (const ScalingRow& row : rows) ranks.push_back(row.nodes);
  EXPECT_EQ(ranks, (std::vector<int>{1, 2, 3, 4, 8}));
  // A flat network's bound knows no nodes; without the intra level there is
  // nothing to price a node with.
  const std::vector<std::string> bound = {"lower_bound"};
  EXPECT_THROW(predict_scaling(one_message(1.0, 8), nodes, bound, 8), std::invalid_argument);
  Network bare = test_network();
  EXPECT_THROW(set_ranks_per_node(bare, 4, std::nullopt), std::invalid_argument);
}

TEST(PredictScaling, OverlapFractionIsCappedByTheBackwardPass) {
  const std::vector<std::string> ring = {"ring"};
  ScalingScenario s = one_message(1.0, 4);
  s.overlap = Overlap::fraction;
  s.overlap_fraction = 0.5;
  // Half of ring's 0.00325 s at p = 2 hides behind a 1/3 s backward pass.
  EXPECT_NEAR(row_of(predict_scaling(s, test_network(), ring, 2), "ring", 2).iteration_seconds,
              0.5 + 0.00325 / 2, 1e-15);
  // With 0.003 s of compute, backward at p = 2 is 2/3 · 0.0015 = 0.001 s:
  // only that much of the exchange can hide, even at fraction 1.
  s.compute_seconds = 0.003;
  s.overlap_fraction = 1.0;
  const ScalingRow row = row_of(predict_scaling(s, test_network(), ring, 2), "ring", 2);
  EXPECT_NEAR(row.hidden_seconds, 0.001, 1e-15);
  EXPECT_NEAR(row.iteration_seconds, 0.0015 + 0.00325 - 0.001, 1e-15);
}

TEST(PredictScaling, BucketsStartWhenTheirGradientsAreReady) {
  // Two 0.5 MB buckets ready after half and all of the backward pass. At
  // p = 2 with 0.03 s of compute: forward 0.005, backward 0.01. Each bucket
  // costs 2α + 0.5e6·β + 0.25e6·γ = 0.002625 s. Bucket 1 runs 0.010-0.012625,
  // bucket 2 waits for the end of backprop at 0.015 and ends at 0.017625.
  ScalingScenario s = one_message(0.03, 4);
  s.messages = {{0.5e6, 0.5}, {0.5e6, 1.0}};
  s.overlap = Overlap::buckets;
  const std::vector<std::string> ring = {"ring"};
  const std::vector<ScalingRow> rows = predict_scaling(s, test_network(), ring, 2);
  const ScalingRow& row = row_of(rows, "ring", 2);
  EXPECT_NEAR(row.iteration_seconds, 0.017625, 1e-15);
  EXPECT_NEAR(row.exchange_seconds, 0.00525, 1e-15);
  EXPECT_NEAR(row.hidden_seconds, 0.002625, 1e-15);
  EXPECT_NEAR(row.speedup, 1.702127659574468, 1e-12);
}

TEST(PredictScaling, WeakScalingKeepsTheBatchPerNode) {
  ScalingScenario s = one_message(1.0, 4);
  s.weak = true;
  const std::vector<std::string> ring = {"ring"};
  const std::vector<ScalingRow> rows = predict_scaling(s, test_network(), ring, 8);
  const ScalingRow& row = row_of(rows, "ring", 2);
  EXPECT_DOUBLE_EQ(row.samples_per_node, 4);
  EXPECT_DOUBLE_EQ(row.compute_seconds, 1.0);
  EXPECT_NEAR(row.speedup, 2 / 1.00325, 1e-12);             // throughput of 2 nodes vs 1
  EXPECT_TRUE(row_of(rows, "ring", 8).within_batch_limit);  // no batch limit
}

TEST(SummarizeScaling, PeakAndHalfEfficiency) {
  // ps_central with α = γ = 0 and nβ = 0.01 s: T(p) = 1/p + 0.02(p − 1),
  // minimal at p = √50 ≈ 7.07: T(7) = 0.262857 < T(8) = 0.265, S(7) =
  // 3.80435. Efficiency 1/(1 + 0.02p(p−1)) drops below 1/2 when p(p−1) > 50,
  // i.e. from p = 8. B = 6 makes p = 7 beyond the batch limit instead.
  Network network;
  network.params = {0, 1e-8, 0};
  ScalingScenario s = one_message(1.0, 64);
  const std::vector<std::string> ps = {"ps_central"};
  std::vector<ScalingRow> rows = predict_scaling(s, network, ps, 16);
  std::vector<ScalingSummary> summary = summarize_scaling(rows);
  ASSERT_EQ(summary.size(), 1u);
  EXPECT_EQ(summary[0].peak_nodes, 7);
  EXPECT_NEAR(summary[0].peak_speedup, 3.8043478260869565, 1e-12);
  EXPECT_FALSE(summary[0].peak_at_max);
  EXPECT_EQ(summary[0].half_efficiency_nodes, 8);
  EXPECT_NEAR(summary[0].exchange_share_at_peak, 0.12 / (1.0 / 7 + 0.12), 1e-12);

  s.batch = 6;
  rows = predict_scaling(s, network, ps, 16);
  summary = summarize_scaling(rows);
  EXPECT_FALSE(row_of(rows, "ps_central", 7).within_batch_limit);
  EXPECT_EQ(summary[0].peak_nodes, 6);
  EXPECT_TRUE(summary[0].peak_at_max);
  EXPECT_EQ(summary[0].half_efficiency_nodes, 0);  // E(6) = 1/1.6 >= 50%
}

TEST(PredictScaling, RejectsWhatItCannotModel) {
  const ScalingScenario s = one_message(1.0, 4);
  const Network network = test_network();
  const std::vector<std::string> mpi = {"mpi"};
  EXPECT_THROW(predict_scaling(s, network, mpi, 4), std::invalid_argument);
  Network fitted = network;
  fitted.per_algorithm["mpi"] = {2e-3, 1e-9, 0};
  EXPECT_NO_THROW(predict_scaling(s, fitted, mpi, 4));
  const std::vector<std::string> unknown = {"butterfly"};
  EXPECT_THROW(predict_scaling(s, network, unknown, 4), std::invalid_argument);
  const std::vector<std::string> ring = {"ring"};
  EXPECT_THROW(predict_scaling(s, network, ring, 0), std::invalid_argument);
  ScalingScenario no_compute = s;
  no_compute.compute_seconds = std::nan("");
  EXPECT_THROW(predict_scaling(no_compute, network, ring, 4), std::invalid_argument);
  // The lower bound is always available and never slower than ring.
  const std::vector<std::string> both = {"ring", "lower_bound"};
  const std::vector<ScalingRow> rows = predict_scaling(s, network, both, 4);
  for (int p = 1; p <= 4; ++p) {
    EXPECT_LE(row_of(rows, "lower_bound", p).iteration_seconds,
              row_of(rows, "ring", p).iteration_seconds);
  }
}

// ------------------------------------------------------- measured compute

MeasuredCompute synthetic_compute(const std::string& model,
                                  std::vector<int> batches = {1, 2, 4, 8, 16, 32, 64, 128, 256}) {
  testing::GemmTruth truth;
  truth.models = {model};
  truth.batches = std::move(batches);
  const NamedTable named{"gemm.csv", testing::synthetic_gemm_table(truth)};
  return measured_compute(read_gemm_measurements(std::span(&named, 1)), find_model(model));
}

ScalingScenario measured_scenario(const std::string& model, int batch, MeasuredCompute compute) {
  ScalingScenario s;
  s.label = model + " measured";
  s.model = model;
  s.parameters = static_cast<double>(find_model(model).parameters());
  s.messages = whole_gradient(find_model(model), 4);
  s.batch = batch;
  use_measured_compute(s, std::move(compute));
  return s;
}

// Strong scaling runs each node at B/p samples: the measured compute there,
// interpolated where B/p is not whole, one sample's beyond the batch limit.
TEST(PredictScaling, MeasuredComputeRunsAtThePerNodeBatch) {
  const MeasuredCompute compute = synthetic_compute("alexnet");
  const ScalingScenario s = measured_scenario("alexnet", 256, compute);
  EXPECT_DOUBLE_EQ(s.compute_seconds, compute_at(compute, 256).iteration_seconds);
  const std::vector<std::string> ring = {"ring"};
  const std::vector<ScalingRow> rows = predict_scaling(s, test_network(), ring, 300);
  for (int p : {1, 2, 3, 256}) {
    EXPECT_DOUBLE_EQ(row_of(rows, "ring", p).compute_seconds,
                     compute_at(compute, 256.0 / p).iteration_seconds)
        << p;
  }
  // Falling GEMM efficiency: 1/p of the work takes more than 1/p of the time.
  EXPECT_GT(row_of(rows, "ring", 64).compute_seconds, s.compute_seconds / 64);
  EXPECT_FALSE(row_of(rows, "ring", 300).within_batch_limit);
  EXPECT_DOUBLE_EQ(row_of(rows, "ring", 300).compute_seconds,
                   compute_at(compute, 1).iteration_seconds);
}

TEST(PredictScaling, MeasuredComputeBelowTheMeasuredBatchesIsRefused) {
  const ScalingScenario s = measured_scenario("alexnet", 64, synthetic_compute("alexnet", {8, 64}));
  const std::vector<std::string> ring = {"ring"};
  EXPECT_NO_THROW(predict_scaling(s, test_network(), ring, 8));
  try {
    predict_scaling(s, test_network(), ring, 16);
    FAIL() << "64/9 samples per node were predicted from batches 8 and 64";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(
        std::string(e.what()).find("gemm.csv: model alexnet at batch 7.11111: below the smallest "
                                   "measured batch (8); batches there: 8, 64"),
        std::string::npos)
        << e.what();
  }
}

TEST(PredictScaling, WeakScalingMeasuresThePerNodeBatch) {
  const MeasuredCompute compute = synthetic_compute("alexnet");
  ScalingScenario s = measured_scenario("alexnet", 32, compute);
  s.weak = true;
  const std::vector<std::string> ring = {"ring"};
  const std::vector<ScalingRow> rows = predict_scaling(s, test_network(), ring, 4);
  for (int p = 1; p <= 4; ++p) {
    EXPECT_DOUBLE_EQ(row_of(rows, "ring", p).compute_seconds,
                     compute_at(compute, 32).iteration_seconds);
  }
}

// Two GEMM layers measured by hand: forward 0.1 s each, backward 0.2 s
// (layer 0) and 0.4 s (layer 1, run first). With α = γ = 0 and 1 MB/s a
// ring allreduce at p = 2 costs n·β: bucket 0 (ready after layer 1's
// backward, 0.2 + 0.4 = 0.6 s) takes 0.3 s, to 0.9; bucket 1 (ready after
// layer 0's, at the end of compute, 0.8 s) waits for it and ends at 0.95.
// Hidden: 0.8 + 0.35 − 0.95 = 0.2 s. (Ready fractions 0.5 and 1 of the
// backward pass would give 0.5 and 0.8: 0.3 s hidden.)
MeasuredCompute two_layers() {
  MeasuredCompute c;
  c.source = "hand";
  c.model = "two_layers";
  c.batches = {1};
  c.group_seconds = {{{0.1, 0.2}}, {{0.1, 0.4}}};
  c.layer_groups = {0, 1};
  c.forward_flops_per_sample = 1;
  c.backward_flops_per_sample = 2;
  return c;
}

ScalingScenario two_layer_scenario(Overlap overlap) {
  ScalingScenario s;
  s.label = "two layers";
  s.model = "two_layers";
  s.parameters = 87500;
  s.messages = {{3e5, 0.5, 1}, {5e4, 1.0, 0}};
  s.batch = 1;
  s.weak = true;
  s.overlap = overlap;
  use_measured_compute(s, two_layers());
  return s;
}

Network megabyte_per_second() {
  Network network;
  network.name = "1 MB/s";
  network.params = {0, 1e-6, 0};
  return network;
}

TEST(PredictScaling, MeasuredBucketsAreReadyAfterTheirLayersBackward) {
  const ScalingScenario s = two_layer_scenario(Overlap::buckets);
  EXPECT_DOUBLE_EQ(s.compute_seconds, 0.8);
  const std::vector<std::string> ring = {"ring"};
  const ScalingRow row = row_of(predict_scaling(s, megabyte_per_second(), ring, 2), "ring", 2);
  EXPECT_NEAR(row.compute_seconds, 0.8, 1e-15);
  EXPECT_NEAR(row.exchange_seconds, 0.35, 1e-15);
  EXPECT_NEAR(row.iteration_seconds, 0.95, 1e-15);
  EXPECT_NEAR(row.hidden_seconds, 0.2, 1e-15);
}

// --overlap-fraction hides at most the measured backward pass (0.6 s), not
// 2/3 of the compute (0.533 s).
TEST(PredictScaling, MeasuredBackwardCapsTheOverlapFraction) {
  ScalingScenario s = two_layer_scenario(Overlap::fraction);
  s.overlap_fraction = 1;
  s.messages = {{3e6, 1.0, 0}};
  const std::vector<std::string> ring = {"ring"};
  const ScalingRow row = row_of(predict_scaling(s, megabyte_per_second(), ring, 2), "ring", 2);
  EXPECT_NEAR(row.hidden_seconds, 0.6, 1e-15);
  EXPECT_NEAR(row.iteration_seconds, 0.8 + 3 - 0.6, 1e-12);
}

// A DDP bucket is ready once all of its gradients are: after the backward
// of the smallest ready layer among its tensors (backprop runs last layer
// first).
TEST(DdpMessages, EachBucketIsReadyAfterItsEarliestLayer) {
  const Model& resnet50 = find_model("resnet50");
  const std::vector<ExchangeMessage> messages = ddp_messages(resnet50, 4, kDdpBucketBytes);
  const std::vector<Bucket> buckets = ddp_buckets(resnet50, 4);
  ASSERT_EQ(messages.size(), buckets.size());
  ASSERT_GT(messages.size(), 2u);
  for (std::size_t k = 0; k < buckets.size(); ++k) {
    std::size_t earliest = resnet50.gemm_layers.size();
    for (std::size_t t = buckets[k].first_tensor;
         t < buckets[k].first_tensor + buckets[k].tensor_count; ++t) {
      earliest = std::min(earliest, resnet50.tensors_backprop_order[t].ready_after_gemm_layer);
    }
    EXPECT_EQ(messages[k].ready_after_gemm_layer, earliest) << "bucket " << k;
  }
  EXPECT_GT(messages.front().ready_after_gemm_layer, messages.back().ready_after_gemm_layer);
  EXPECT_EQ(messages.back().ready_after_gemm_layer, 0u);
  EXPECT_EQ(whole_gradient(resnet50, 4).front().ready_after_gemm_layer, 0u);
}

// ZeRO-2: the gradient reduce-scattered in buckets as it becomes ready, then
// every parameter gathered at the end of backprop; each message priced by
// its own collective's algorithm of the name (an allgather has no γ).
TEST(Zero2Exchange, ReduceScattersTheGradientThenGathersTheParameters) {
  const Model& llama = find_model("llama2_7b");
  const std::vector<ExchangeMessage> messages = zero2_exchange(llama, 4, kZeroReduceBucketElements);
  ASSERT_GT(messages.size(), 2u);
  double reduced = 0;
  for (std::size_t k = 0; k + 1 < messages.size(); ++k) {
    EXPECT_EQ(messages[k].collective, kReduceScatter) << "bucket " << k;
    if (k > 0) {
      EXPECT_GT(messages[k].ready_fraction, messages[k - 1].ready_fraction);
    }
    reduced += messages[k].bytes;
  }
  EXPECT_EQ(reduced, static_cast<double>(llama.gradient_bytes(4)));
  EXPECT_DOUBLE_EQ(messages[messages.size() - 2].ready_fraction, 1.0);
  EXPECT_EQ(messages.back().collective, kAllgather);
  EXPECT_EQ(messages.back().bytes, reduced);
  EXPECT_EQ(messages.back().ready_after_gemm_layer, 0u);

  ScalingScenario s = one_message(1.0, 4);
  s.messages = messages;
  const std::vector<std::string> ring = {"ring"};
  const ScalingRow row = row_of(predict_scaling(s, test_network(), ring, 4), "ring", 4);
  const NetworkModel& net = test_network().params;
  const auto ring_seconds = [&](std::string_view collective, double bytes) {
    return model_terms(collective, "ring", 4, bytes).seconds(net.alpha, net.beta, net.gamma);
  };
  double expected = 0;
  for (const ExchangeMessage& m : messages) expected += ring_seconds(m.collective, m.bytes);
  EXPECT_NEAR(row.exchange_seconds, expected, 1e-12 * expected);
  EXPECT_LT(ring_seconds(kAllgather, 1e9), ring_seconds(kReduceScatter, 1e9));
}

// A value that is not finite (β at the edge of double's range) fails the
// write, naming the column, instead of reaching the CSV; no file is made.
TEST(WriteScalingCsv, RefusesValuesThatAreNotFinite) {
  const std::string path = ::testing::TempDir() + "/predict_not_finite.csv";
  std::remove(path.c_str());
  const std::vector<std::string> algorithms = {"ring"};
  ScalingResult good;
  good.scenario = one_message(1.0, 4);
  good.rows = predict_scaling(good.scenario, test_network(), algorithms, 2);
  write_scaling_csv(path, std::span(&good, 1), test_network());
  ASSERT_EQ(std::remove(path.c_str()), 0) << "a finite result is written";

  Network zero_beta = test_network();
  zero_beta.params.beta = 0;  // beta_GBps = 1e-9 / 0 = inf
  try {
    write_scaling_csv(path, std::span(&good, 1), zero_beta);
    FAIL() << "beta_GBps inf was written";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("beta_GBps of ring at p = 1 is inf; not written"),
              std::string::npos)
        << e.what();
  }
  ScalingResult infinite = good;
  infinite.rows[1].speedup = std::nan("");
  EXPECT_THROW(write_scaling_csv(path, std::span(&infinite, 1), test_network()),
               std::runtime_error);
  EXPECT_NE(std::remove(path.c_str()), 0) << "no file is left behind";
}

TEST(NetworkPresets, FdrDataRateAndLatency) {
  const Network fdr = preset_network("fdr", kDefaultGammaSecondsPerByte);
  // 14.0625 Gbaud × 4 lanes × 64/66 = 54.545 Gb/s = 6.818 GB/s.
  EXPECT_NEAR(fdr.params.beta, 8 / 54.54545454545455e9, 1e-22);
  EXPECT_DOUBLE_EQ(fdr.params.alpha, 1e-6);
  EXPECT_DOUBLE_EQ(fdr.params.gamma, 0.1e-9);
  EXPECT_DOUBLE_EQ(preset_network("1gbe", 0).params.alpha, 50e-6);
  EXPECT_DOUBLE_EQ(preset_network("1gbe", 0).params.beta, 8e-9);
  EXPECT_EQ(network_presets().size(), 7u);
  try {
    preset_network("omnipath", 0);
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_EQ(std::string(e.what()),
              "unknown network 'omnipath'; presets: 1gbe, 10gbe, 100gbe, fdr, edr, hdr, ndr");
  }
}

TEST(NetworkFromModels, ReadsWhatCollbenchFitWrote) {
  testing::SyntheticTruth truth;
  truth.noise = 0;
  const std::vector<NamedTable> tables = {{"synthetic.csv", testing::synthetic_table(truth)}};
  const FitResults results = fit_measurements(aggregate_measurements(tables));
  const std::string path = ::testing::TempDir() + "/predict_models.csv";
  write_models_csv(path, results);

  NetworkSelection selection;
  selection.per_algorithm_fits = true;
  const Network network = network_from_models_csv(path, selection, 0);
  EXPECT_NEAR(network.params.alpha, truth.alpha, 1e-6 * truth.alpha);
  EXPECT_NEAR(network.params.beta, truth.beta, 1e-5 * truth.beta);
  EXPECT_NEAR(network.params.gamma, truth.gamma, 1e-5 * truth.gamma);
  ASSERT_TRUE(network.per_algorithm.contains("mpi"));
  EXPECT_NEAR(network.per_algorithm.at("mpi").beta, truth.beta, 1e-5 * truth.beta);

  // The exchange is allreduces: another collective's fit of an algorithm of
  // the same name (reduce_scatter's mpi, listed first here) is not its.
  CsvTable with_other = read_csv_file(path);
  const auto column = [&](std::string_view name) {
    return static_cast<std::size_t>(with_other.column(name));
  };
  for (const std::vector<std::string>& row : with_other.rows) {
    if (row[column("model")] != "top_down" || row[column("algorithm")] != "mpi") continue;
    std::vector<std::string> other = row;
    other[column("family")] = "reduce_scatter";
    other[column("beta_ns_per_byte")] = "1000";
    with_other.rows.insert(with_other.rows.begin(), other);
    break;
  }
  const std::string other_path = ::testing::TempDir() + "/predict_models_other.csv";
  testing::write_table(other_path, with_other);
  const Network allreduce_only = network_from_models_csv(other_path, selection, 0);
  EXPECT_NEAR(allreduce_only.per_algorithm.at("mpi").beta, truth.beta, 1e-5 * truth.beta);

  // A models.csv from before the family column: every fit is allreduce's.
  CsvTable without_family = read_csv_file(path);
  const std::size_t family = column("family");
  without_family.header.erase(without_family.header.begin() + static_cast<std::ptrdiff_t>(family));
  for (std::vector<std::string>& row : without_family.rows) {
    row.erase(row.begin() + static_cast<std::ptrdiff_t>(family));
  }
  const std::string old_path = ::testing::TempDir() + "/predict_models_no_family.csv";
  testing::write_table(old_path, without_family);
  const Network from_old = network_from_models_csv(old_path, selection, 0);
  EXPECT_NEAR(from_old.params.beta, truth.beta, 1e-5 * truth.beta);
  ASSERT_TRUE(from_old.per_algorithm.contains("mpi"));
  EXPECT_NEAR(from_old.per_algorithm.at("mpi").beta, truth.beta, 1e-5 * truth.beta);

  // A two-level fit's intra p2p row is the level inside a node (--ppn).
  EXPECT_FALSE(network.intra_fit.has_value());
  CsvTable two_level = read_csv_file(path);
  for (const std::vector<std::string>& row : two_level.rows) {
    if (row[column("model")] != "hockney") continue;
    std::vector<std::string> intra = row;
    intra[column("placement")] = "intra";
    intra[column("alpha_us")] = "0.5";
    intra[column("beta_ns_per_byte")] = "0.01";
    two_level.rows.push_back(intra);
    break;
  }
  const std::string two_level_path = ::testing::TempDir() + "/predict_models_two_level.csv";
  testing::write_table(two_level_path, two_level);
  Network from_two_level = network_from_models_csv(two_level_path, selection, 0);
  EXPECT_NEAR(from_two_level.params.beta, truth.beta, 1e-5 * truth.beta);
  set_ranks_per_node(from_two_level, 4, std::nullopt);
  EXPECT_DOUBLE_EQ(from_two_level.intra.alpha, 0.5e-6);
  EXPECT_DOUBLE_EQ(from_two_level.intra.beta, 0.01e-9);

  selection.transport = "ofi";
  try {
    network_from_models_csv(path, selection, 0);
    FAIL();
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find(path + ": no hockney row (p2p fit) for transport='ofi'"),
              std::string::npos)
        << e.what();
  }

  // Sendrecv fits (per rank count) do not stand for the network: the p2p
  // link is still the ping-pong's hockney row, and nothing is ambiguous.
  testing::SyntheticTruth contended = truth;
  contended.sendrecv_ranks = {2, 4};
  const std::vector<NamedTable> with_sendrecv = {
      {"sendrecv.csv", testing::synthetic_table(contended)}};
  const std::string sendrecv_path = ::testing::TempDir() + "/predict_models_sendrecv.csv";
  write_models_csv(sendrecv_path, fit_measurements(aggregate_measurements(with_sendrecv)));
  const Network from_ping_pong = network_from_models_csv(sendrecv_path, NetworkSelection{}, 0);
  EXPECT_NEAR(from_ping_pong.params.beta, truth.beta, 1e-5 * truth.beta);

  CsvTable bad;
  bad.header = {"model", "alpha_us"};
  bad.rows = {{"hockney", "1"}};
  const std::string bad_path = ::testing::TempDir() + "/predict_bad_models.csv";
  testing::write_table(bad_path, bad);
  try {
    network_from_models_csv(bad_path, NetworkSelection{}, 0);
    FAIL();
  } catch (const std::runtime_error& e) {
    EXPECT_EQ(std::string(e.what()),
              bad_path +
                  ": missing columns transport, provider, placement, dtype, op, algorithm, "
                  "beta_ns_per_byte, gamma_ns_per_byte; expected collbench-fit's "
                  "models.csv");
  }
}

// collbench-fit writes every α, β, γ a network is built from, 0 included: an
// empty or non-numeric one is refused naming the file, row and column, not
// read as 0.
TEST(NetworkFromModels, EmptyOrNonNumericParametersAreRefused) {
  testing::SyntheticTruth truth;
  truth.noise = 0;
  const std::vector<NamedTable> tables = {{"synthetic.csv", testing::synthetic_table(truth)}};
  const std::string written = ::testing::TempDir() + "/predict_models_written.csv";
  write_models_csv(written, fit_measurements(aggregate_measurements(tables)));
  const CsvTable good = read_csv_file(written);
  NetworkSelection selection;
  selection.per_algorithm_fits = true;
  const auto row_of = [&](const std::string& model, std::size_t after = 0) {
    for (std::size_t r = after; r < good.rows.size(); ++r) {
      if (good.rows[r][0] == model) return r;
    }
    throw std::logic_error("no " + model + " row");
  };
  struct Case {
    std::string model, column, text, message;
  };
  const std::vector<Case> cases = {
      {"hockney", "alpha_us", "", "alpha_us is empty"},
      {"hockney", "beta_ns_per_byte", "", "beta_ns_per_byte is empty"},
      {"hockney", "alpha_us", "fast", "alpha_us is 'fast'"},
      {"hockney", "alpha_us", "nan", "alpha_us is 'nan'"},
      {"hockney", "beta_ns_per_byte", "-0.8", "beta_ns_per_byte is '-0.8'"},
      {"reduce_gamma", "gamma_ns_per_byte", "", "gamma_ns_per_byte is empty"},
      {"top_down", "alpha_us", "", "alpha_us is empty"},
  };
  for (const Case& c : cases) {
    CsvTable bad = good;
    const std::size_t r = row_of(c.model);
    bad.rows[r][static_cast<std::size_t>(bad.column(c.column))] = c.text;
    const std::string path = ::testing::TempDir() + "/predict_models_damaged.csv";
    testing::write_table(path, bad);
    try {
      network_from_models_csv(path, selection, 0);
      ADD_FAILURE() << c.column << " '" << c.text << "' of a " << c.model << " row was accepted";
    } catch (const std::runtime_error& e) {
      EXPECT_EQ(std::string(e.what()), fmt::format("{}: data row {}: {}; expected a finite number "
                                                   ">= 0",
                                                   path, r + 1, c.message));
    }
  }
}

TEST(Keuper2016, TableIScenarios) {
  const std::vector<ScalingScenario> scenarios = keuper2016_scenarios();
  ASSERT_EQ(scenarios.size(), 7u);
  EXPECT_EQ(scenarios[0].label, "alexnet_caffe B=256 CPU");
  EXPECT_DOUBLE_EQ(scenarios[0].compute_seconds, 2.0);
  EXPECT_DOUBLE_EQ(scenarios[0].parameters, 60965224);  // BVLC AlexNet
  EXPECT_DOUBLE_EQ(scenarios[0].messages.at(0).bytes, 4.0 * 60965224);
  EXPECT_EQ(scenarios[2].label, "alexnet_caffe B=256 TitanX");
  EXPECT_DOUBLE_EQ(scenarios[2].compute_seconds, 0.2);
  EXPECT_EQ(scenarios[6].label, "googlenet B=32 KNL");
  EXPECT_EQ(scenarios[6].batch, 32);
  EXPECT_DOUBLE_EQ(scenarios[6].compute_seconds, 0.32);
}

// With measured compute the paper's models run beside Table I, each with a
// twin whose measured T_compute(B) falls as 1/p, and the README sets the
// three beside each other.
TEST(Keuper2016, MeasuredScenariosBesideTableI) {
  testing::GemmTruth truth;
  truth.models = {"alexnet_caffe", "googlenet"};
  const NamedTable named{"gemm.csv", testing::synthetic_gemm_table(truth)};
  const GemmMeasurements measurements = read_gemm_measurements(std::span(&named, 1));
  const std::vector<ScalingScenario> measured = keuper2016_measured_scenarios(measurements);
  ASSERT_EQ(measured.size(), 4u);
  EXPECT_EQ(measured[0].label, "alexnet_caffe B=256 measured");
  EXPECT_EQ(measured[1].label, "alexnet_caffe B=256 measured-linear");
  EXPECT_EQ(measured[3].label, "googlenet B=32 measured-linear");
  EXPECT_DOUBLE_EQ(measured[0].compute_seconds,
                   compute_at(*measured[0].measured_compute, 256).iteration_seconds);
  EXPECT_DOUBLE_EQ(measured[1].compute_seconds, measured[0].compute_seconds);
  EXPECT_FALSE(measured[1].measured_compute.has_value());
  EXPECT_DOUBLE_EQ(measured[0].messages.at(0).bytes, 4.0 * 60965224);

  const Network fdr = preset_network("fdr", kDefaultGammaSecondsPerByte);
  const std::vector<std::string> algorithms = {"ps_central", "tree", "ring"};
  std::vector<ScalingResult> results;
  std::vector<ScalingScenario> scenarios = keuper2016_scenarios();
  scenarios.insert(scenarios.end(), measured.begin(), measured.end());
  for (const ScalingScenario& s : scenarios) {
    ScalingResult r{s, predict_scaling(s, fdr, algorithms, 256), {}};
    r.summary = summarize_scaling(r.rows);
    results.push_back(std::move(r));
  }
  const std::string readme = keuper2016_readme(results, fdr, "x");
  EXPECT_NE(readme.find("## Measured compute on this machine"), std::string::npos);
  EXPECT_NE(readme.find("**alexnet_caffe B=256.** Measured T_compute(B) = "), std::string::npos)
      << readme;
  EXPECT_NE(readme.find("| p | measured T_compute ÷ T_compute(B)/p | ps_central E, Table I CPU | "
                        "ps_central E, measured-linear | ps_central E, measured |"),
            std::string::npos);
  // The 50% row of the table: the summaries' numbers, in column order.
  const ScalingResult& cpu = results[0];
  const ScalingResult& alexnet_measured = results[7];
  const ScalingResult& alexnet_linear = results[8];
  ASSERT_EQ(alexnet_measured.scenario.label, "alexnet_caffe B=256 measured");
  const auto largest = [](const ScalingResult& r, std::size_t a) {
    const ScalingSummary& s = r.summary[a];
    return s.half_efficiency_nodes > 0 ? s.half_efficiency_nodes - 1 : -1;
  };
  const std::string row50 =
      fmt::format("| largest p with E ≥ 50% | | {} | {} | {} | {} |", largest(cpu, 0),
                  largest(alexnet_linear, 0), largest(alexnet_measured, 0), largest(cpu, 1));
  EXPECT_NE(readme.find(row50), std::string::npos) << row50 << "\n" << readme;
  EXPECT_NE(readme.find(fmt::format("ring p = {} -> {} -> {}", largest(cpu, 2),
                                    largest(alexnet_linear, 2), largest(alexnet_measured, 2))),
            std::string::npos)
      << readme;
  // The compute column: measured over T_compute(B)/p. At p = B that is one
  // sample's rate against B's, efficiency(B) / efficiency(1) of the truth.
  const double at_b = testing::gemm_efficiency(truth, 256) / testing::gemm_efficiency(truth, 1);
  EXPECT_NE(readme.find(fmt::format("| 256 | {:.2f} |", at_b)), std::string::npos) << readme;
  EXPECT_NE(
      readme.find(fmt::format("at one sample per node {:.3g} s",
                              compute_at(*measured[0].measured_compute, 1).iteration_seconds)),
      std::string::npos)
      << readme;
  // Where the GEMM limit bites: the first p whose compute is 10% above 1/p.
  int bites = 0;
  for (const ScalingRow& row : alexnet_measured.rows) {
    if (row.compute_seconds >= 1.1 * alexnet_measured.scenario.compute_seconds / row.nodes) {
      bites = row.nodes;
      break;
    }
  }
  ASSERT_GT(bites, 1);
  EXPECT_NE(readme.find(fmt::format("the measured compute is 10% or more above T_compute(B)/p "
                                    "from p = {} (B/p = {:.3g}) and {:.2f}× it at p = 256",
                                    bites, 256.0 / bites, at_b)),
            std::string::npos)
      << readme;
  // The conclusion says how far the measured compute moves each 50% point
  // from the measured-linear twin's (the truth's GEMMs slow down at small
  // batches: down, so the 1/p limits are optimistic).
  const auto points = [&](const ScalingResult& r) {
    return fmt::format("{}, {}, {}", largest(r, 0), largest(r, 1), largest(r, 2));
  };
  ASSERT_NE(points(alexnet_linear), points(alexnet_measured));
  EXPECT_NE(readme.find(fmt::format("moves the largest p at 50% efficiency of ps_central, tree "
                                    "and ring from {} to {} for alexnet_caffe B=256",
                                    points(alexnet_linear), points(alexnet_measured))),
            std::string::npos)
      << readme;
  EXPECT_NE(readme.find("where it moves, the limits above are optimistic."), std::string::npos);
  // No plots asked for: none linked.
  EXPECT_EQ(readme.find(".png"), std::string::npos);
  // With plots: each model's comparison, by the name plot.py scaling gives
  // it; every scenario here has a model with measured compute, so it is
  // drawn in that comparison and has no figure of its own.
  const std::string plotted = keuper2016_readme(results, fdr, "x", true);
  EXPECT_EQ(plotted.find("](scaling_"), std::string::npos) << plotted;
  EXPECT_NE(plotted.find("the figures below draw each model's efficiency against p"),
            std::string::npos);
  EXPECT_NE(plotted.find("](efficiency_alexnet_caffe_B256.png)"), std::string::npos) << plotted;
  EXPECT_NE(plotted.find("](efficiency_googlenet_B32.png)"), std::string::npos);
  // Table I alone (no measured compute): every scenario's own figure.
  const std::vector<ScalingResult> table_i(results.begin(), results.begin() + 7);
  const std::string plotted_alone = keuper2016_readme(table_i, fdr, "x", true);
  EXPECT_NE(plotted_alone.find("[alexnet_caffe B=256 CPU](scaling_alexnet_caffe_B256_CPU.png)"),
            std::string::npos)
      << plotted_alone;
  EXPECT_NE(plotted_alone.find("[googlenet B=32 KNL](scaling_googlenet_B32_KNL.png)"),
            std::string::npos);
  // The verdict stays the Table I scenarios': the same as without the others.
  const std::vector<ScalingResult> paper_only(results.begin(), results.begin() + 7);
  const std::string paper_readme = keuper2016_readme(paper_only, fdr, "x");
  const auto conclusion = [](const std::string& text) {
    const std::size_t start = text.find("## Conclusion");
    return text.substr(start, text.find(" The model assumes", start) - start);
  };
  EXPECT_EQ(conclusion(readme), conclusion(paper_readme));
  // The simulated comparison (scripts/keuper_sim.sh) is of the measured
  // scenarios: linked only where they are.
  EXPECT_NE(readme.find("## By simulation"), std::string::npos);
  EXPECT_NE(readme.find("](simulated/README.md)"), std::string::npos);
  EXPECT_EQ(paper_readme.find("simulated/"), std::string::npos);
}

// GEMMs at the peak rate whatever the batch: the measured compute falls as
// 1/p, so it moves no 50% point, and the README says so instead of calling
// the 1/p limits optimistic.
TEST(Keuper2016, MeasuredComputeAtFullRateMovesNothing) {
  testing::GemmTruth truth;
  truth.models = {"alexnet_caffe", "googlenet"};
  truth.half_batch = 1e-9;
  const NamedTable named{"gemm.csv", testing::synthetic_gemm_table(truth)};
  const GemmMeasurements measurements = read_gemm_measurements(std::span(&named, 1));
  const Network fdr = preset_network("fdr", kDefaultGammaSecondsPerByte);
  const std::vector<std::string> algorithms = {"ps_central", "tree", "ring"};
  std::vector<ScalingScenario> scenarios = keuper2016_scenarios();
  for (ScalingScenario& s : keuper2016_measured_scenarios(measurements)) scenarios.push_back(s);
  std::vector<ScalingResult> results;
  for (const ScalingScenario& s : scenarios) {
    ScalingResult r{s, predict_scaling(s, fdr, algorithms, 256), {}};
    r.summary = summarize_scaling(r.rows);
    results.push_back(std::move(r));
  }
  const std::string readme = keuper2016_readme(results, fdr, "x");
  EXPECT_NE(readme.find("the measured compute stays within 0.0% of T_compute(B)/p up to p = 256, "
                        "which moves no 50% point."),
            std::string::npos)
      << readme;
  EXPECT_NE(readme.find("leaves the largest p at 50% efficiency of ps_central, tree and ring at "),
            std::string::npos)
      << readme;
  EXPECT_NE(readme.find("here the 1/p assumption does not change the limits above."),
            std::string::npos);
  EXPECT_EQ(readme.find("optimistic"), std::string::npos) << readme;
  // googlenet B=32 with ring stays above 50% up to p = B: the batch limit ends it.
  const ScalingResult& googlenet = results.at(9);
  ASSERT_EQ(googlenet.scenario.label, "googlenet B=32 measured");
  ASSERT_EQ(googlenet.summary.at(2).half_efficiency_nodes, 0);
  EXPECT_NE(readme.find("ring keep efficiency at or above 50% up to p = B = 32: the batch limit, "
                        "not the network or the GEMMs, ends their scaling."),
            std::string::npos)
      << readme;
}

TEST(Keuper2016, ReadmeConclusionFollowsTheNumbers) {
  const Network fdr = preset_network("fdr", kDefaultGammaSecondsPerByte);
  std::vector<ScalingResult> results;
  const std::vector<std::string> algorithms = {"ps_central", "tree", "ring"};
  for (const ScalingScenario& s : keuper2016_scenarios()) {
    ScalingResult r{s, predict_scaling(s, fdr, algorithms, 256), {}};
    r.summary = summarize_scaling(r.rows);
    results.push_back(std::move(r));
  }
  const std::string readme = keuper2016_readme(results, fdr, "collbench-predict --preset x");
  EXPECT_NE(readme.find("## Conclusion"), std::string::npos);
  EXPECT_NE(readme.find("| alexnet_caffe B=256 K80 | 0.90 | ring |"), std::string::npos);
  // On a 100 Tb/s network nothing is communication bound: the verdict flips.
  Network fast = fdr;
  fast.params = {1e-9, 1e-16, 1e-16};
  std::vector<ScalingResult> fast_results;
  for (const ScalingScenario& s : keuper2016_scenarios()) {
    if (s.batch != 256) continue;
    ScalingResult r{s, predict_scaling(s, fast, algorithms, 256), {}};
    r.summary = summarize_scaling(r.rows);
    fast_results.push_back(std::move(r));
  }
  const std::string fast_readme = keuper2016_readme(fast_results, fast, "x");
  EXPECT_NE(fast_readme.find("These numbers contradict"), std::string::npos) << fast_readme;
}

}  // namespace
}  // namespace collbench
