// Decoder-only language models of the Llama family, written as Hugging Face
// transformers defines them (modeling_llama.py LlamaForCausalLM,
// modeling_mixtral.py MixtralForCausalLM), with its parameter names and in
// its registration order:
//   model.embed_tokens, then per decoder layer self_attn (q_proj, k_proj,
//   v_proj, o_proj), the feed-forward (mlp: gate_proj, up_proj, down_proj;
//   Mixtral's block_sparse_moe: gate, then experts.E.w1, w2, w3 for each
//   expert), input_layernorm, post_attention_layernorm; then model.norm and
//   lm_head.
// No linear layer has a bias (attention_bias and mlp_bias are false), the
// norms are RMSNorm (a weight, no bias), the rotary embedding has no
// parameters, and lm_head is not tied to embed_tokens (tie_word_embeddings
// false), so it is a tensor of its own.
//
// Attention is grouped-query: k_proj and v_proj give kv_heads x head_dim
// outputs. FLOPs follow models_transformer.cpp's accounting (2 per weight
// per token through every linear layer, attention's two s² products),
// over the full context; an expert sees only the tokens routed to it:
// with uniform top-k routing, s·k/E of them.
#include <fmt/format.h>

#include <stdexcept>
#include <string>

#include "layers.h"
#include "models.h"

namespace collbench::catalog_detail {
namespace {

struct DecoderShape {
  std::int64_t vocabulary;
  std::int64_t context;  // max_position_embeddings, the sequence the FLOPs count
  std::int64_t hidden;
  std::int64_t intermediate;
  std::int64_t layers;
  std::int64_t heads;
  std::int64_t kv_heads;
  std::int64_t experts = 0;            // 0: a dense mlp (Llama)
  std::int64_t experts_per_token = 0;  // top-k of the router (Mixtral)
};

void attention(ModelBuilder& b, const std::string& prefix, const DecoderShape& shape) {
  const std::int64_t s = shape.context;
  const std::int64_t h = shape.hidden;
  const std::int64_t kv_dim = shape.kv_heads * (h / shape.heads);
  b.linear(prefix + "self_attn.q_proj", h, h, s, /*bias=*/false);
  b.linear(prefix + "self_attn.k_proj", h, kv_dim, s, /*bias=*/false);
  b.linear(prefix + "self_attn.v_proj", h, kv_dim, s, /*bias=*/false);
  attention_products(b, prefix + "self_attn.", s, h, shape.heads);
  b.linear(prefix + "self_attn.o_proj", h, h, s, /*bias=*/false);
}

// LlamaMLP: down_proj(silu(gate_proj(x)) * up_proj(x)).
void dense_mlp(ModelBuilder& b, const std::string& prefix, const DecoderShape& shape) {
  const std::int64_t s = shape.context;
  b.linear(prefix + "mlp.gate_proj", shape.hidden, shape.intermediate, s, /*bias=*/false);
  b.linear(prefix + "mlp.up_proj", shape.hidden, shape.intermediate, s, /*bias=*/false);
  b.linear(prefix + "mlp.down_proj", shape.intermediate, shape.hidden, s, /*bias=*/false);
}

// MixtralSparseMoeBlock: a router (gate) over every token, then E experts
// (MixtralBlockSparseTop2MLP: w2(silu(w1(x)) * w3(x))), each its own
// tensors, each running on the tokens routed to it.
void sparse_moe(ModelBuilder& b, const std::string& prefix, const DecoderShape& shape) {
  const std::int64_t s = shape.context;
  const std::int64_t routed = shape.context * shape.experts_per_token;
  if (routed % shape.experts != 0) {
    throw std::invalid_argument(fmt::format("{}: {} tokens x top-{} do not split over {} experts",
                                            prefix, s, shape.experts_per_token, shape.experts));
  }
  const std::int64_t tokens_per_expert = routed / shape.experts;
  b.linear(prefix + "block_sparse_moe.gate", shape.hidden, shape.experts, s, /*bias=*/false);
  for (std::int64_t expert = 0; expert < shape.experts; ++expert) {
    const std::string name = fmt::format("{}block_sparse_moe.experts.{}.", prefix, expert);
    b.linear(name + "w1", shape.hidden, shape.intermediate, tokens_per_expert, /*bias=*/false);
    b.linear(name + "w2", shape.intermediate, shape.hidden, tokens_per_expert, /*bias=*/false);
    b.linear(name + "w3", shape.hidden, shape.intermediate, tokens_per_expert, /*bias=*/false);
  }
}

Model make_decoder(std::string name, std::string variant, std::string reference,
                   const DecoderShape& shape) {
  ModelBuilder b(std::move(name), std::move(variant), std::move(reference),
                 fmt::format("{} tokens", shape.context));
  const std::int64_t h = shape.hidden;
  b.embedding("model.embed_tokens", shape.vocabulary, h);
  for (std::int64_t layer = 0; layer < shape.layers; ++layer) {
    const std::string unit = fmt::format("model.layers.{}", layer);
    const std::string prefix = unit + ".";
    b.unit(unit);
    attention(b, prefix, shape);
    if (shape.experts == 0) {
      dense_mlp(b, prefix, shape);
    } else {
      sparse_moe(b, prefix, shape);
    }
    b.rms_norm(prefix + "input_layernorm", h);
    b.rms_norm(prefix + "post_attention_layernorm", h);
  }
  b.unit("");
  b.rms_norm("model.norm", h);
  b.linear("lm_head", h, shape.vocabulary, shape.context, /*bias=*/false);
  b.transformer({.layers = shape.layers,
                 .hidden = h,
                 .heads = shape.heads,
                 .kv_heads = shape.kv_heads,
                 .sequence = shape.context,
                 .experts = shape.experts,
                 .experts_per_token = shape.experts_per_token});
  return std::move(b).finish();
}

}  // namespace

// meta-llama/Llama-2-7b-hf (config.json: hidden_size 4096, intermediate_size
// 11008, 32 layers, 32 attention and 32 key/value heads, vocab_size 32000,
// max_position_embeddings 4096, tie_word_embeddings false). 6,738,415,616 =
//   embed_tokens 131,072,000 + 32 layers x 202,383,360 (attention 4 x 4096²,
//   mlp 3 x 4096 x 11008, two norms 8,192) + norm 4,096 + lm_head
//   131,072,000,
// what LlamaForCausalLM.from_pretrained('meta-llama/Llama-2-7b-hf')
// .num_parameters() reports.
Model make_llama2_7b() {
  return make_decoder("llama2_7b", "Hugging Face LlamaForCausalLM meta-llama/Llama-2-7b-hf",
                      "transformers LlamaForCausalLM meta-llama/Llama-2-7b-hf: 6738415616 params; "
                      "FLOPs: 2 per weight per token + attention 4s^2lh, s = 4096",
                      {.vocabulary = 32000,
                       .context = 4096,
                       .hidden = 4096,
                       .intermediate = 11008,
                       .layers = 32,
                       .heads = 32,
                       .kv_heads = 32});
}

// meta-llama/Meta-Llama-3-8B (config.json: hidden_size 4096,
// intermediate_size 14336, 32 layers, 32 attention and 8 key/value heads,
// vocab_size 128256, max_position_embeddings 8192, tie_word_embeddings
// false). 8,030,261,248 =
//   embed_tokens 525,336,576 + 32 layers x 218,112,000 (q and o 4096²,
//   k and v 4096 x 1024, mlp 3 x 4096 x 14336, two norms 8,192)
//   + norm 4,096 + lm_head 525,336,576,
// what LlamaForCausalLM.from_pretrained('meta-llama/Meta-Llama-3-8B')
// .num_parameters() reports.
Model make_llama3_8b() {
  return make_decoder("llama3_8b", "Hugging Face LlamaForCausalLM meta-llama/Meta-Llama-3-8B",
                      "transformers LlamaForCausalLM meta-llama/Meta-Llama-3-8B: 8030261248 "
                      "params; FLOPs: 2 per weight per token + attention 4s^2lh, s = 8192",
                      {.vocabulary = 128256,
                       .context = 8192,
                       .hidden = 4096,
                       .intermediate = 14336,
                       .layers = 32,
                       .heads = 32,
                       .kv_heads = 8});
}

// mistralai/Mixtral-8x7B-v0.1 (config.json: hidden_size 4096,
// intermediate_size 14336, 32 layers, 32 attention and 8 key/value heads,
// num_local_experts 8, num_experts_per_tok 2, vocab_size 32000,
// max_position_embeddings 32768, tie_word_embeddings false).
// 46,702,792,704 =
//   embed_tokens 131,072,000 + 32 layers x 1,451,270,144 (attention
//   41,943,040, router 4096 x 8, 8 experts x 3 x 4096 x 14336, two norms
//   8,192) + norm 4,096 + lm_head 131,072,000,
// what MixtralForCausalLM.from_pretrained('mistralai/Mixtral-8x7B-v0.1')
// .num_parameters() reports (Mistral AI, "Mixtral of experts", 2023: "46.7B
// total parameters but only uses 12.9B parameters per token").
Model make_mixtral_8x7b() {
  return make_decoder("mixtral_8x7b", "Hugging Face MixtralForCausalLM mistralai/Mixtral-8x7B-v0.1",
                      "transformers MixtralForCausalLM mistralai/Mixtral-8x7B-v0.1: 46702792704 "
                      "params; FLOPs: 2 per active weight per token (top-2 of 8 experts) + "
                      "attention 4s^2lh, s = 32768",
                      {.vocabulary = 32000,
                       .context = 32768,
                       .hidden = 4096,
                       .intermediate = 14336,
                       .layers = 32,
                       .heads = 32,
                       .kv_heads = 8,
                       .experts = 8,
                       .experts_per_token = 2});
}

}  // namespace collbench::catalog_detail
