// Tests of the DNN model catalog: the parameter totals derived from each
// architecture equal the published counts exactly, the derived FLOPs are
// within 5% of a published figure, and tensors come in backprop order with
// the reference implementation's names and shapes.
#include "collbench/catalog/catalog.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <set>
#include <stdexcept>
#include <string>

namespace collbench {
namespace {

struct PublishedModel {
  const char* name;
  std::int64_t parameters;  // the reference implementation's count
  std::size_t tensors;      // len(list(model.parameters())) of the reference
  double forward_flops;     // published forward FLOPs per sample (2 x MACs)
};

// Transformer forward FLOPs per sequence from Narayanan et al., "Efficient
// Large-Scale Language Model Training on GPU Clusters Using Megatron-LM"
// (SC'21, section 5.1): 24·s·l·h² + 4·s²·l·h, plus 2·s·h·V for an LM head.
constexpr double transformer_forward_flops(double sequence, double layers, double hidden,
                                           double lm_head_vocabulary) {
  return 24 * sequence * layers * hidden * hidden + 4 * sequence * sequence * layers * hidden +
         2 * sequence * hidden * lm_head_vocabulary;
}

// Decoder forward FLOPs per sequence by the same accounting: 2 FLOPs per
// weight per token through the linear layers, whose weights are the
// published count less the embedding table (a lookup), plus attention's
// 4·s²·l·h. For a mixture of experts, the weights a token uses.
constexpr double decoder_forward_flops(double sequence, double layers, double hidden,
                                       double weights_per_token, double embedding_table) {
  return 2 * sequence * (weights_per_token - embedding_table) +
         4 * sequence * sequence * layers * hidden;
}

// torchvision's model docs give "GFLOPS" that count one multiply-add as one
// operation (ResNet-50's 4.09 is its 4.09 G multiply-adds), so FLOPs are
// twice the listed figure.
constexpr double torchvision_gflops_to_flops(double listed) { return 2 * listed * 1e9; }

const PublishedModel kPublished[] = {
    // torchvision AlexNet_Weights.IMAGENET1K_V1: num_params 61100840, GFLOPS 0.71.
    {"alexnet", 61'100'840, 16, torchvision_gflops_to_flops(0.71)},
    // BVLC Caffe bvlc_alexnet deploy.prototxt; Sze et al., Proc. IEEE 2017,
    // Table III: 724M MACs.
    {"alexnet_caffe", 60'965'224, 16, 2 * 724e6},
    // torchvision VGG16_Weights.IMAGENET1K_V1: num_params 138357544, GFLOPS 15.47.
    {"vgg16", 138'357'544, 32, torchvision_gflops_to_flops(15.47)},
    // torchvision GoogLeNet_Weights.IMAGENET1K_V1: num_params 6624904, GFLOPS 1.50.
    {"googlenet", 6'624'904, 173, torchvision_gflops_to_flops(1.50)},
    // torchvision Inception_V3_Weights.IMAGENET1K_V1: num_params 27161264
    // (aux_logits=True), GFLOPS 5.71.
    {"inception_v3", 27'161'264, 292, torchvision_gflops_to_flops(5.71)},
    // torchvision ResNet50_Weights.IMAGENET1K_V1: num_params 25557032, GFLOPS 4.09.
    {"resnet50", 25'557'032, 161, torchvision_gflops_to_flops(4.09)},
    // torchvision ResNet152_Weights.IMAGENET1K_V1: num_params 60192808, GFLOPS 11.51.
    {"resnet152", 60'192'808, 467, torchvision_gflops_to_flops(11.51)},
    // Hugging Face BertModel bert-base-uncased: 109482240 (with pooler), s = 128.
    {"bert_base", 109'482'240, 199, transformer_forward_flops(128, 12, 768, 0)},
    // Hugging Face BertModel bert-large-uncased: 335141888, s = 128.
    {"bert_large", 335'141'888, 391, transformer_forward_flops(128, 24, 1024, 0)},
    // Hugging Face gpt2 (GPT2Model, = GPT2LMHeadModel with its tied head):
    // 124439808; s = 1024 with the LM head over 50257 tokens.
    {"gpt2", 124'439'808, 148, transformer_forward_flops(1024, 12, 768, 50257)},
    // torchvision ViT_B_16_Weights.IMAGENET1K_V1: num_params 86567656, GFLOPS 17.56.
    {"vit_b16", 86'567'656, 152, torchvision_gflops_to_flops(17.56)},
    // LlamaForCausalLM meta-llama/Llama-2-7b-hf num_parameters(): 6738415616
    // (embed_tokens 32000 x 4096 untied from lm_head); s = 4096.
    {"llama2_7b", 6'738'415'616, 291,
     decoder_forward_flops(4096, 32, 4096, 6'738'415'616, 32000.0 * 4096)},
    // LlamaForCausalLM meta-llama/Meta-Llama-3-8B num_parameters(): 8030261248
    // (vocabulary 128256); s = 8192.
    {"llama3_8b", 8'030'261'248, 291,
     decoder_forward_flops(8192, 32, 4096, 8'030'261'248, 128256.0 * 4096)},
    // MixtralForCausalLM mistralai/Mixtral-8x7B-v0.1 num_parameters():
    // 46702792704; Mistral AI ("Mixtral of experts", 2023): 12.9B of them
    // used per token; s = 32768.
    {"mixtral_8x7b", 46'702'792'704, 995,
     decoder_forward_flops(32768, 32, 4096, 12.9e9, 32000.0 * 4096)},
};

class PublishedModelTest : public ::testing::TestWithParam<PublishedModel> {};

TEST_P(PublishedModelTest, DerivedParameterTotalEqualsPublishedCount) {
  const Model& model = find_model(GetParam().name);
  EXPECT_EQ(model.parameters(), GetParam().parameters);
  EXPECT_EQ(model.tensors_backprop_order.size(), GetParam().tensors);
}

TEST_P(PublishedModelTest, ForwardFlopsWithinFivePercentOfPublishedFigure) {
  const Model& model = find_model(GetParam().name);
  const double derived = static_cast<double>(model.forward_flops_per_sample);
  const double relative_error =
      std::abs(derived - GetParam().forward_flops) / GetParam().forward_flops;
  EXPECT_LT(relative_error, 0.05) << model.name << ": derived " << derived << " FLOPs, published "
                                  << GetParam().forward_flops;
}

TEST_P(PublishedModelTest, TensorsAreWellFormedAndUniquelyNamed) {
  const Model& model = find_model(GetParam().name);
  std::set<std::string> names;
  for (const ParamTensor& tensor : model.tensors_backprop_order) {
    std::int64_t product = 1;
    for (std::int64_t dim : tensor.shape) product *= dim;
    EXPECT_EQ(tensor.elements, product) << tensor.name;
    EXPECT_GT(tensor.elements, 0) << tensor.name;
    EXPECT_TRUE(names.insert(tensor.name).second) << "duplicate " << tensor.name;
    // Batch-norm running statistics are buffers, not trainable tensors.
    EXPECT_EQ(tensor.name.find("running_"), std::string::npos) << tensor.name;
  }
  EXPECT_FALSE(model.variant.empty());
  EXPECT_FALSE(model.reference.empty());
  EXPECT_FALSE(model.input.empty());
}

TEST_P(PublishedModelTest, GradientBytesScaleWithElementSize) {
  const Model& model = find_model(GetParam().name);
  const auto parameters = static_cast<std::uint64_t>(GetParam().parameters);
  EXPECT_EQ(model.gradient_bytes(4), parameters * 4);
  EXPECT_EQ(model.gradient_bytes(2), parameters * 2);
  EXPECT_EQ(model.gradient_bytes(8), parameters * 8);
}

INSTANTIATE_TEST_SUITE_P(Catalog, PublishedModelTest, ::testing::ValuesIn(kPublished),
                         [](const ::testing::TestParamInfo<PublishedModel>& param_info) {
                           return std::string(param_info.param.name);
                         });

// The GEMM layers are where the FLOPs come from: their multiply-adds are
// all of the model's, and every gradient is ready after one of them.
TEST_P(PublishedModelTest, GemmLayersCarryEveryMultiplyAddAndEveryGradient) {
  const Model& model = find_model(GetParam().name);
  ASSERT_FALSE(model.gemm_layers.empty());
  std::int64_t multiply_adds = 0;
  for (const GemmLayer& layer : model.gemm_layers) {
    multiply_adds += layer.per_sample.multiply_adds();
    EXPECT_EQ(layer.at_batch(GemmPass::forward, 3).multiply_adds(),
              3 * layer.per_sample.multiply_adds())
        << layer.name;
    EXPECT_EQ(layer.at_batch(GemmPass::weight_gradient, 3).multiply_adds(),
              3 * layer.per_sample.multiply_adds())
        << layer.name;
  }
  EXPECT_EQ(2 * multiply_adds, model.forward_flops_per_sample);
  for (const ParamTensor& tensor : model.tensors_backprop_order) {
    EXPECT_LT(tensor.ready_after_gemm_layer, model.gemm_layers.size()) << tensor.name;
  }
  // Backprop order: a later tensor is never ready before an earlier one.
  for (std::size_t i = 1; i < model.tensors_backprop_order.size(); ++i) {
    EXPECT_LE(model.tensors_backprop_order[i].ready_after_gemm_layer,
              model.tensors_backprop_order[i - 1].ready_after_gemm_layer)
        << model.tensors_backprop_order[i].name;
  }
  int represented = 0;
  for (const DistinctGemm& distinct : distinct_gemm_layers(model)) {
    represented += distinct.multiplicity;
  }
  EXPECT_EQ(represented, static_cast<int>(model.gemm_layers.size()));
}

TEST(Catalog, ResNet50GemmLayersAreIm2colProducts) {
  const Model& model = find_model("resnet50");
  ASSERT_EQ(model.gemm_layers.size(), 54u);  // 53 convolutions and fc
  const GemmLayer& conv1 = model.gemm_layers.front();
  EXPECT_EQ(conv1.name, "conv1");
  // 3x224x224 -> 64x112x112 by a 7x7 kernel, stride 2.
  EXPECT_EQ(conv1.per_sample.m, 112 * 112);
  EXPECT_EQ(conv1.per_sample.n, 64);
  EXPECT_EQ(conv1.per_sample.k, 3 * 7 * 7);
  EXPECT_FALSE(conv1.input_gradient);  // the image needs no gradient
  EXPECT_EQ(conv1.at_batch(GemmPass::data_gradient, 2).count, 0);
  const GemmLayer& fc = model.gemm_layers.back();
  EXPECT_EQ(fc.name, "fc");
  EXPECT_TRUE(fc.input_gradient);
  const GemmShape fc_weight = fc.at_batch(GemmPass::weight_gradient, 32);
  EXPECT_EQ(fc_weight.m, 2048);  // dW = Xᵀ·dY: k x n, inner the 32 rows
  EXPECT_EQ(fc_weight.n, 1000);
  EXPECT_EQ(fc_weight.k, 32);
  const GemmShape fc_data = fc.at_batch(GemmPass::data_gradient, 32);
  EXPECT_EQ(fc_data.m, 32);
  EXPECT_EQ(fc_data.n, 2048);
  EXPECT_EQ(fc_data.k, 1000);
  // fc.bias and fc.weight come first in backprop order, after fc's backward;
  // bn1 (after conv1) is ready after conv1's.
  EXPECT_EQ(model.tensors_backprop_order.front().ready_after_gemm_layer, 53u);
  EXPECT_EQ(model.tensors_backprop_order.back().name, "conv1.weight");
  EXPECT_EQ(model.tensors_backprop_order.back().ready_after_gemm_layer, 0u);
  // The three repeats of each stage's later blocks share products.
  const std::vector<DistinctGemm> distinct = distinct_gemm_layers(model);
  EXPECT_LT(distinct.size(), model.gemm_layers.size() / 2);
  const std::vector<std::size_t> groups = gemm_layer_groups(model);
  ASSERT_EQ(groups.size(), model.gemm_layers.size());
  for (std::size_t layer = 0; layer < groups.size(); ++layer) {
    EXPECT_TRUE(
        model.gemm_layers[distinct[groups[layer]].layer].same_products(model.gemm_layers[layer]));
  }
}

TEST(Catalog, BertAttentionProductsScaleTheirCountWithTheBatch) {
  const Model& model = find_model("bert_base");
  const auto scores = std::find_if(
      model.gemm_layers.begin(), model.gemm_layers.end(),
      [](const GemmLayer& layer) { return layer.name == "encoder.layer.0.attention.self.scores"; });
  ASSERT_NE(scores, model.gemm_layers.end());
  const GemmShape batched = scores->at_batch(GemmPass::forward, 4);
  EXPECT_EQ(batched.m, 128);
  EXPECT_EQ(batched.n, 128);
  EXPECT_EQ(batched.k, 64);
  EXPECT_EQ(batched.count, 12 * 4);
  // 12 layers of query, key, value, attention output, intermediate,
  // output, scores and weighted values; the pooler (one row) apart.
  EXPECT_EQ(distinct_gemm_layers(model).size(), 6u);
}

TEST(Catalog, ListsEveryPublishedModelInCatalogOrder) {
  std::vector<std::string> expected;
  for (const PublishedModel& published : kPublished) expected.emplace_back(published.name);
  EXPECT_EQ(model_names(), expected);
  ASSERT_EQ(all_models().size(), expected.size());
}

const ParamTensor& tensor_named(const Model& model, const std::string& name) {
  for (const ParamTensor& tensor : model.tensors_backprop_order) {
    if (tensor.name == name) return tensor;
  }
  throw std::runtime_error(model.name + " has no tensor " + name);
}

TEST(Catalog, ResNet50TensorsComeLastLayerFirstBiasBeforeWeight) {
  const auto& tensors = find_model("resnet50").tensors_backprop_order;
  ASSERT_GE(tensors.size(), 5u);
  EXPECT_EQ(tensors[0].name, "fc.bias");
  EXPECT_EQ(tensors[1].name, "fc.weight");
  EXPECT_EQ(tensors[2].name, "layer4.2.bn3.bias");
  EXPECT_EQ(tensors[3].name, "layer4.2.bn3.weight");
  EXPECT_EQ(tensors[4].name, "layer4.2.conv3.weight");
  EXPECT_EQ(tensors.back().name, "conv1.weight");
  EXPECT_EQ(tensors[tensors.size() - 2].name, "bn1.weight");
}

TEST(Catalog, ResNet50ShapesMatchTorchvision) {
  const Model& model = find_model("resnet50");
  EXPECT_EQ(tensor_named(model, "conv1.weight").shape, (std::vector<std::int64_t>{64, 3, 7, 7}));
  EXPECT_EQ(tensor_named(model, "fc.weight").shape, (std::vector<std::int64_t>{1000, 2048}));
  // v1.5: the first block of each stage projects with a 1x1 downsample.
  EXPECT_EQ(tensor_named(model, "layer2.0.downsample.0.weight").shape,
            (std::vector<std::int64_t>{512, 256, 1, 1}));
  EXPECT_EQ(tensor_named(model, "layer4.0.conv2.weight").shape,
            (std::vector<std::int64_t>{512, 512, 3, 3}));
  EXPECT_THROW(tensor_named(model, "layer2.1.downsample.0.weight"), std::runtime_error);
}

TEST(Catalog, GroupedCaffeAlexNetHalvesInputChannelsPerFilter) {
  const Model& model = find_model("alexnet_caffe");
  EXPECT_EQ(tensor_named(model, "conv2.weight").shape, (std::vector<std::int64_t>{256, 48, 5, 5}));
  EXPECT_EQ(tensor_named(model, "conv3.weight").shape, (std::vector<std::int64_t>{384, 256, 3, 3}));
  EXPECT_EQ(tensor_named(model, "conv5.weight").shape, (std::vector<std::int64_t>{256, 192, 3, 3}));
  // fc6 sees the 256x6x6 map that the 227x227 input leaves.
  EXPECT_EQ(tensor_named(model, "fc6.weight").shape, (std::vector<std::int64_t>{4096, 9216}));
}

TEST(Catalog, InceptionV3IncludesTheAuxiliaryClassifier) {
  const Model& model = find_model("inception_v3");
  EXPECT_EQ(tensor_named(model, "AuxLogits.fc.weight").shape,
            (std::vector<std::int64_t>{1000, 768}));
  EXPECT_EQ(tensor_named(model, "AuxLogits.conv1.conv.weight").shape,
            (std::vector<std::int64_t>{768, 128, 5, 5}));
  EXPECT_EQ(tensor_named(model, "Mixed_6b.branch7x7_2.conv.weight").shape,
            (std::vector<std::int64_t>{128, 128, 1, 7}));
}

TEST(Catalog, TransformerNamesAndShapesMatchHuggingFace) {
  const Model& bert = find_model("bert_base");
  EXPECT_EQ(bert.tensors_backprop_order.front().name, "pooler.dense.bias");
  EXPECT_EQ(bert.tensors_backprop_order.back().name, "embeddings.word_embeddings.weight");
  EXPECT_EQ(tensor_named(bert, "encoder.layer.11.intermediate.dense.weight").shape,
            (std::vector<std::int64_t>{3072, 768}));

  const Model& gpt2 = find_model("gpt2");
  EXPECT_EQ(gpt2.tensors_backprop_order.front().name, "ln_f.bias");
  EXPECT_EQ(gpt2.tensors_backprop_order.back().name, "wte.weight");
  // Conv1D keeps [in, out]; the LM head is tied to wte and adds no tensor.
  EXPECT_EQ(tensor_named(gpt2, "h.0.attn.c_attn.weight").shape,
            (std::vector<std::int64_t>{768, 2304}));
  EXPECT_EQ(tensor_named(gpt2, "wte.weight").shape, (std::vector<std::int64_t>{50257, 768}));
  for (const ParamTensor& tensor : gpt2.tensors_backprop_order) {
    EXPECT_EQ(tensor.name.find("lm_head"), std::string::npos);
  }
}

TEST(Catalog, LlamaNamesShapesAndOrderMatchHuggingFace) {
  const Model& llama3 = find_model("llama3_8b");
  const auto& tensors = llama3.tensors_backprop_order;
  ASSERT_GE(tensors.size(), 12u);
  // Reversed LlamaForCausalLM.parameters(): lm_head, model.norm, then the
  // last layer's norms, mlp and attention, each in reverse registration.
  const std::vector<std::string> expected_first = {
      "lm_head.weight",
      "model.norm.weight",
      "model.layers.31.post_attention_layernorm.weight",
      "model.layers.31.input_layernorm.weight",
      "model.layers.31.mlp.down_proj.weight",
      "model.layers.31.mlp.up_proj.weight",
      "model.layers.31.mlp.gate_proj.weight",
      "model.layers.31.self_attn.o_proj.weight",
      "model.layers.31.self_attn.v_proj.weight",
      "model.layers.31.self_attn.k_proj.weight",
      "model.layers.31.self_attn.q_proj.weight",
      "model.layers.30.post_attention_layernorm.weight"};
  for (std::size_t i = 0; i < expected_first.size(); ++i) {
    EXPECT_EQ(tensors[i].name, expected_first[i]) << "index " << i;
  }
  EXPECT_EQ(tensors.back().name, "model.embed_tokens.weight");
  // Grouped-query attention: 8 key/value heads of 128.
  EXPECT_EQ(tensor_named(llama3, "model.layers.0.self_attn.k_proj.weight").shape,
            (std::vector<std::int64_t>{1024, 4096}));
  EXPECT_EQ(tensor_named(llama3, "model.layers.0.mlp.gate_proj.weight").shape,
            (std::vector<std::int64_t>{14336, 4096}));
  EXPECT_EQ(tensor_named(llama3, "lm_head.weight").shape,
            (std::vector<std::int64_t>{128256, 4096}));
  // RMSNorm has no bias, and no linear layer has one.
  for (const ParamTensor& tensor : tensors) {
    EXPECT_EQ(tensor.name.find(".bias"), std::string::npos) << tensor.name;
  }
  EXPECT_EQ(tensor_named(find_model("llama2_7b"), "model.layers.5.self_attn.v_proj.weight").shape,
            (std::vector<std::int64_t>{4096, 4096}));
}

TEST(Catalog, MixtralExpertsAreTensorsOfTheirOwn) {
  const Model& mixtral = find_model("mixtral_8x7b");
  EXPECT_EQ(tensor_named(mixtral, "model.layers.0.block_sparse_moe.gate.weight").shape,
            (std::vector<std::int64_t>{8, 4096}));
  for (int expert = 0; expert < 8; ++expert) {
    const std::string prefix =
        "model.layers.17.block_sparse_moe.experts." + std::to_string(expert) + ".";
    EXPECT_EQ(tensor_named(mixtral, prefix + "w1.weight").shape,
              (std::vector<std::int64_t>{14336, 4096}));
    EXPECT_EQ(tensor_named(mixtral, prefix + "w2.weight").shape,
              (std::vector<std::int64_t>{4096, 14336}));
    EXPECT_EQ(tensor_named(mixtral, prefix + "w3.weight").shape,
              (std::vector<std::int64_t>{14336, 4096}));
  }
  EXPECT_THROW(tensor_named(mixtral, "model.layers.0.block_sparse_moe.experts.8.w1.weight"),
               std::runtime_error);
  // After the norms, backprop meets the last expert's w3 first.
  EXPECT_EQ(mixtral.tensors_backprop_order[4].name,
            "model.layers.31.block_sparse_moe.experts.7.w3.weight");
}

TEST(Catalog, VitB16OwnParametersComeBeforeItsChildren) {
  const Model& vit = find_model("vit_b16");
  const auto& tensors = vit.tensors_backprop_order;
  // named_parameters() lists class_token (VisionTransformer's own) before
  // conv_proj, and Encoder's pos_embedding before its layers.
  ASSERT_GE(tensors.size(), 4u);
  EXPECT_EQ(tensors[tensors.size() - 1].name, "class_token");
  EXPECT_EQ(tensors[tensors.size() - 2].name, "conv_proj.weight");
  EXPECT_EQ(tensors[tensors.size() - 3].name, "conv_proj.bias");
  EXPECT_EQ(tensors[tensors.size() - 4].name, "encoder.pos_embedding");
  EXPECT_EQ(tensors[0].name, "heads.head.bias");
  EXPECT_EQ(tensor_named(vit, "encoder.pos_embedding").shape,
            (std::vector<std::int64_t>{1, 197, 768}));
  EXPECT_EQ(
      tensor_named(vit, "encoder.layers.encoder_layer_11.self_attention.in_proj_weight").shape,
      (std::vector<std::int64_t>{2304, 768}));
  EXPECT_EQ(tensor_named(vit, "conv_proj.weight").shape,
            (std::vector<std::int64_t>{768, 3, 16, 16}));
}

// FSDP units: a transformer block or a residual stage, contiguous in
// backprop order; what is outside every block is the root's.
TEST(Catalog, UnitsAreBlocksOrStagesAndContiguous) {
  struct Expected {
    const char* model;
    std::size_t units;
    const char* tensor;
    const char* unit;
    const char* root_tensor;
  };
  const Expected expected[] = {
      {"resnet50", 4, "layer3.5.conv2.weight", "layer3", "fc.weight"},
      {"bert_base", 12, "encoder.layer.7.output.dense.bias", "encoder.layer.7",
       "pooler.dense.weight"},
      {"gpt2", 12, "h.11.attn.c_attn.weight", "h.11", "wpe.weight"},
      {"vit_b16", 12, "encoder.layers.encoder_layer_3.mlp.0.weight",
       "encoder.layers.encoder_layer_3", "encoder.pos_embedding"},
      {"llama2_7b", 32, "model.layers.9.mlp.up_proj.weight", "model.layers.9", "lm_head.weight"},
      {"mixtral_8x7b", 32, "model.layers.2.block_sparse_moe.experts.5.w2.weight", "model.layers.2",
       "model.embed_tokens.weight"},
      {"vgg16", 0, "features.0.weight", "", "classifier.6.weight"},
  };
  for (const Expected& row : expected) {
    SCOPED_TRACE(row.model);
    const Model& model = find_model(row.model);
    EXPECT_EQ(tensor_named(model, row.tensor).unit, row.unit);
    EXPECT_EQ(tensor_named(model, row.root_tensor).unit, "");
    std::vector<std::string> seen;
    std::string previous;
    for (const ParamTensor& tensor : model.tensors_backprop_order) {
      if (!tensor.unit.empty() && tensor.unit != previous) {
        EXPECT_EQ(std::find(seen.begin(), seen.end(), tensor.unit), seen.end())
            << tensor.unit << " is split";
        seen.push_back(tensor.unit);
      }
      previous = tensor.unit;
    }
    EXPECT_EQ(seen.size(), row.units);
  }
}

TEST(Catalog, TransformerShapesForTensorParallelism) {
  const TransformerShape llama3 = find_model("llama3_8b").transformer;
  EXPECT_EQ(llama3.layers, 32);
  EXPECT_EQ(llama3.hidden, 4096);
  EXPECT_EQ(llama3.heads, 32);
  EXPECT_EQ(llama3.kv_heads, 8);
  EXPECT_EQ(llama3.sequence, 8192);
  EXPECT_EQ(find_model("gpt2").transformer.sequence, 1024);
  EXPECT_EQ(find_model("bert_large").transformer.layers, 24);
  EXPECT_EQ(find_model("vit_b16").transformer.sequence, 197);
  const TransformerShape mixtral = find_model("mixtral_8x7b").transformer;
  EXPECT_EQ(mixtral.sequence, 32768);
  EXPECT_EQ(mixtral.experts, 8);
  EXPECT_EQ(mixtral.experts_per_token, 2);
  EXPECT_EQ(llama3.experts, 0);
  EXPECT_EQ(llama3.experts_per_token, 0);
  EXPECT_EQ(find_model("resnet50").transformer.layers, 0);
}

TEST(Catalog, UnknownModelErrorListsKnownNames) {
  try {
    find_model("resnet51");
    FAIL() << "find_model accepted an unknown name";
  } catch (const std::invalid_argument& error) {
    const std::string message = error.what();
    EXPECT_NE(message.find("\"resnet51\""), std::string::npos) << message;
    for (const std::string& name : model_names()) {
      EXPECT_NE(message.find(name), std::string::npos) << name << " missing from: " << message;
    }
  }
}

TEST(Catalog, DTypeElementSizes) {
  EXPECT_EQ(dtype_element_bytes("f32"), 4u);
  EXPECT_EQ(dtype_element_bytes("f64"), 8u);
  EXPECT_EQ(dtype_element_bytes("f16"), 2u);
  EXPECT_EQ(dtype_element_bytes("bf16"), 2u);
  try {
    dtype_element_bytes("f8");
    FAIL() << "dtype f8 accepted";
  } catch (const std::invalid_argument& error) {
    EXPECT_NE(std::string(error.what()).find("f32, f64, f16, bf16"), std::string::npos);
  }
}

}  // namespace
}  // namespace collbench
