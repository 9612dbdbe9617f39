// The compute model (compute.h): gemm rows read and checked against the
// catalog, per-layer times at measured, interpolated and extrapolated
// batches, the refusals, and the bucket timeline against hand-computed
// schedules.
#include "collbench/models/compute.h"

#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include "compute_synthetic.h"
#include "models_synthetic.h"

namespace collbench {
namespace {

using testing::GemmTruth;

GemmMeasurements measurements_of(const CsvTable& table, const std::string& source = "gemm.csv") {
  const NamedTable named{source, table};
  return read_gemm_measurements(std::span(&named, 1));
}

MeasuredCompute compute_of(const GemmTruth& truth, const std::string& model = "alexnet") {
  return measured_compute(measurements_of(testing::synthetic_gemm_table(truth)), find_model(model));
}

// The message of the std::runtime_error `call` throws; fails when it does not.
template <typename Call>
std::string error_of(Call&& call) {
  try {
    call();
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  ADD_FAILURE() << "no std::runtime_error";
  return "";
}

std::size_t column(const CsvTable& table, std::string_view name) {
  return static_cast<std::size_t>(table.column(name));
}

// The first row of `table` whose `name` column is `value`.
std::vector<std::string>& row_where(CsvTable& table, std::string_view name,
                                    std::string_view value) {
  for (std::vector<std::string>& row : table.rows) {
    if (row[column(table, name)] == value) return row;
  }
  throw std::logic_error("no such row");
}

// ------------------------------------------------------------------ compute

// At a measured batch every layer runs at peak · b / (b + 8), so the whole
// pass does too; the peak row runs at the peak.
TEST(MeasuredCompute, MeasuredBatchesAreExact) {
  const GemmTruth truth;
  const MeasuredCompute compute = compute_of(truth);
  EXPECT_EQ(compute.batches, truth.batches);
  EXPECT_NEAR(compute.peak_flops_per_second, 100e9, 1e-6);
  EXPECT_EQ(compute.blas, "OpenBLAS 0.3.21 (synthetic)");
  const Model& alexnet = find_model("alexnet");
  // Forward and backward FLOPs from the catalog: the forward is the model's.
  EXPECT_DOUBLE_EQ(compute.forward_flops_per_sample,
                   static_cast<double>(alexnet.forward_flops_per_sample));
  for (int batch : {1, 8, 256}) {
    const ComputeAtBatch at = compute_at(compute, batch);
    const double efficiency = batch / (batch + 8.0);
    EXPECT_NEAR(at.gflops, 100 * efficiency, 1e-9 * 100) << batch;
    EXPECT_NEAR(at.efficiency, efficiency, 1e-11) << batch;
    EXPECT_NEAR(at.forward_seconds, compute.forward_flops_per_sample * batch / (100e9 * efficiency),
                1e-12 * at.forward_seconds);
    EXPECT_DOUBLE_EQ(at.iteration_seconds, at.forward_seconds + at.backward_seconds);
  }
}

// Between measured batches each layer's time is a power law of the batch
// through its neighbours: t(3) = t(2) · (t(4)/t(2))^(log(3/2)/log 2). The
// truth, t ∝ b + 8, is linear: 11 against log-log's 11.1253.
TEST(MeasuredCompute, BetweenMeasuredBatchesLogLog) {
  const MeasuredCompute compute = compute_of(GemmTruth{});
  const std::vector<PassSeconds> at2 = layer_seconds(compute, 2);
  const std::vector<PassSeconds> at3 = layer_seconds(compute, 3);
  const std::vector<PassSeconds> at4 = layer_seconds(compute, 4);
  ASSERT_EQ(at3.size(), find_model("alexnet").gemm_layers.size());
  const double weight = std::log(1.5) / std::log(2.0);
  for (std::size_t l = 0; l < at3.size(); ++l) {
    EXPECT_NEAR(at3[l].forward, at2[l].forward * std::pow(at4[l].forward / at2[l].forward, weight),
                1e-12 * at3[l].forward);
    EXPECT_NEAR(at3[l].backward,
                at2[l].backward * std::pow(at4[l].backward / at2[l].backward, weight),
                1e-12 * at3[l].backward);
    // (12/10)^0.585 = 1.11253: the interpolation, not the truth's 11/10.
    EXPECT_NEAR(at3[l].forward / at2[l].forward, std::pow(1.2, weight), 1e-12);
  }
  // A batch that is not whole (B/p = 256/3) is interpolated the same way.
  const double b = 256.0 / 3;
  const double w = std::log(b / 64) / std::log(2.0);
  EXPECT_NEAR(
      layer_seconds(compute, b)[0].forward,
      layer_seconds(compute, 64)[0].forward *
          std::pow(layer_seconds(compute, 128)[0].forward / layer_seconds(compute, 64)[0].forward,
                   w),
      1e-15);
}

// Above the largest measured batch time is proportional to the batch: the
// GFLOP/s of batch 256.
TEST(MeasuredCompute, AboveTheLargestBatchTimeScalesWithIt) {
  const MeasuredCompute compute = compute_of(GemmTruth{});
  const ComputeAtBatch at256 = compute_at(compute, 256);
  const ComputeAtBatch at1024 = compute_at(compute, 1024);
  EXPECT_NEAR(at1024.forward_seconds, 4 * at256.forward_seconds, 1e-12 * at1024.forward_seconds);
  EXPECT_NEAR(at1024.backward_seconds, 4 * at256.backward_seconds, 1e-12 * at1024.backward_seconds);
  EXPECT_NEAR(at1024.gflops, at256.gflops, 1e-9);
}

TEST(MeasuredCompute, BelowTheSmallestBatchIsRefused) {
  GemmTruth from4;
  from4.batches = {4, 8, 16};
  const MeasuredCompute compute = compute_of(from4);
  EXPECT_NO_THROW(layer_seconds(compute, 4));
  EXPECT_EQ(error_of([&] { layer_seconds(compute, 3.5); }),
            "gemm.csv: model alexnet at batch 3.5: below the smallest measured batch (4); "
            "batches there: 4, 8, 16 (the time of smaller GEMMs is not extrapolated: measure "
            "them)");
  EXPECT_THROW(layer_seconds(compute, std::nan("")), std::runtime_error);
}

// Repetitions of one benchmark count by their median: 1, 1.1 and 5 times
// the truth give 1.1 (a mean would give 2.37).
TEST(MeasuredCompute, RepetitionsCountByTheirMedian) {
  GemmTruth noisy;
  noisy.repetition_factors = {1.0, 5.0, 1.1};
  const ComputeAtBatch at = compute_at(compute_of(noisy), 16);
  EXPECT_NEAR(at.gflops, 100 * (16.0 / 24) / 1.1, 1e-9);
  // The peak's median is 1.1 times its truth too: against it, the truth's.
  EXPECT_NEAR(at.efficiency, 16.0 / 24, 1e-12);
}

// A wrong result is no time, nor is a benchmark the harness did not time.
TEST(MeasuredCompute, WrongAndUntimedRowsAreSkipped) {
  CsvTable table = testing::synthetic_gemm_table(GemmTruth{});
  const CsvTable good = table;
  // A second repetition of one benchmark, ten times slower, marked wrong.
  std::vector<std::string> wrong = table.rows[1];
  wrong[column(table, "median_us")] =
      std::to_string(10 * std::stod(wrong[column(table, "median_us")]));
  wrong[column(table, "check")] = "wrong";
  table.rows.push_back(wrong);
  std::vector<std::string> untimed = table.rows[1];
  untimed[column(table, "median_us")] = "";
  table.rows.push_back(untimed);
  const MeasuredCompute compute = measured_compute(measurements_of(table), find_model("alexnet"));
  const MeasuredCompute expected = measured_compute(measurements_of(good), find_model("alexnet"));
  EXPECT_DOUBLE_EQ(compute_at(compute, 1).forward_seconds, compute_at(expected, 1).forward_seconds);
}

TEST(MeasuredCompute, TheFastestPeakIsThePeak) {
  CsvTable table = testing::synthetic_gemm_table(GemmTruth{});
  std::vector<std::string> slower = row_where(table, "pass", "peak");
  slower[column(table, "flops")] = "1000000000";
  slower[column(table, "median_us")] = "1000000";  // 1 GFLOP/s
  table.rows.push_back(slower);
  EXPECT_NEAR(measurements_of(table).peak_flops_per_second, 100e9, 1e-6);
  CsvTable no_peak = testing::synthetic_gemm_table(GemmTruth{});
  std::erase_if(no_peak.rows,
                [&](const auto& row) { return row[column(no_peak, "pass")] == "peak"; });
  const MeasuredCompute compute = measured_compute(measurements_of(no_peak), find_model("alexnet"));
  EXPECT_TRUE(std::isnan(compute_at(compute, 8).efficiency));
  EXPECT_NEAR(compute_at(compute, 8).gflops, 50, 1e-9);
}

TEST(MeasuredCompute, AModelWithoutRowsIsRefusedListingTheModelsThere) {
  const GemmMeasurements measurements = measurements_of(testing::synthetic_gemm_table(GemmTruth{}));
  EXPECT_EQ(error_of([&] { measured_compute(measurements, find_model("googlenet")); }),
            "gemm.csv: no gemm rows for model googlenet; models there: alexnet");
}

TEST(MeasuredCompute, AGroupMissingAtABatchIsRefused) {
  CsvTable table = testing::synthetic_gemm_table(GemmTruth{});
  const Model& alexnet = find_model("alexnet");
  const std::string last = alexnet.gemm_layers[distinct_gemm_layers(alexnet).back().layer].name;
  std::erase_if(table.rows, [&](const auto& row) {
    return row[column(table, "item")] == last && row[column(table, "batch")] == "32" &&
           row[column(table, "pass")] == "backward";
  });
  EXPECT_EQ(error_of([&] { measured_compute(measurements_of(table), alexnet); }),
            "gemm.csv: model alexnet at batch 32: no backward row for layer " + last +
                " (a group of 1); batches there: 1, 2, 4, 8, 16, 32, 64, 128, 256");
}

// A CSV of another catalog version is refused, not misread: an item that is
// no group's first layer, a multiplicity or FLOP count that differs.
TEST(MeasuredCompute, RowsThatDisagreeWithTheCatalogAreRefused) {
  const Model& alexnet = find_model("alexnet");
  const std::string first = alexnet.gemm_layers[0].name;
  {
    CsvTable table = testing::synthetic_gemm_table(GemmTruth{});
    for (auto& row : table.rows) {
      if (row[column(table, "item")] == first) row[column(table, "item")] = "features.99";
    }
    EXPECT_NE(error_of([&] { measured_compute(measurements_of(table), alexnet); })
                  .find("item 'features.99' is not the first layer of a group of alexnet's GEMM "
                        "layers in the catalog"),
              std::string::npos);
  }
  {
    CsvTable table = testing::synthetic_gemm_table(GemmTruth{});
    row_where(table, "item", first)[column(table, "multiplicity")] = "2";
    EXPECT_NE(error_of([&] { measured_compute(measurements_of(table), alexnet); })
                  .find("multiplicity of alexnet " + first +
                        " is 2, but the catalog's alexnet "
                        "has 1 layers with its products"),
              std::string::npos);
  }
  {
    CsvTable table = testing::synthetic_gemm_table(GemmTruth{});
    std::vector<std::string>& row = row_where(table, "item", first);
    row[column(table, "flops")] = std::to_string(std::stod(row[column(table, "flops")]) * 1.001);
    EXPECT_NE(error_of([&] {
                measured_compute(measurements_of(table), alexnet);
              }).find("but the catalog's shapes give"),
              std::string::npos);
  }
}

TEST(ReadGemmMeasurements, BadValuesAreRefusedNamingTheRow) {
  struct Case {
    std::string column, text, message;
  };
  const std::vector<Case> cases = {
      {"batch", "0", "batch is '0'; expected a whole number of samples >= 1"},
      {"batch", "2.5", "batch is '2.5'; expected a whole number of samples >= 1"},
      {"median_us", "-3", "median_us is '-3'; expected a finite number of µs > 0"},
      {"median_us", "nan", "median_us is 'nan'; expected a finite number of µs > 0"},
      {"flops", "0", "flops is '0'; expected a finite number of FLOPs > 0"},
      {"multiplicity", "x", "multiplicity is 'x'; expected a whole number of layers >= 1"},
      {"pass", "sideways", "pass is 'sideways'; expected forward, backward or peak"},
  };
  for (const Case& c : cases) {
    CsvTable table = testing::synthetic_gemm_table(GemmTruth{});
    table.rows[2][column(table, c.column)] = c.text;  // row 1 is the peak
    EXPECT_EQ(error_of([&] { measurements_of(table); }), "gemm.csv: data row 3: " + c.message);
  }
  // Two rows of one benchmark that disagree on its FLOPs.
  CsvTable table = testing::synthetic_gemm_table(GemmTruth{});
  std::vector<std::string> other = table.rows[1];
  other[column(table, "flops")] = "12345";
  table.rows.push_back(other);
  EXPECT_NE(error_of([&] { measurements_of(table); }).find("one benchmark's rows must agree"),
            std::string::npos);
}

// A harness CSV without gemm rows has nothing to read (collbench-fit's
// inputs before the gemm family); one with gemm rows needs their columns.
TEST(ReadGemmMeasurements, ColumnsAreRequiredOnlyWithGemmRows) {
  CsvTable other;
  other.header = {"family", "algorithm", "median_us"};
  other.rows = {{"allreduce", "ring", "3"}};
  EXPECT_TRUE(measurements_of(other).empty());
  CsvTable table = testing::synthetic_gemm_table(GemmTruth{});
  const std::size_t batch = column(table, "batch");
  table.header.erase(table.header.begin() + static_cast<std::ptrdiff_t>(batch));
  for (auto& row : table.rows) row.erase(row.begin() + static_cast<std::ptrdiff_t>(batch));
  EXPECT_EQ(error_of([&] { measurements_of(table); }),
            "gemm.csv: missing column batch; the gemm rows of the harness CSV (results/README.md) "
            "need family, algorithm, model, item, multiplicity, batch, pass, flops, median_us");
}

TEST(ReadGemmFile, RefusesAFileWithoutGemmRowsOrColumns) {
  const std::string path = ::testing::TempDir() + "/compute_no_gemm.csv";
  CsvTable other;
  other.header = gemm_columns();
  other.rows = {{"allreduce", "ring", "", "", "", "", "", "", "3"}};
  testing::write_table(path, other);
  EXPECT_EQ(error_of([&] { read_gemm_file(path); }),
            path + ": no timed gemm rows (family=local, algorithm=gemm, pass forward or backward)");
  other.header = {"family", "algorithm", "median_us"};
  other.rows = {{"allreduce", "ring", "3"}};
  testing::write_table(path, other);
  EXPECT_NE(error_of([&] {
              read_gemm_file(path);
            }).find(path + ": missing columns model, item, multiplicity, batch, pass, flops;"),
            std::string::npos);
}

TEST(WriteComputeCsv, OneRowPerModelAndMeasuredBatch) {
  GemmTruth truth;
  truth.models = {"alexnet", "resnet50"};
  truth.batches = {1, 4};
  const GemmMeasurements measurements = measurements_of(testing::synthetic_gemm_table(truth));
  const std::vector<MeasuredCompute> models = {
      measured_compute(measurements, find_model("alexnet")),
      measured_compute(measurements, find_model("resnet50"))};
  const std::string path = ::testing::TempDir() + "/compute.csv";
  write_compute_csv(path, models);
  const CsvTable written = read_csv_file(path);
  EXPECT_EQ(written.header, compute_csv_columns());
  ASSERT_EQ(written.rows.size(), 4u);
  EXPECT_EQ(written.rows[2][0], "resnet50");
  EXPECT_EQ(written.rows[2][1], "1");
  EXPECT_NEAR(std::stod(written.rows[3][column(written, "gflops")]), 100 * 4.0 / 12, 1e-4);
  EXPECT_NEAR(std::stod(written.rows[3][column(written, "efficiency")]), 4.0 / 12, 1e-6);
  EXPECT_EQ(written.rows[3][column(written, "peak_gflops")], "100");
  EXPECT_NEAR(std::stod(written.rows[1][column(written, "iteration_s")]),
              compute_at(models[0], 4).iteration_seconds,
              1e-6 * compute_at(models[0], 4).iteration_seconds);
}

// ----------------------------------------------------------------- timeline

// Four layers of 1 s backward after a 1 s forward: layer 3's backward ends
// at 2 s, layer 2's at 3, layer 1's at 4, layer 0's at 5.
constexpr double kForward = 1;
const std::vector<double> kBackward = {1, 1, 1, 1};

// Every exchange ends before the next bucket is ready; the last one, ready
// at the end of backprop, costs nothing.
TEST(SimulateIteration, FullOverlap) {
  const std::vector<TimelineBucket> buckets = {{3, 0.5}, {2, 0.5}, {1, 0.5}, {0, 0}};
  const IterationTimeline t = simulate_iteration(kForward, kBackward, buckets);
  ASSERT_EQ(t.buckets.size(), 4u);
  const double expected[][3] = {{2, 2, 2.5}, {3, 3, 3.5}, {4, 4, 4.5}, {5, 5, 5}};
  for (std::size_t k = 0; k < 4; ++k) {
    EXPECT_DOUBLE_EQ(t.buckets[k].ready_seconds, expected[k][0]) << k;
    EXPECT_DOUBLE_EQ(t.buckets[k].start_seconds, expected[k][1]) << k;
    EXPECT_DOUBLE_EQ(t.buckets[k].end_seconds, expected[k][2]) << k;
  }
  EXPECT_DOUBLE_EQ(t.compute_seconds, 5);
  EXPECT_DOUBLE_EQ(t.communication_seconds, 1.5);
  EXPECT_DOUBLE_EQ(t.iteration_seconds, 5);
  EXPECT_DOUBLE_EQ(t.exposed_seconds, 0);
  EXPECT_DOUBLE_EQ(t.overlap, 1);
}

// Every bucket needs layer 0's gradient: nothing starts before backprop ends.
TEST(SimulateIteration, NoOverlap) {
  const std::vector<TimelineBucket> buckets = {{0, 1}, {0, 2}};
  const IterationTimeline t = simulate_iteration(kForward, kBackward, buckets);
  EXPECT_DOUBLE_EQ(t.buckets[0].ready_seconds, 5);
  EXPECT_DOUBLE_EQ(t.buckets[0].end_seconds, 6);
  EXPECT_DOUBLE_EQ(t.buckets[1].ready_seconds, 5);
  EXPECT_DOUBLE_EQ(t.buckets[1].start_seconds, 6);
  EXPECT_DOUBLE_EQ(t.buckets[1].end_seconds, 8);
  EXPECT_DOUBLE_EQ(t.iteration_seconds, 8);
  EXPECT_DOUBLE_EQ(t.exposed_seconds, 3);
  EXPECT_DOUBLE_EQ(t.overlap, 0);
}

// Forward 0.5 s; backward of layers 2, 1, 0: 0.5, 0.3, 0.2 s, ending at
// 1.0, 1.3, 1.5 s. Bucket 0 (layer 2) runs 1.0-1.4; bucket 1, ready at 1.3,
// waits for it: 1.4-1.8; bucket 2, ready at 1.5, runs 1.8-1.9. Compute ends
// at 1.5: 0.4 s of the 0.9 s exposed, overlap 1 - 0.4/0.9 = 5/9.
TEST(SimulateIteration, PartialOverlapQueuesBehindTheExchangeBefore) {
  const std::vector<double> backward = {0.2, 0.3, 0.5};
  const std::vector<TimelineBucket> buckets = {{2, 0.4}, {1, 0.4}, {0, 0.1}};
  const IterationTimeline t = simulate_iteration(0.5, backward, buckets);
  const double expected[][3] = {{1.0, 1.0, 1.4}, {1.3, 1.4, 1.8}, {1.5, 1.8, 1.9}};
  for (std::size_t k = 0; k < 3; ++k) {
    EXPECT_NEAR(t.buckets[k].ready_seconds, expected[k][0], 1e-15) << k;
    EXPECT_NEAR(t.buckets[k].start_seconds, expected[k][1], 1e-15) << k;
    EXPECT_NEAR(t.buckets[k].end_seconds, expected[k][2], 1e-15) << k;
  }
  EXPECT_NEAR(t.compute_seconds, 1.5, 1e-15);
  EXPECT_NEAR(t.communication_seconds, 0.9, 1e-15);
  EXPECT_NEAR(t.iteration_seconds, 1.9, 1e-15);
  EXPECT_NEAR(t.exposed_seconds, 0.4, 1e-15);
  EXPECT_NEAR(t.overlap, 5.0 / 9, 1e-15);
}

// Nothing to send: the iteration is the compute and the overlap is 1 by
// definition (no exposed communication).
TEST(SimulateIteration, NoCommunication) {
  const IterationTimeline none = simulate_iteration(kForward, kBackward, {});
  EXPECT_DOUBLE_EQ(none.iteration_seconds, 5);
  EXPECT_DOUBLE_EQ(none.overlap, 1);
  const std::vector<TimelineBucket> free = {{2, 0}};
  EXPECT_DOUBLE_EQ(simulate_iteration(kForward, kBackward, free).overlap, 1);
  // Exchanges that end before compute does leave the iteration the compute's.
  const std::vector<TimelineBucket> early = {{3, 0.25}};
  const IterationTimeline t = simulate_iteration(kForward, kBackward, early);
  EXPECT_DOUBLE_EQ(t.iteration_seconds, 5);
  EXPECT_DOUBLE_EQ(t.buckets[0].end_seconds, 2.25);
}

TEST(SimulateIteration, RefusesWhatIsNoTimeline) {
  const std::vector<TimelineBucket> beyond = {{4, 1}};
  EXPECT_THROW(simulate_iteration(kForward, kBackward, beyond), std::invalid_argument);
  const std::vector<TimelineBucket> negative = {{0, -1}};
  EXPECT_THROW(simulate_iteration(kForward, kBackward, negative), std::invalid_argument);
  const std::vector<double> nan_layer = {1, std::nan("")};
  EXPECT_THROW(simulate_iteration(kForward, nan_layer, {}), std::invalid_argument);
  EXPECT_THROW(simulate_iteration(-1, kBackward, {}), std::invalid_argument);
  const std::vector<double> ready = {1, 2}, cost = {1};
  EXPECT_THROW(schedule_exchanges(3, ready, cost), std::invalid_argument);
}

}  // namespace
}  // namespace collbench
