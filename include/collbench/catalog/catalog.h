// The DNN model catalog: real networks written as their architectures, from
// which the trainable parameter tensors and the forward FLOPs are derived.
//
// Each model is built layer by layer (convolutions with their kernel,
// channels, groups and bias; batch-norm; linear; embedding; layer-norm;
// attention) with the same module names as its reference implementation, so
// `show resnet50` lists "layer4.2.conv3.weight" exactly as PyTorch names it.
// Nothing is typed in as a total: the parameter count is the sum over the
// derived tensors, and tests compare it with the published count.
//
// Tensor order is the order backpropagation produces gradients: last layer
// first and, within a layer, the reverse of forward registration (bias before
// weight). This is reversed `model.parameters()`, the order PyTorch DDP uses
// to assign buckets.
//
// Each tensor also names the unit that sharded data parallelism (FSDP)
// wraps it in: a transformer block ("model.layers.3") or a residual stage
// ("layer2"); tensors outside every block (embeddings, final norm, heads,
// stems) are the root's, an empty unit. Models without blocks are all root.
//
// FLOPs are 2 x multiply-adds of the convolutions, linear layers and
// attention matrix products of one forward pass of one sample. Batch-norm,
// layer-norm, activations, softmax, pooling and bias additions are not
// counted; they add about 1% or less for these networks, and leaving them
// out keeps the count comparable with the published multiply-add figures.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace collbench {

struct ParamTensor {
  std::string name;                 // e.g. "layer1.0.conv1.weight"
  std::vector<std::int64_t> shape;  // as the reference stores it, e.g. {64, 3, 7, 7}
  std::int64_t elements = 0;        // product of shape
  std::string unit;                 // FSDP wrap unit, e.g. "model.layers.3"; empty: the root
  // The GEMM layer (Model::gemm_layers, forward order) whose backward pass
  // completes this gradient: a convolution's or linear layer's own, and for
  // a tensor between two GEMM layers (batch-norm, layer-norm) the one before
  // it, whose backward comes after its own; 0 for tensors before the first
  // GEMM layer (embeddings, class token), whose gradients exist at the end
  // of backprop.
  std::size_t ready_after_gemm_layer = 0;

  std::uint64_t bytes(std::size_t element_bytes) const {
    return static_cast<std::uint64_t>(elements) * element_bytes;
  }
};

// The three matrix products of one layer of training, C[m x n] = A[m x k] ·
// B[k x n], each `count` times (independent products of the same shape).
enum class GemmPass { forward, data_gradient, weight_gradient };
std::string_view to_string(GemmPass pass);

struct GemmShape {
  std::int64_t m = 0;
  std::int64_t n = 0;
  std::int64_t k = 0;
  std::int64_t count = 1;
  std::int64_t multiply_adds() const { return m * n * k * count; }
};

// One layer's forward product on one sample, as im2col and BLAS see it:
//   convolution  m = H_out·W_out, n = C_out/groups, k = C_in/groups·k_h·k_w,
//                count = groups;
//   linear       m = the rows it is applied to (tokens), n = out, k = in;
//   attention    per head: scores Q·Kᵀ (m = n = tokens, k = head size) and
//                the weighted values A·V (m = tokens, n = head size, k =
//                tokens), count = heads.
// A batch of b samples multiplies m (convolution, linear: the rows of one
// product) or count (attention: one product per sample and head).
// Backward, with dC the output's gradient:
//   data gradient    dA = dC·Bᵀ   (m x k, inner n), skipped for the model's
//                    first layer when it reads the image (PyTorch computes
//                    no gradient for the input);
//   weight gradient  dB = Aᵀ·dC   (k x n, inner m: the batch's rows summed).
struct GemmLayer {
  std::string name;  // "layer1.0.conv1", "encoder.layer.0.attention.self.scores"
  GemmShape per_sample;
  bool batch_in_rows = true;   // false: the batch multiplies count (attention)
  bool input_gradient = true;  // false: no data-gradient product (first conv)

  // The product of `pass` at `batch` samples; count 0 for a data gradient
  // the layer does not compute.
  GemmShape at_batch(GemmPass pass, std::int64_t batch) const;
  // Layers whose products are the same at every batch share a benchmark.
  bool same_products(const GemmLayer& other) const;
};

// What tensor parallelism splits: the decoder or encoder stack of a
// transformer. `layers` is 0 for models that are not transformers.
struct TransformerShape {
  std::int64_t layers = 0;
  std::int64_t hidden = 0;
  std::int64_t heads = 0;
  std::int64_t kv_heads = 0;  // key/value heads (grouped-query attention); = heads otherwise
  std::int64_t sequence = 0;  // tokens of one sample: the context the catalog's input uses
  // Mixture of experts (expert parallelism's routing): experts per MoE
  // layer and the router's top-k; 0 for a dense feed-forward.
  std::int64_t experts = 0;
  std::int64_t experts_per_token = 0;
};

struct Model {
  std::string name;       // catalog key, e.g. "resnet50"
  std::string variant;    // which definition exactly, e.g. "torchvision resnet50 (ResNet v1.5)"
  std::string reference;  // the implementation whose parameter count this reproduces
  std::string input;      // one sample, e.g. "3x224x224 image" or "128 tokens"
  std::vector<ParamTensor> tensors_backprop_order;
  // Every matrix product of the forward pass, in forward order; their
  // multiply-adds are all the model's (forward_flops_per_sample / 2).
  std::vector<GemmLayer> gemm_layers;
  std::int64_t forward_flops_per_sample = 0;  // 2 x multiply-adds, see the file comment
  TransformerShape transformer;               // layers 0: not a transformer

  std::int64_t parameters() const;
  std::uint64_t gradient_bytes(std::size_t element_bytes) const;
};

// The GEMM layer after whose backward all of `tensors` (a run of
// Model::tensors_backprop_order: a bucket's) exist: backprop runs from the
// last layer down, so the smallest of their ready layers; 0 for none.
std::size_t first_ready_layer(std::span<const ParamTensor> tensors);

// The distinct products of a model's GEMM layers: for each group of layers
// with the same products (GemmLayer::same_products), the index of its first
// layer and how many layers it stands for, in forward order of the first.
struct DistinctGemm {
  std::size_t layer = 0;
  int multiplicity = 0;
};
std::vector<DistinctGemm> distinct_gemm_layers(const Model& model);
// For each of model.gemm_layers, the index into distinct_gemm_layers(model)
// of the group it belongs to.
std::vector<std::size_t> gemm_layer_groups(const Model& model);

// Every model, in catalog order (CNNs by year, then transformers).
const std::vector<Model>& all_models();
// Their names, in the same order.
const std::vector<std::string>& model_names();
// "alexnet, alexnet_caffe, vgg16, ..." for messages that say what is accepted.
std::string model_name_list();
// Throws std::invalid_argument naming `name` and listing the known names.
const Model& find_model(std::string_view name);

// Element sizes of the dtypes the catalog tools accept (f32, f64, f16, bf16),
// kept here so the catalog does not depend on the core library.
// Throws std::invalid_argument listing the accepted names.
std::size_t dtype_element_bytes(std::string_view dtype_name);

}  // namespace collbench
