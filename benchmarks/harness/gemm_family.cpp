// The gemm family (--families gemm): the matrix products of training, timed
// through OpenBLAS on rank 0 (the other ranks wait in a sleeping poll, as
// for local/reduce), in f32:
//
//   local/gemm/peak/<side>                     C = A·B, all three side x side: the
//                                              rate a large product reaches, the
//                                              peak every other row's efficiency is
//                                              against (registered first)
//   local/gemm/<model>/<batch>/forward/<layer> the layer's forward product at a
//                                              per-rank batch, C = A·B
//   local/gemm/<model>/<batch>/backward/<layer> its backward products: the weight
//                                              gradient dB = Aᵀ·dC, then the data
//                                              gradient dA = dC·Bᵀ (none for a first
//                                              convolution, which reads the image)
//
// The shapes are the catalog's (GemmLayer, catalog.h): a convolution as the
// im2col product (m = batch·H_out·W_out, n = C_out, k = C_in·k_h·k_w), a
// linear layer on its rows, attention's scores and weighted values per head
// and sample. The im2col copy itself, activations, normalization and the
// optimizer are not timed: they are not GEMMs. Layers whose products are
// the same at every batch (a ResNet stage's repeated blocks, a
// transformer's layers) share one benchmark, its multiplicity the number of
// layers; its time is one layer's.
//
// Buffers and the check: GemmProducts (gemm_family.h).
#include "gemm_family.h"

#include <cblas.h>
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <string>
#include <vector>

#include "aligned_buffer.h"
#include "collbench/catalog/catalog.h"
#include "families.h"
#include "family.h"
#include "local_kernel.h"
#include "planner.h"
#include "single_process.h"

namespace collbench::harness {
namespace {

// Outputs of each product the check compares (the last one among them).
constexpr std::uint64_t kCheckedOutputs = 16;

// The operand buffers of one pass of one layer.
enum class Operand : std::uint32_t { a, b, c };

// The check's inputs: {-1, 0, 1} from a hash of operand and index.
float input_value(Operand operand, std::uint64_t index) {
  std::uint64_t x =
      (index + 1) * 0x9E3779B97F4A7C15ull ^ (static_cast<std::uint64_t>(operand) << 56);
  x ^= x >> 31;
  x *= 0xBF58476D1CE4E5B9ull;
  x ^= x >> 29;
  return static_cast<float>(static_cast<int>(x % 3) - 1);
}

float* floats(const AlignedBuffer& buffer) { return reinterpret_cast<float*>(buffer.data()); }
int int_of(std::int64_t dimension) { return static_cast<int>(dimension); }
std::size_t float_bytes(std::int64_t elements) {
  return static_cast<std::size_t>(elements) * sizeof(float);
}

void fill(const AlignedBuffer& buffer, Operand operand) {
  float* values = floats(buffer);
  const std::size_t count = buffer.size() / sizeof(float);
  for (std::size_t i = 0; i < count; ++i) values[i] = input_value(operand, i);
}

// One output matrix of a product (rows x columns, row-major, `count` of
// them) and the exact value each element must have.
struct CheckedOutput {
  const char* name;
  const AlignedBuffer* buffer;
  std::int64_t rows, columns, inner;
};

}  // namespace

GemmProducts::GemmProducts(const GemmShape& shape, bool data_gradient, bool backward)
    : shape_(shape),
      data_gradient_(data_gradient),
      a_(float_bytes(shape.m * shape.k * shape.count)),
      b_(float_bytes(shape.k * shape.n * shape.count)),
      c_(float_bytes(shape.m * shape.n * shape.count)),
      weight_gradient_(backward ? float_bytes(shape.k * shape.n * shape.count) : 0) {}

std::uint64_t GemmProducts::bytes() const {
  return a_.size() + b_.size() + c_.size() + weight_gradient_.size();
}

void GemmProducts::fill() const {
  harness::fill(a_, Operand::a);
  harness::fill(b_, Operand::b);
  harness::fill(c_, Operand::c);
}

void GemmProducts::forward() const {
  const auto [m, n, k, count] = shape_;
  for (std::int64_t p = 0; p < count; ++p) {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, int_of(m), int_of(n), int_of(k), 1.0f,
                floats(a_) + p * m * k, int_of(k), floats(b_) + p * k * n, int_of(n), 0.0f,
                floats(c_) + p * m * n, int_of(n));
  }
}

// The weight gradient first: it reads A, which the data gradient then
// overwrites.
void GemmProducts::backward() const {
  const auto [m, n, k, count] = shape_;
  for (std::int64_t p = 0; p < count; ++p) {
    float* a = floats(a_) + p * m * k;
    const float* b = floats(b_) + p * k * n;
    const float* dc = floats(c_) + p * m * n;
    cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, int_of(k), int_of(n), int_of(m), 1.0f, a,
                int_of(k), dc, int_of(n), 0.0f, floats(weight_gradient_) + p * k * n, int_of(n));
    if (!data_gradient_) continue;
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, int_of(m), int_of(k), int_of(n), 1.0f, dc,
                int_of(n), b, int_of(n), 0.0f, a, int_of(k));
  }
}

CheckResult GemmProducts::check(bool backward) {
  const auto [m, n, k, count] = shape_;
  // The value at `index` of product p of an input operand, as fill() put it.
  const auto in = [&](Operand operand, std::int64_t p, std::int64_t index) {
    const std::int64_t per_product = operand == Operand::a   ? m * k
                                     : operand == Operand::b ? k * n
                                                             : m * n;
    return static_cast<double>(
        input_value(operand, static_cast<std::uint64_t>(p * per_product + index)));
  };
  // The exact value of output `name` at (row, column) of product p: C =
  // A·B, dB = Aᵀ·dC, dA = dC·Bᵀ.
  const auto expected = [&](char name, std::int64_t p, std::int64_t row, std::int64_t column) {
    double sum = 0;
    if (name == 'C') {
      for (std::int64_t l = 0; l < k; ++l) {
        sum += in(Operand::a, p, row * k + l) * in(Operand::b, p, l * n + column);
      }
    } else if (name == 'W') {
      for (std::int64_t i = 0; i < m; ++i) {
        sum += in(Operand::a, p, i * k + row) * in(Operand::c, p, i * n + column);
      }
    } else {
      for (std::int64_t j = 0; j < n; ++j) {
        sum += in(Operand::c, p, row * n + j) * in(Operand::b, p, column * n + j);
      }
    }
    return sum;
  };
  std::vector<std::pair<char, CheckedOutput>> outputs;
  if (!backward) {
    outputs.push_back({'C', {"C", &c_, m, n, k}});
  } else {
    outputs.push_back({'W', {"dB", &weight_gradient_, k, n, m}});
    if (data_gradient_) outputs.push_back({'A', {"dA", &a_, m, k, n}});
  }
  CheckResult result;
  for (const auto& [kind, output] : outputs) {
    const std::int64_t elements = output.rows * output.columns;
    for (std::int64_t p = 0; p < count; ++p) {
      for (std::uint64_t sample = 0; sample < kCheckedOutputs; ++sample) {
        // Spread over the matrix, and its last element.
        const std::int64_t flat =
            sample + 1 == kCheckedOutputs
                ? elements - 1
                : static_cast<std::int64_t>(sample * 0x9E3779B1ull %
                                            static_cast<std::uint64_t>(elements));
        const std::int64_t row = flat / output.columns;
        const std::int64_t column = flat % output.columns;
        const double want = expected(kind, p, row, column);
        const float got = floats(*output.buffer)[p * elements + flat];
        ++result.checked;
        if (static_cast<double>(got) == want) continue;
        if (result.wrong++ == 0) {
          result.first_mismatch =
              fmt::format("{} of product {}, row {}, column {}: got {}, expected {}", output.name,
                          p, row, column, got, want);
        }
      }
    }
  }
  return result;
}

namespace {

class PreparedGemm final : public LocalKernelCase {
 public:
  PreparedGemm(const BenchmarkCase& benchmark_case, RunContext& context)
      : LocalKernelCase(context, /*every_rank=*/false),
        backward_(benchmark_case.pass == kGemmBackward),
        // The other ranks only wait: no buffers.
        products_(runs_kernel() ? benchmark_case.gemm.per_sample : GemmShape{0, 0, 0, 0},
                  benchmark_case.gemm.input_gradient, backward_) {}

  CheckResult check(const BenchmarkCase& /*benchmark_case*/) override {
    if (runs_kernel()) products_.fill();
    context_.synchronize();
    run_calls(1);
    if (!runs_kernel()) return {};
    return products_.check(backward_);
  }

  double call(const BenchmarkCase& benchmark_case) override {
    return run_calls(benchmark_case.calls_per_sample);
  }

 private:
  double run_calls(std::uint64_t calls) {
    return time_calls(calls, [&] { backward_ ? products_.backward() : products_.forward(); });
  }

  const bool backward_;
  GemmProducts products_;
};

class GemmFamily final : public FamilyRunner {
 public:
  std::string family_column(const BenchmarkCase&) const override { return "local"; }
  std::string algorithm_column(const BenchmarkCase&) const override { return "gemm"; }
  std::unique_ptr<PreparedCase> prepare(const BenchmarkCase& benchmark_case,
                                        RunContext& context) const override {
    return std::make_unique<PreparedGemm>(benchmark_case, context);
  }
  // On rank 0 alone, nothing through the transport.
  bool every_rank_timed() const override { return false; }
  bool through_transport() const override { return false; }
  // A gemm case's buffers grow with its batch.
  std::string_view smaller_hint() const override { return "use smaller --gemm-batches"; }
};

}  // namespace

std::uint64_t gemm_operand_bytes(const GemmShape& s, bool backward) {
  const std::int64_t elements = s.m * s.k + s.k * s.n + s.m * s.n + (backward ? s.k * s.n : 0);
  return static_cast<std::uint64_t>(elements * s.count) * sizeof(float);
}

const FamilyRunner& local_gemm_family() {
  static const GemmFamily family;
  return family;
}

double BenchmarkCase::flops() const {
  if (family != &local_gemm_family()) return 0;
  if (pass != kGemmBackward) return 2.0 * static_cast<double>(gemm.per_sample.multiply_adds());
  const double data = gemm.input_gradient ? 1.0 : 0.0;
  return 2.0 * (1.0 + data) * static_cast<double>(gemm.per_sample.multiply_adds());
}

void configure_blas(int threads) { openblas_set_num_threads(threads); }

std::string blas_description() {
  const char* coretype = std::getenv("OPENBLAS_CORETYPE");
  const int threads = openblas_get_num_threads();
  return fmt::format("{} ({} kernel); {} thread{}; OPENBLAS_CORETYPE={}", openblas_get_config(),
                     openblas_get_corename(), threads, threads == 1 ? "" : "s",
                     coretype == nullptr ? "unset" : coretype);
}

// Planning (planner.h).

namespace {

// The models --gemm-models names; else those of --workload; else the default.
std::vector<std::string> gemm_models(const Options& options,
                                     const std::vector<Workload>& workloads) {
  if (!options.gemm_models.empty()) return options.gemm_models;
  std::vector<std::string> models;
  for (const Workload& workload : workloads) {
    if (workload.model.empty()) continue;
    if (std::find(models.begin(), models.end(), workload.model) == models.end()) {
      models.push_back(workload.model);
    }
  }
  if (models.empty()) models.assign(std::begin(kDefaultGemmModels), std::end(kDefaultGemmModels));
  return models;
}

BenchmarkCase gemm_case(std::string name, const GemmLayer& product, std::string pass, int batch) {
  BenchmarkCase entry;
  entry.name = std::move(name);
  entry.family = &local_gemm_family();
  entry.gemm = product;
  entry.pass = std::move(pass);
  entry.batch = batch;
  entry.message_bytes = {gemm_operand_bytes(product.per_sample, entry.pass == kGemmBackward)};
  return entry;
}

// The layer's products at `batch` as one forward product (GemmLayer's m or
// count times the batch), so that a case runs them as they are.
GemmLayer at_batch(const GemmLayer& layer, int batch) {
  GemmLayer batched = layer;
  batched.per_sample = layer.at_batch(GemmPass::forward, batch);
  batched.batch_in_rows = true;
  return batched;
}

void plan_gemm_cases(Planner& planner, const PlanInputs& inputs) {
  const std::vector<Workload>& workloads = inputs.workloads;
  const Options& options = planner.options();
  if (!options.has_family("gemm")) return;
  const GemmLayer peak{.name = "peak",
                       .per_sample = {kGemmPeakSide, kGemmPeakSide, kGemmPeakSide, 1}};
  planner.add(gemm_case(fmt::format("local/gemm/peak/{}", kGemmPeakSide), peak, kGemmPeak, 0));
  for (const std::string& name : gemm_models(options, workloads)) {
    const Model& model = find_model(name);
    const std::vector<DistinctGemm> distinct = distinct_gemm_layers(model);
    for (const int batch : options.gemm_batches) {
      for (const char* pass : {kGemmForward, kGemmBackward}) {
        for (const DistinctGemm& group : distinct) {
          const GemmLayer& layer = model.gemm_layers[group.layer];
          BenchmarkCase entry =
              gemm_case(fmt::format("local/gemm/{}/{}/{}/{}", name, batch, pass, layer.name),
                        at_batch(layer, batch), pass, batch);
          entry.model = name;
          entry.item = layer.name;
          entry.multiplicity = group.multiplicity;
          planner.add(std::move(entry));
        }
      }
    }
  }
}

std::vector<FamilyName> gemm_family_names() {
  return {{.name = "gemm", .refusal = [](const SingleProcessTransport&) {
             return std::string_view(
                 "its GEMMs run on rank 0 alone, which no transport takes part in; run it with "
                 "--transport mpi (one rank is enough)");
           }}};
}

}  // namespace

extern const FamilyEntry kGemmFamily;
const FamilyEntry kGemmFamily = {
    .names = gemm_family_names,
    .plan = plan_gemm_cases,
    .help =
        R"(  local/gemm/peak/<side>                   (--families gemm) a square f32 GEMM through OpenBLAS on
                                           rank 0: the peak every gemm row's efficiency is against
  local/gemm/<model>/<batch>/<pass>/<layer>
                                           one GEMM layer of a model's training at a per-rank
                                           batch (--gemm-models, --gemm-batches), on rank 0: its
                                           forward product, or its backward (data-gradient and
                                           weight-gradient) products; layers with the same
                                           products share a row (multiplicity)
)",
};

}  // namespace collbench::harness
