// Transformer encoders and GPT-2 of the catalog, written as Hugging Face
// transformers defines them (modeling_bert.py, modeling_gpt2.py) and ViT as
// torchvision does (vision_transformer.py), with their parameter names.
// Llama and Mixtral are in models_llama.cpp.
//
// FLOPs per sample are those of one sequence. Per layer and sequence of s
// tokens with hidden size h and feed-forward size f, the multiply-adds are
// the four h x h projections (4·s·h²), the attention scores Q·Kᵀ and the
// weighted values A·V (s²·h each, summed over heads) and the feed-forward
// pair (2·s·h·f). This is the accounting of Narayanan et al., "Efficient
// Large-Scale Language Model Training on GPU Clusters Using Megatron-LM"
// (SC'21), whose forward pass costs 24·s·l·h² + 4·s²·l·h FLOPs for f = 4h,
// plus 2·s·h·V for a language-model head over a vocabulary of V.
#include <fmt/format.h>

#include <string>

#include "layers.h"
#include "models.h"

namespace collbench::catalog_detail {
namespace {

struct BertShape {
  std::int64_t layers;
  std::int64_t hidden;
  std::int64_t heads;
  std::int64_t intermediate;
};

// BERT's published vocabulary (uncased WordPiece), position and segment
// tables, from the bert-*-uncased config.json files.
constexpr std::int64_t kBertVocabulary = 30522;
constexpr std::int64_t kBertMaxPositions = 512;
constexpr std::int64_t kBertTokenTypes = 2;
// The length of 90% of BERT's pre-training steps (Devlin et al. 2019, A.2).
constexpr std::int64_t kBertSequence = 128;

// BertModel: embeddings, encoder, pooler, registered in that order; no
// pre-training heads (the published counts are BertModel's). The pooler's
// dense layer runs on the [CLS] token only.
Model make_bert(std::string name, std::string variant, std::string reference,
                const BertShape& shape) {
  ModelBuilder b(std::move(name), std::move(variant), std::move(reference),
                 fmt::format("{} tokens", kBertSequence));
  const std::int64_t s = kBertSequence;
  const std::int64_t h = shape.hidden;
  b.embedding("embeddings.word_embeddings", kBertVocabulary, h);
  b.embedding("embeddings.position_embeddings", kBertMaxPositions, h);
  b.embedding("embeddings.token_type_embeddings", kBertTokenTypes, h);
  b.layer_norm("embeddings.LayerNorm", h);
  for (std::int64_t layer = 0; layer < shape.layers; ++layer) {
    const std::string prefix = fmt::format("encoder.layer.{}.", layer);
    b.unit(fmt::format("encoder.layer.{}", layer));
    b.linear(prefix + "attention.self.query", h, h, s);
    b.linear(prefix + "attention.self.key", h, h, s);
    b.linear(prefix + "attention.self.value", h, h, s);
    attention_products(b, prefix + "attention.self.", s, h, shape.heads);
    b.linear(prefix + "attention.output.dense", h, h, s);
    b.layer_norm(prefix + "attention.output.LayerNorm", h);
    b.linear(prefix + "intermediate.dense", h, shape.intermediate, s);
    b.linear(prefix + "output.dense", shape.intermediate, h, s);
    b.layer_norm(prefix + "output.LayerNorm", h);
  }
  b.unit("");
  b.linear("pooler.dense", h, h, /*rows=*/1);
  b.transformer({.layers = shape.layers,
                 .hidden = h,
                 .heads = shape.heads,
                 .kv_heads = shape.heads,
                 .sequence = s});
  return std::move(b).finish();
}

}  // namespace

// Hugging Face bert-base-uncased as BertModel (with pooler, no MLM/NSP
// heads): 109,482,240 parameters =
//   embeddings 23,837,184 + 12 layers x 7,087,872 + pooler 590,592.
Model make_bert_base() {
  return make_bert("bert_base", "Hugging Face BertModel bert-base-uncased (with pooler, no heads)",
                   "transformers BertModel.from_pretrained('bert-base-uncased'): 109482240 "
                   "params; FLOPs: Narayanan et al. SC'21 forward 24slh^2 + 4s^2lh, s = 128",
                   {.layers = 12, .hidden = 768, .heads = 12, .intermediate = 3072});
}

// Hugging Face bert-large-uncased as BertModel: 335,141,888 parameters =
//   embeddings 31,782,912 + 24 layers x 12,596,224 + pooler 1,049,600.
Model make_bert_large() {
  return make_bert("bert_large",
                   "Hugging Face BertModel bert-large-uncased (with pooler, no heads)",
                   "transformers BertModel.from_pretrained('bert-large-uncased'): 335141888 "
                   "params; FLOPs: Narayanan et al. SC'21 forward 24slh^2 + 4s^2lh, s = 128",
                   {.layers = 24, .hidden = 1024, .heads = 16, .intermediate = 4096});
}

// Hugging Face gpt2 (the 124M model): GPT2LMHeadModel, whose lm_head is tied
// to wte and so adds no tensor; its parameters are GPT2Model's 124,439,808 =
//   wte 38,597,376 + wpe 786,432 + 12 blocks x 7,087,872 + ln_f 1,536.
// Conv1D stores weights as [in, out]. The FLOPs include the tied LM head's
// logits (2·s·h·V), which training computes, over the full 1024-token
// context; the causal mask does not save work in the reference attention.
Model make_gpt2() {
  constexpr std::int64_t kVocabulary = 50257;
  constexpr std::int64_t kContext = 1024;
  constexpr std::int64_t kHidden = 768;
  constexpr std::int64_t kLayers = 12;
  constexpr std::int64_t kHeads = 12;
  constexpr std::int64_t kInner = 4 * kHidden;
  ModelBuilder b("gpt2", "Hugging Face GPT2LMHeadModel gpt2 (124M, lm_head tied to wte)",
                 "transformers GPT2Model/GPT2LMHeadModel.from_pretrained('gpt2'): 124439808 "
                 "params; FLOPs: Narayanan et al. SC'21 forward 24slh^2 + 4s^2lh + 2shV, s = 1024",
                 fmt::format("{} tokens", kContext));
  b.embedding("wte", kVocabulary, kHidden);
  b.embedding("wpe", kContext, kHidden);
  for (std::int64_t layer = 0; layer < kLayers; ++layer) {
    const std::string prefix = fmt::format("h.{}.", layer);
    b.unit(fmt::format("h.{}", layer));
    b.layer_norm(prefix + "ln_1", kHidden);
    b.conv1d_transposed_linear(prefix + "attn.c_attn", kHidden, 3 * kHidden, kContext);
    attention_products(b, prefix + "attn.", kContext, kHidden, kHeads);
    b.conv1d_transposed_linear(prefix + "attn.c_proj", kHidden, kHidden, kContext);
    b.layer_norm(prefix + "ln_2", kHidden);
    b.conv1d_transposed_linear(prefix + "mlp.c_fc", kHidden, kInner, kContext);
    b.conv1d_transposed_linear(prefix + "mlp.c_proj", kInner, kHidden, kContext);
  }
  b.unit("");
  b.layer_norm("ln_f", kHidden);
  b.transformer({.layers = kLayers,
                 .hidden = kHidden,
                 .heads = kHeads,
                 .kv_heads = kHeads,
                 .sequence = kContext});
  // lm_head: logits = hidden · wteᵀ, reusing wte (no new parameter).
  b.gemm("lm_head", {.m = kContext, .n = kVocabulary, .k = kHidden});
  return std::move(b).finish();
}

// torchvision vit_b_16 (Dosovitskiy et al. 2021, ViT-Base/16):
// VisionTransformer(image_size 224, patch_size 16, num_layers 12,
// num_heads 12, hidden_dim 768, mlp_dim 3072), 1000 classes. Its
// parameters, in named_parameters() order (a module's own parameters before
// its children's): class_token, conv_proj, encoder.pos_embedding, the 12
// encoder layers (ln_1, self_attention.in_proj_weight/in_proj_bias and
// out_proj, ln_2, mlp.0, mlp.3), encoder.ln, heads.head. 86,567,656 =
//   class_token 768 + conv_proj 590,592 + pos_embedding 197 x 768 = 151,296
//   + 12 layers x 7,087,872 + encoder.ln 1,536 + head 769,000,
// ViT_B_16_Weights.IMAGENET1K_V1's num_params. Tokens: 14 x 14 patches
// and the class token, 197.
Model make_vit_b16() {
  constexpr std::int64_t kImage = 224;
  constexpr std::int64_t kPatch = 16;
  constexpr std::int64_t kHidden = 768;
  constexpr std::int64_t kLayers = 12;
  constexpr std::int64_t kHeads = 12;
  constexpr std::int64_t kMlp = 3072;
  constexpr std::int64_t kClasses = 1000;
  constexpr std::int64_t kTokens = (kImage / kPatch) * (kImage / kPatch) + 1;
  ModelBuilder b("vit_b16", "torchvision vit_b_16 (ViT-Base, 16x16 patches, 224x224)",
                 "torchvision.models.vit_b_16; params: ViT_B_16_Weights.IMAGENET1K_V1 "
                 "num_params 86567656; FLOPs: its GFLOPS 17.56 (multiply-adds)",
                 "3x224x224 image (197 tokens)");
  b.parameter("class_token", {1, 1, kHidden});
  b.conv2d("conv_proj", {3, kImage, kImage},
           {.out_channels = kHidden, .kernel = square(kPatch), .stride = square(kPatch)});
  b.parameter("encoder.pos_embedding", {1, kTokens, kHidden});
  for (std::int64_t layer = 0; layer < kLayers; ++layer) {
    const std::string unit = fmt::format("encoder.layers.encoder_layer_{}", layer);
    const std::string prefix = unit + ".";
    b.unit(unit);
    b.layer_norm(prefix + "ln_1", kHidden);
    // nn.MultiheadAttention: its own in_proj_weight and in_proj_bias, then
    // its out_proj child.
    b.gemm(prefix + "self_attention.in_proj", {.m = kTokens, .n = 3 * kHidden, .k = kHidden});
    b.parameter(prefix + "self_attention.in_proj_weight", {3 * kHidden, kHidden});
    b.parameter(prefix + "self_attention.in_proj_bias", {3 * kHidden});
    attention_products(b, prefix + "self_attention.", kTokens, kHidden, kHeads);
    b.linear(prefix + "self_attention.out_proj", kHidden, kHidden, kTokens);
    b.layer_norm(prefix + "ln_2", kHidden);
    b.linear(prefix + "mlp.0", kHidden, kMlp, kTokens);
    b.linear(prefix + "mlp.3", kMlp, kHidden, kTokens);
  }
  b.unit("");
  b.layer_norm("encoder.ln", kHidden);
  // The head classifies the class token only.
  b.linear("heads.head", kHidden, kClasses, /*rows=*/1);
  b.transformer({.layers = kLayers,
                 .hidden = kHidden,
                 .heads = kHeads,
                 .kv_heads = kHeads,
                 .sequence = kTokens});
  return std::move(b).finish();
}

}  // namespace collbench::catalog_detail
