// Synthetic GGUF models of any supported architecture family and shape, for tests and
// benchmarks: the tensors are exactly those of the runtime's tensor layout
// (runtime/model/tensor_layout.h) for the family, with deterministic random weights
// from a seed, any weight type (with per-class overrides), a tokenizer copied from
// another GGUF or a small generated one, and a sparse mode that writes headers only (a
// 235B shape without 77 GB of disk).
//
//   ModelSpec spec;
//   spec.n_embd = 2048; spec.n_layer = 16; spec.n_head = 32; spec.n_head_kv = 8;
//   spec.n_ff = 8192; spec.type = TensorType::kQ4_0;
//   PSHARD_RETURN_IF_ERROR(write_model(spec, "llama-1b-q4_0.gguf"));
#pragma once

#include "runtime/core/status.h"
#include "runtime/tensor/tensor_type.h"
#include "tools/pshard-mkmodel/quant_mix.h"

#include <cstdint>
#include <map>
#include <string>

namespace pshard {

struct ModelSpec {
  std::string arch = "llama"; // general.architecture: a family of runtime/model/arch
  std::string name = "pshard-mkmodel";
  int64_t n_embd = 64;
  int64_t n_layer = 2;
  int64_t n_head = 4;
  int64_t n_head_kv = 0;   // 0: same as n_head
  int64_t head_dim = 0;    // 0: n_embd / n_head; else written as attention.key_length
  int64_t n_ff = 172;      // the dense FFN, or one routed expert's width for MoE
  int64_t n_expert = 0;    // 0: dense
  int64_t n_expert_used = 0;
  int64_t n_ff_shexp = 0;            // shared expert width (families that have one); 0: 4 x n_ff
                                     // (one expert's where the shared expert is ungated: glm4moe)
  int64_t n_dense_lead = 0;          // MoE: leading layers with a dense FFN of n_ff_dense
  int64_t n_ff_dense = 0;            // 0: 3 x n_ff
  int64_t moe_layer_step = 1;        // MoE: after the dense leads every this-many-th layer routes
  int64_t n_expert_groups = 0;       // MoE: group-limited routing's groups (0: none)
  int64_t n_expert_groups_used = 0;  // and how many of them a token's experts come from
  float expert_weights_scale = 1.0f; // MoE: the routed weights' factor
  int64_t n_nextn = 0;               // blocks after the model's (GLM-4.5's NextN head), not run
  int64_t rope_dim = 0;              // rope.dimension_count; 0: the head size
  // Latent attention (deepseek2; head_dim is then key_length_mla, rope_dim its rotated
  // part): the latent's width (0: 2 x the head size), the queries' low rank (0: one
  // attn_q) and a head's value width (0: the head size less rope_dim).
  int64_t kv_lora_rank = 0, q_lora_rank = 0, head_dim_v = 0;
  // Latent attention in the older files' form (one attn_kv_b, key_length/value_length of a
  // head and no *_mla keys), as llama.cpp converted DeepSeek before 2025.
  bool mla_kv_b = false;
  // Gated DeltaNet (qwen3next): a head's key width (ssm.state_size; 0: the head size), the k
  // heads (ssm.group_count; 0: --n-head-kv's count), the v heads (ssm.time_step_rank; 0:
  // --n-head's), the conv's taps, and every this-many-th layer attends.
  int64_t ssm_state = 0, ssm_groups = 0, ssm_v_heads = 0, ssm_conv = 4;
  int64_t full_attention_interval = 4;
  // qwen3vl / qwen3vlmoe: the first layers that add an image's DeepStack rows.
  int64_t n_deepstack = 0;
  bool ssm_in = false;     // qwen3next: the first conversions' one ssm_in for q, k, v and z
  bool qkv_bias = false;   // llama: add the optional attn_{q,k,v}.bias (others: by family)
  // RoPE scaling written into the metadata: "none", "linear", "yarn" or "llama3".
  std::string rope_scaling = "none";
  float rope_scaling_factor = 1.0f;
  int64_t rope_ctx_orig = 0; // yarn/llama3 original context (0: --ctx / scaling factor)
  int64_t n_vocab = 0;     // 0: the copied tokenizer's size, or 512 for the generated one
  int64_t n_ctx = 2048;
  float rope_freq_base = 10000.0f;
  bool tied_output = false; // no output.weight: the head reuses token_embd
  // Gemma: {arch}.attention.sliding_window (-1: not written, the family's default then;
  // 0: written as 0, no windows), and the soft-caps (< 0: not written).
  int64_t sliding_window = -1;
  float attn_softcap = -1.0f, final_softcap = -1.0f;
  float attn_temperature_scale = -1.0f; // mistral3: attention.temperature_scale (< 0: not written)
  int64_t attn_chunk = -1;   // llama4: attention.chunk_size (< 0: not written, 8192 then)
  int32_t pooling_type = -1; // {arch}.pooling_type (an embedding model); -1: not written
  // {arch}.attention.causal false: a decoder converted to attend both ways (gte-Qwen2);
  // encoders (bert) always write it.
  bool non_causal = false;
  // A reranker as llama.cpp converts Qwen3-Reranker: pooling_type rank, a head of two rows
  // (cls.output.weight) labelled "yes" and "no", and Qwen3-Reranker's prompt as
  // tokenizer.chat_template.rerank. An encoder's (bert, nomic-bert, --non-causal) as
  // bge-reranker converts: a tanh pooler (cls) and one score (cls.output), no prompt.
  bool rerank = false;
  // > 0: sentence-transformers' Dense modules after pooling, as llama.cpp converts
  // EmbeddingGemma with --sentence-transformers-dense-modules: dense_2 (n_embd -> this
  // width) and dense_3 (back to n_embd), and their {arch}.dense_*_feat_* keys.
  int64_t dense_projection = 0;
  int64_t n_token_types = 2;          // encoders: rows of token_types (BERT 2, XLM-RoBERTa 1)
  bool rerank_prompt_builtin = false; // no tokenizer.chat_template.rerank (older conversions)
  uint64_t seed = 42;
  TensorType type = TensorType::kF32;
  QuantMix mix = QuantMix::kNone; // a llama-quantize recipe per tensor (quant_mix.h)
  // Per tensor class ("token_embd", "output", "attn_q", "attn_k", "attn_v",
  // "attn_output", "ffn_gate", "ffn_up", "ffn_down", "ffn_gate_inp", "ffn_gate_shexp",
  // "ffn_up_shexp", "ffn_down_shexp"); expert tensors follow their ffn_* class. Norms,
  // biases and the shared expert's gate vector are always F32.
  std::map<std::string, TensorType> overrides;
  std::string tokenizer_from; // a GGUF whose tokenizer.* metadata is copied
  std::vector<std::string> control_tokens; // extra control tokens of the generated vocabulary
  std::vector<std::string> user_tokens;    // and user-defined ones, after them
  bool sparse = false;
  uint32_t split_max_tensors = 0; // > 0: a split model (gguf-split's layout), this many a file
};

// Parses "ffn_down=f32,token_embd=q8_0" into spec.overrides.
Status parse_type_overrides(const std::string& text, ModelSpec* spec);

Status write_model(const ModelSpec& spec, const std::string& path);

} // namespace pshard
