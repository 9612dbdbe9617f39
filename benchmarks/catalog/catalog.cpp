// The catalog registry: builds every model once, on first use, and looks
// models up by name.
#include "collbench/catalog/catalog.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <limits>
#include <stdexcept>
#include <utility>

#include "models.h"

namespace collbench {

std::int64_t Model::parameters() const {
  std::int64_t total = 0;
  for (const ParamTensor& tensor : tensors_backprop_order) total += tensor.elements;
  return total;
}

std::uint64_t Model::gradient_bytes(std::size_t element_bytes) const {
  return static_cast<std::uint64_t>(parameters()) * element_bytes;
}

std::string_view to_string(GemmPass pass) {
  switch (pass) {
    case GemmPass::forward:
      return "forward";
    case GemmPass::data_gradient:
      return "data_gradient";
    case GemmPass::weight_gradient:
      return "weight_gradient";
  }
  return "?";
}

GemmShape GemmLayer::at_batch(GemmPass pass, std::int64_t batch) const {
  GemmShape batched = per_sample;
  if (batch_in_rows) {
    batched.m *= batch;
  } else {
    batched.count *= batch;
  }
  switch (pass) {
    case GemmPass::forward:
      return batched;
    case GemmPass::data_gradient:
      if (!input_gradient) return {batched.m, batched.k, batched.n, 0};
      return {batched.m, batched.k, batched.n, batched.count};
    case GemmPass::weight_gradient:
      return {batched.k, batched.n, batched.m, batched.count};
  }
  return batched;
}

bool GemmLayer::same_products(const GemmLayer& other) const {
  return per_sample.m == other.per_sample.m && per_sample.n == other.per_sample.n &&
         per_sample.k == other.per_sample.k && per_sample.count == other.per_sample.count &&
         batch_in_rows == other.batch_in_rows && input_gradient == other.input_gradient;
}

std::size_t first_ready_layer(std::span<const ParamTensor> tensors) {
  std::size_t layer = std::numeric_limits<std::size_t>::max();
  for (const ParamTensor& tensor : tensors) layer = std::min(layer, tensor.ready_after_gemm_layer);
  return tensors.empty() ? 0 : layer;
}

std::vector<std::size_t> gemm_layer_groups(const Model& model) {
  std::vector<std::size_t> first_of_group;  // layer index of each group's first layer
  std::vector<std::size_t> groups;
  groups.reserve(model.gemm_layers.size());
  for (const GemmLayer& layer : model.gemm_layers) {
    const auto found = std::find_if(
        first_of_group.begin(), first_of_group.end(),
        [&](std::size_t first) { return model.gemm_layers[first].same_products(layer); });
    groups.push_back(static_cast<std::size_t>(found - first_of_group.begin()));
    if (found == first_of_group.end()) first_of_group.push_back(groups.size() - 1);
  }
  return groups;
}

std::vector<DistinctGemm> distinct_gemm_layers(const Model& model) {
  std::vector<DistinctGemm> distinct;
  const std::vector<std::size_t> groups = gemm_layer_groups(model);
  for (std::size_t layer = 0; layer < groups.size(); ++layer) {
    if (groups[layer] == distinct.size()) distinct.push_back({layer, 0});
    ++distinct[groups[layer]].multiplicity;
  }
  return distinct;
}

const std::vector<Model>& all_models() {
  // A function-local static is built once, thread-safely, and only by the
  // programs that ask for the catalog.
  static const std::vector<Model> models = [] {
    using namespace catalog_detail;
    std::vector<Model> built;
    built.push_back(make_alexnet());
    built.push_back(make_alexnet_caffe());
    built.push_back(make_vgg16());
    built.push_back(make_googlenet());
    built.push_back(make_inception_v3());
    built.push_back(make_resnet50());
    built.push_back(make_resnet152());
    built.push_back(make_bert_base());
    built.push_back(make_bert_large());
    built.push_back(make_gpt2());
    built.push_back(make_vit_b16());
    built.push_back(make_llama2_7b());
    built.push_back(make_llama3_8b());
    built.push_back(make_mixtral_8x7b());
    return built;
  }();
  return models;
}

const std::vector<std::string>& model_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> collected;
    for (const Model& model : all_models()) collected.push_back(model.name);
    return collected;
  }();
  return names;
}

std::string model_name_list() { return fmt::format("{}", fmt::join(model_names(), ", ")); }

const Model& find_model(std::string_view name) {
  const std::vector<Model>& models = all_models();
  const auto found = std::find_if(models.begin(), models.end(),
                                  [&](const Model& model) { return model.name == name; });
  if (found == models.end()) {
    throw std::invalid_argument(
        fmt::format("unknown model \"{}\"; known models: {}", name, model_name_list()));
  }
  return *found;
}

std::size_t dtype_element_bytes(std::string_view dtype_name) {
  static constexpr std::array<std::pair<std::string_view, std::size_t>, 4> kDTypes = {{
      {"f32", 4},
      {"f64", 8},
      {"f16", 2},
      {"bf16", 2},
  }};
  for (const auto& [name, bytes] : kDTypes) {
    if (name == dtype_name) return bytes;
  }
  throw std::invalid_argument(
      fmt::format("unknown dtype \"{}\"; accepted: f32, f64, f16, bf16", dtype_name));
}

}  // namespace collbench
