// Layer vocabulary for writing catalog models as architectures (private to
// the catalog library).
//
// A ModelBuilder records trainable tensors in forward registration order
// (the order PyTorch's module constructors create them) and accumulates
// multiply-adds from the shapes flowing through each layer. finish() reverses
// the tensors into backprop order. Feature maps are passed explicitly rather
// than kept as builder state, because Inception-style blocks run several
// branches on the same input and concatenate them.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

#include "collbench/catalog/catalog.h"

namespace collbench::catalog_detail {

// Channels x height x width of one sample's activations.
struct FeatureMap {
  std::int64_t channels = 0;
  std::int64_t height = 0;
  std::int64_t width = 0;
};

// A (height, width) pair: kernel, stride or padding.
struct Window {
  std::int64_t height = 0;
  std::int64_t width = 0;
};

constexpr Window square(std::int64_t side) { return {side, side}; }

// torch.nn.Conv2d: weight [out, in/groups, kh, kw], bias [out] when enabled.
struct Conv2d {
  std::int64_t out_channels = 0;
  Window kernel = square(1);
  Window stride = square(1);
  Window padding = square(0);
  std::int64_t groups = 1;
  bool bias = true;
};

// torch.nn.MaxPool2d / AvgPool2d output geometry (no parameters).
struct Pool {
  Window kernel;
  Window stride;
  Window padding = square(0);
  bool ceil_mode = false;
};

FeatureMap pool2d(const FeatureMap& in, const Pool& pool);
// AdaptiveAvgPool2d: any input to `out` spatial size (no parameters).
FeatureMap adaptive_avg_pool2d(const FeatureMap& in, Window out);
// torch.cat along channels; every branch must have the same spatial size.
FeatureMap concat_channels(std::initializer_list<FeatureMap> branches);

class ModelBuilder;

// torchvision's BasicConv2d (GoogLeNet, Inception v3): a bias-free
// convolution named NAME.conv followed by batch-norm NAME.bn (eps 0.001,
// which does not change shapes).
FeatureMap conv_bn(ModelBuilder& builder, const std::string& name, const FeatureMap& in,
                   std::int64_t out_channels, Window kernel, Window stride = square(1),
                   Window padding = square(0));

class ModelBuilder {
 public:
  ModelBuilder(std::string name, std::string variant, std::string reference, std::string input);

  // One trainable tensor, in forward registration order, in the current unit.
  void parameter(const std::string& name, std::vector<std::int64_t> shape);
  // The FSDP unit of the tensors registered from now on (catalog.h); ""
  // returns to the root. A unit's tensors must be registered together.
  void unit(std::string name);
  // Marks the model a transformer, for tensor-parallel workloads.
  void transformer(const TransformerShape& shape);
  // A matrix product of one sample's forward pass (catalog.h, GemmLayer)
  // that no layer below records, e.g. attention's score and value products
  // or a tied head's logits; the tensors registered after it are ready
  // after its backward.
  void gemm(const std::string& name, const GemmShape& per_sample, bool batch_in_rows = true);

  FeatureMap conv2d(const std::string& name, const FeatureMap& in, const Conv2d& conv);
  // BatchNorm2d: weight and bias (gamma, beta) of `in.channels` each; the
  // running statistics are buffers, not trainable, and are not listed.
  FeatureMap batch_norm2d(const std::string& name, const FeatureMap& in);
  // torch.nn.Linear applied to `rows` vectors (1 for a classifier head,
  // the sequence length for a transformer): weight [out, in], bias [out].
  void linear(const std::string& name, std::int64_t in_features, std::int64_t out_features,
              std::int64_t rows = 1, bool bias = true);
  // Hugging Face's GPT-2 Conv1D: a linear layer that stores its weight
  // transposed, [in, out], bias [out].
  void conv1d_transposed_linear(const std::string& name, std::int64_t in_features,
                                std::int64_t out_features, std::int64_t rows);
  // torch.nn.Embedding: weight [count, dim]; a lookup, no multiply-adds.
  void embedding(const std::string& name, std::int64_t count, std::int64_t dim);
  // torch.nn.LayerNorm(dim): weight and bias [dim].
  void layer_norm(const std::string& name, std::int64_t dim);
  // RMSNorm(dim) as Llama and Mixtral define it: weight [dim], no bias.
  void rms_norm(const std::string& name, std::int64_t dim);

  // Reverses the tensors into backprop order and returns the model.
  Model finish() &&;

 private:
  Model model_;
  std::int64_t multiply_adds_ = 0;
  bool image_input_ = false;  // the first GEMM layer reads the image (a convolution)
  std::string unit_;
  std::vector<std::string> closed_units_;
};

// Q·Kᵀ and A·V of multi-head self-attention over `sequence` tokens: each
// head multiplies s x d and d x s, then s x s and s x d, with d = h/heads.
// Grouped-query attention shares keys and values between heads but every
// head still computes its own scores, so the count is the same.
// They are GEMM layers PREFIX + "scores" and PREFIX + "weighted_values".
void attention_products(ModelBuilder& builder, const std::string& prefix, std::int64_t sequence,
                        std::int64_t hidden, std::int64_t heads);

}  // namespace collbench::catalog_detail
