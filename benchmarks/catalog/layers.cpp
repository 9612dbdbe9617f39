// Layer shape and cost rules for the catalog builder. The output-size
// formulas are PyTorch's (torch.nn.Conv2d / MaxPool2d documentation), so a
// model written with the same arguments as its torchvision definition gets
// the same activation shapes.
#include "layers.h"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>
#include <utility>

namespace collbench::catalog_detail {
namespace {

std::int64_t checked_product(const std::vector<std::int64_t>& factors, const std::string& what) {
  std::int64_t product = 1;
  for (std::int64_t factor : factors) {
    if (factor <= 0 || __builtin_mul_overflow(product, factor, &product)) {
      throw std::invalid_argument(
          fmt::format("{}: dimensions [{}] must be positive and their product must fit in 64 bits",
                      what, fmt::join(factors, ", ")));
    }
  }
  return product;
}

// PyTorch's pooling/convolution output length for one spatial dimension
// (dilation 1). Ceil mode drops a last window that would start in the right
// padding, as aten's pooling_output_shape does.
std::int64_t output_length(std::int64_t in, std::int64_t kernel, std::int64_t stride,
                           std::int64_t padding, bool ceil_mode, const std::string& what) {
  if (kernel <= 0 || stride <= 0 || padding < 0) {
    throw std::invalid_argument(
        fmt::format("{}: kernel {} and stride {} must be positive and padding {} non-negative",
                    what, kernel, stride, padding));
  }
  const std::int64_t span = in + 2 * padding - kernel;
  if (span < 0) {
    throw std::invalid_argument(
        fmt::format("{}: input length {} with padding {} is smaller than the kernel {}", what, in,
                    padding, kernel));
  }
  std::int64_t out = (ceil_mode ? (span + stride - 1) / stride : span / stride) + 1;
  if (ceil_mode && (out - 1) * stride >= in + padding) --out;
  return out;
}

}  // namespace

FeatureMap pool2d(const FeatureMap& in, const Pool& pool) {
  return {in.channels,
          output_length(in.height, pool.kernel.height, pool.stride.height, pool.padding.height,
                        pool.ceil_mode, "pool height"),
          output_length(in.width, pool.kernel.width, pool.stride.width, pool.padding.width,
                        pool.ceil_mode, "pool width")};
}

FeatureMap adaptive_avg_pool2d(const FeatureMap& in, Window out) {
  if (out.height <= 0 || out.width <= 0) {
    throw std::invalid_argument(fmt::format(
        "adaptive_avg_pool2d: output size {}x{} must be positive", out.height, out.width));
  }
  return {in.channels, out.height, out.width};
}

FeatureMap concat_channels(std::initializer_list<FeatureMap> branches) {
  if (branches.size() == 0) throw std::invalid_argument("concat_channels: no branches");
  FeatureMap result = *branches.begin();
  result.channels = 0;
  for (const FeatureMap& branch : branches) {
    if (branch.height != result.height || branch.width != result.width) {
      throw std::invalid_argument(
          fmt::format("concat_channels: branch of {}x{} cannot join branches of {}x{}",
                      branch.height, branch.width, result.height, result.width));
    }
    result.channels += branch.channels;
  }
  return result;
}

ModelBuilder::ModelBuilder(std::string name, std::string variant, std::string reference,
                           std::string input) {
  model_.name = std::move(name);
  model_.variant = std::move(variant);
  model_.reference = std::move(reference);
  model_.input = std::move(input);
}

void ModelBuilder::parameter(const std::string& name, std::vector<std::int64_t> shape) {
  const bool duplicate =
      std::any_of(model_.tensors_backprop_order.begin(), model_.tensors_backprop_order.end(),
                  [&](const ParamTensor& tensor) { return tensor.name == name; });
  if (duplicate) {
    throw std::invalid_argument(
        fmt::format("model {}: parameter \"{}\" is registered twice", model_.name, name));
  }
  const std::int64_t elements = checked_product(shape, fmt::format("parameter \"{}\"", name));
  // Registered after GEMM layer L (its own layer's weights are registered
  // after its product): ready once L's backward has run (catalog.h).
  const std::size_t ready_after = model_.gemm_layers.empty() ? 0 : model_.gemm_layers.size() - 1;
  model_.tensors_backprop_order.push_back({name, std::move(shape), elements, unit_, ready_after});
}

void ModelBuilder::unit(std::string name) {
  if (!unit_.empty()) closed_units_.push_back(unit_);
  // FSDP gathers a unit's tensors as one flat parameter, so a unit that
  // came back later would be two units.
  if (!name.empty() &&
      std::find(closed_units_.begin(), closed_units_.end(), name) != closed_units_.end()) {
    throw std::invalid_argument(
        fmt::format("model {}: unit \"{}\" is opened twice", model_.name, name));
  }
  unit_ = std::move(name);
}

void ModelBuilder::transformer(const TransformerShape& shape) {
  if (shape.layers <= 0 || shape.hidden <= 0 || shape.heads <= 0 || shape.kv_heads <= 0 ||
      shape.sequence <= 0 || shape.heads % shape.kv_heads != 0 || shape.experts < 0 ||
      (shape.experts == 0) != (shape.experts_per_token == 0) ||
      shape.experts_per_token > shape.experts) {
    throw std::invalid_argument(fmt::format(
        "model {}: transformer shape needs positive layers, hidden, heads, kv heads and "
        "sequence, with kv heads dividing heads, and a top-k of at most the experts (both 0 "
        "without experts)",
        model_.name));
  }
  model_.transformer = shape;
}

void ModelBuilder::gemm(const std::string& name, const GemmShape& per_sample, bool batch_in_rows) {
  const std::int64_t count = checked_product(
      {per_sample.m, per_sample.n, per_sample.k, per_sample.count}, name + " multiply-adds");
  if (__builtin_add_overflow(multiply_adds_, count, &multiply_adds_)) {
    throw std::invalid_argument(
        fmt::format("model {}: multiply-adds overflow at {}", model_.name, name));
  }
  // PyTorch computes no gradient for the image a first convolution reads.
  const bool input_gradient = !(model_.gemm_layers.empty() && image_input_);
  model_.gemm_layers.push_back({name, per_sample, batch_in_rows, input_gradient});
}

FeatureMap ModelBuilder::conv2d(const std::string& name, const FeatureMap& in, const Conv2d& conv) {
  if (conv.groups <= 0 || in.channels % conv.groups != 0 || conv.out_channels % conv.groups != 0) {
    throw std::invalid_argument(
        fmt::format("conv {}: groups {} must divide input channels {} and output channels {}", name,
                    conv.groups, in.channels, conv.out_channels));
  }
  const FeatureMap out{conv.out_channels,
                       output_length(in.height, conv.kernel.height, conv.stride.height,
                                     conv.padding.height, false, "conv " + name + " height"),
                       output_length(in.width, conv.kernel.width, conv.stride.width,
                                     conv.padding.width, false, "conv " + name + " width")};
  const std::int64_t in_per_group = in.channels / conv.groups;
  if (model_.gemm_layers.empty()) image_input_ = true;
  // im2col: every output position is a row, every group's input window a
  // column of the product.
  gemm(name, {.m = out.height * out.width,
              .n = conv.out_channels / conv.groups,
              .k = in_per_group * conv.kernel.height * conv.kernel.width,
              .count = conv.groups});
  parameter(name + ".weight",
            {conv.out_channels, in_per_group, conv.kernel.height, conv.kernel.width});
  if (conv.bias) parameter(name + ".bias", {conv.out_channels});
  return out;
}

FeatureMap ModelBuilder::batch_norm2d(const std::string& name, const FeatureMap& in) {
  parameter(name + ".weight", {in.channels});
  parameter(name + ".bias", {in.channels});
  return in;
}

void ModelBuilder::linear(const std::string& name, std::int64_t in_features,
                          std::int64_t out_features, std::int64_t rows, bool bias) {
  gemm(name, {.m = rows, .n = out_features, .k = in_features});
  parameter(name + ".weight", {out_features, in_features});
  if (bias) parameter(name + ".bias", {out_features});
}

void ModelBuilder::conv1d_transposed_linear(const std::string& name, std::int64_t in_features,
                                            std::int64_t out_features, std::int64_t rows) {
  gemm(name, {.m = rows, .n = out_features, .k = in_features});
  parameter(name + ".weight", {in_features, out_features});
  parameter(name + ".bias", {out_features});
}

void ModelBuilder::embedding(const std::string& name, std::int64_t count, std::int64_t dim) {
  parameter(name + ".weight", {count, dim});
}

void ModelBuilder::layer_norm(const std::string& name, std::int64_t dim) {
  parameter(name + ".weight", {dim});
  parameter(name + ".bias", {dim});
}

void ModelBuilder::rms_norm(const std::string& name, std::int64_t dim) {
  parameter(name + ".weight", {dim});
}

Model ModelBuilder::finish() && {
  if (model_.tensors_backprop_order.empty()) {
    throw std::invalid_argument(fmt::format("model {} has no parameters", model_.name));
  }
  std::reverse(model_.tensors_backprop_order.begin(), model_.tensors_backprop_order.end());
  if (__builtin_mul_overflow(multiply_adds_, 2, &model_.forward_flops_per_sample)) {
    throw std::invalid_argument(fmt::format("model {}: FLOPs overflow 64 bits", model_.name));
  }
  return std::move(model_);
}

FeatureMap conv_bn(ModelBuilder& builder, const std::string& name, const FeatureMap& in,
                   std::int64_t out_channels, Window kernel, Window stride, Window padding) {
  const FeatureMap convolved = builder.conv2d(name + ".conv", in,
                                              {.out_channels = out_channels,
                                               .kernel = kernel,
                                               .stride = stride,
                                               .padding = padding,
                                               .bias = false});
  return builder.batch_norm2d(name + ".bn", convolved);
}

void attention_products(ModelBuilder& builder, const std::string& prefix, std::int64_t sequence,
                        std::int64_t hidden, std::int64_t heads) {
  if (heads <= 0 || hidden % heads != 0) {
    throw std::invalid_argument(
        fmt::format("attention: {} heads must divide the hidden size {}", heads, hidden));
  }
  const std::int64_t head_dim = hidden / heads;
  builder.gemm(prefix + "scores", {.m = sequence, .n = sequence, .k = head_dim, .count = heads},
               /*batch_in_rows=*/false);
  builder.gemm(prefix + "weighted_values",
               {.m = sequence, .n = head_dim, .k = sequence, .count = heads},
               /*batch_in_rows=*/false);
}

}  // namespace collbench::catalog_detail
