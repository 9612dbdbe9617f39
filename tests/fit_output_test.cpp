// What collbench-fit writes (fit_output.cpp): models.csv, predictions.csv
// and the report.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "collbench/collectives/collective.h"
#include "collbench/models/fit.h"
#include "fit_test_support.h"
#include "models_synthetic.h"

namespace collbench {
namespace {

using testing::expect_within;
using testing::synthetic_points;
using testing::SyntheticTruth;

TEST(Output, ModelsAndPredictionsCsvAreComplete) {
  const SyntheticTruth truth;
  const FitResults results = fit_measurements(synthetic_points(truth));
  const std::string dir = ::testing::TempDir();
  write_models_csv(dir + "/models_test.csv", results);
  write_predictions_csv(dir + "/predictions_test.csv", results);
  const CsvTable models = read_csv_file(dir + "/models_test.csv");
  const CsvTable predictions = read_csv_file(dir + "/predictions_test.csv");
  EXPECT_EQ(models.header, models_csv_columns());
  EXPECT_EQ(models.rows.size(), results.fits.size());
  EXPECT_EQ(predictions.header, predictions_csv_columns());
  EXPECT_EQ(predictions.rows.size(), results.predictions.size());
  // The hockney row carries α in µs and the bandwidth in GB/s.
  for (const auto& row : models.rows) {
    if (row[0] != "hockney") continue;
    expect_within(std::stod(row[static_cast<std::size_t>(models.column("alpha_us"))]),
                  truth.alpha * 1e6, 0.05, "alpha_us");
    expect_within(std::stod(row[static_cast<std::size_t>(models.column("beta_GBps"))]),
                  1e-9 / truth.beta, 0.05, "beta_GBps");
  }
  // Sizes are written whole, so they read back exactly (1048576, not
  // 1.04858e+06): the point's bytes, and each fit's size range.
  const auto bytes_column = static_cast<std::size_t>(predictions.column("bytes"));
  for (std::size_t i = 0; i < predictions.rows.size(); ++i) {
    EXPECT_EQ(predictions.rows[i][bytes_column],
              std::to_string(static_cast<std::uint64_t>(results.predictions[i].point.bytes)));
  }
  const auto max_bytes_column = static_cast<std::size_t>(models.column("max_bytes"));
  for (std::size_t i = 0; i < models.rows.size(); ++i) {
    EXPECT_EQ(models.rows[i][max_bytes_column],
              std::to_string(static_cast<std::uint64_t>(results.fits[i].max_bytes)));
  }
  // Rows in registry order of the algorithms, the order (and so the colour)
  // the plots give them in every figure.
  std::vector<std::string> first_seen, registry_order;
  for (const PointPrediction& p : results.predictions) {
    if (find_collective("allreduce")->find_algorithm(p.point.algorithm) == nullptr) continue;
    if (std::find(first_seen.begin(), first_seen.end(), p.point.algorithm) == first_seen.end()) {
      first_seen.push_back(p.point.algorithm);
    }
  }
  for (const AlgorithmInfo& info : find_collective("allreduce")->algorithms) {
    if (std::find(first_seen.begin(), first_seen.end(), info.name) != first_seen.end()) {
      registry_order.emplace_back(info.name);
    }
  }
  EXPECT_GE(first_seen.size(), 3u);
  EXPECT_EQ(first_seen, registry_order);
  const std::string report = format_report(results, LoadSummary{}, false);
  EXPECT_NE(report.find("measured:  "), std::string::npos);
  EXPECT_NE(report.find("Point-to-point"), std::string::npos);
}

// A β fitted to 0 is a value: models.csv says 0, which collbench-predict
// refuses as "no bandwidth", not an empty field it would refuse as missing.
TEST(ModelsCsv, ABetaOfZeroIsWrittenAsZero) {
  FitResults results;
  ModelFit hockney;
  hockney.model = "hockney";
  hockney.params = {20e-6, 0, 0};
  ModelFit reduce;
  reduce.model = "reduce_gamma";
  reduce.gamma_source = "fitted";
  reduce.params = {1e-6, 0, 0.2e-9};
  results.fits = {hockney, reduce};
  const std::string path = ::testing::TempDir() + "/models_beta_zero.csv";
  write_models_csv(path, results);
  const CsvTable table = read_csv_file(path);
  const auto beta = static_cast<std::size_t>(table.column("beta_ns_per_byte"));
  ASSERT_EQ(table.rows.size(), 2u);
  EXPECT_EQ(table.rows[0][beta], "0");
  EXPECT_EQ(table.rows[1][beta], "");  // t0 + n·γ has no β
}

}  // namespace
}  // namespace collbench
