// The catalog registry: builds every model once, on first use, and looks
// models up by name.
#include "collbench/catalog/catalog.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
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
