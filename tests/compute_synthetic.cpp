// Synthetic gemm rows (see compute_synthetic.h).
#include "compute_synthetic.h"

#include <fmt/format.h>

#include "collbench/catalog/catalog.h"

namespace collbench::testing {
namespace {

// The harness CSV's columns that collbench-fit requires of every row, and
// the gemm rows' own.
const std::vector<std::string> kColumns = {
    "benchmark",  "family", "transport", "provider",   "algorithm",    "ranks",     "dtype",
    "op",         "bytes",  "model",     "item",       "multiplicity", "batch",     "pass",
    "repetition", "flops",  "gflops",    "efficiency", "blas",         "median_us", "check"};

double pass_flops(const GemmLayer& layer, bool forward, int batch) {
  if (forward)
    return 2.0 * static_cast<double>(layer.at_batch(GemmPass::forward, batch).multiply_adds());
  return 2.0 *
         static_cast<double>(layer.at_batch(GemmPass::data_gradient, batch).multiply_adds() +
                             layer.at_batch(GemmPass::weight_gradient, batch).multiply_adds());
}

std::vector<std::string> row(const std::string& model, const std::string& item, int multiplicity,
                             const std::string& batch, const std::string& pass, int repetition,
                             double flops, double seconds, double peak) {
  const double gflops = flops / seconds / 1e9;
  return {fmt::format("local/gemm/{}/{}/{}/{}", model, item, pass, batch),
          "local",
          "local",
          "",
          "gemm",
          "1",
          "f32",
          "",
          "",
          model,
          item,
          multiplicity == 0 ? "" : std::to_string(multiplicity),
          batch,
          pass,
          std::to_string(repetition),
          fmt::format("{:.0f}", flops),
          fmt::format("{:.6g}", gflops),
          fmt::format("{:.6g}", gflops * 1e9 / peak),
          "OpenBLAS 0.3.21 (synthetic)",
          fmt::format("{:.17g}", seconds * 1e6),
          "ok"};
}

}  // namespace

double gemm_efficiency(const GemmTruth& truth, double batch) {
  return batch / (batch + truth.half_batch);
}

CsvTable synthetic_gemm_table(const GemmTruth& truth) {
  CsvTable table;
  table.header = kColumns;
  const double peak = truth.peak_flops_per_second;
  for (std::size_t r = 0; r < truth.repetition_factors.size(); ++r) {
    const int repetition = static_cast<int>(r);
    const double factor = truth.repetition_factors[r];
    const double peak_flops = 2.0 * 2048.0 * 2048.0 * 2048.0;
    table.rows.push_back(
        row("", "", 0, "", "peak", repetition, peak_flops, factor * peak_flops / peak, peak));
    for (const std::string& name : truth.models) {
      const Model& model = find_model(name);
      for (const DistinctGemm& group : distinct_gemm_layers(model)) {
        const GemmLayer& layer = model.gemm_layers[group.layer];
        for (int batch : truth.batches) {
          for (bool forward : {true, false}) {
            const double flops = pass_flops(layer, forward, batch);
            const double seconds = factor * flops / (peak * gemm_efficiency(truth, batch));
            table.rows.push_back(row(name, layer.name, group.multiplicity, std::to_string(batch),
                                     forward ? "forward" : "backward", repetition, flops, seconds,
                                     peak));
          }
        }
      }
    }
  }
  return table;
}

}  // namespace collbench::testing
