// Hyperparameters of a model of any supported architecture family
// (runtime/model/arch), read from GGUF metadata under the `{arch}.` prefix, plus the
// optional parts this particular file has (biases, q/k norms, a shared expert, a tied
// output), so the forward pass and the planner need not look at the file again.
//
//   PSHARD_ASSIGN_OR_RETURN(ModelHParams hp, read_model_hparams(*file));
//   hp.family->name;      // "qwen3moe"
//   hp.q_dim();           // n_head * head_dim (5120 != 4096 for Mistral-NeMo)
#pragma once

#include "runtime/core/status.h"
#include "runtime/gguf/gguf_file.h"
#include "runtime/kernels/delta_net.h"
#include "runtime/kernels/ops.h"
#include "runtime/model/arch/arch_family.h"
#include "runtime/model/hparam_overrides.h"
#include "runtime/model/pooling.h"
#include "runtime/tokenizer/token_id.h"

#include <cstdint>
#include <string>
#include <vector>

namespace pshard {

struct ModelHParams {
  const ArchFamily* family = &kLlamaFamily;
  std::string name; // general.name, for messages
  int64_t n_vocab = 0;
  int64_t n_ctx_train = 0;
  int64_t n_embd = 0;
  int64_t n_layer = 0; // the blocks the forward pass runs
  // Qwen3-VL: the first layers that add an image's DeepStack rows (runtime/model/deepstack.h).
  int64_t n_deepstack = 0;
  // Blocks of the file after those: a multi-token-prediction head (GLM-4.5's NextN,
  // `nextn_predict_layers`), not run; block_count is n_layer + n_nextn.
  int64_t n_nextn = 0;
  int64_t n_ff = 0; // dense FFN width (MoE models: unused by their layers)
  int64_t n_head = 0;
  int64_t n_head_kv = 0;
  int64_t head_dim = 0; // attention.key_length, else n_embd / n_head
  int64_t rope_dim = 0; // leading values of each head that RoPE rotates
  // Multi-head latent attention (families with latent_attention; 0: none): the latent's
  // width (attention.kv_lora_rank), the queries' low rank (attention.q_lora_rank; 0: one
  // attn_q) and each head's value width after attn_v_b (attention.value_length_mla).
  // head_dim is then a head's query width as attn_q writes it (key_length_mla: its
  // unrotated part, then its rope_dim rotated values).
  int64_t kv_lora_rank = 0, q_lora_rank = 0, head_dim_v = 0;
  // MLA's absorbed form: the cache holds the latent, one KV head (files with attn_k_b and
  // attn_v_b); false: each head's keys and values expanded by attn_kv_b and cached
  // (files converted before 2025).
  bool latent_cache = false;
  // Gated DeltaNet (families with gated_delta_net: Qwen3-Next, Qwen3.5): the recurrent
  // layers' sizes (ssm.*; d_k 0: none) and which layers recur — the others attend.
  DeltaNetDims delta_net;
  std::vector<bool> recurrent_layers;
  // Qwen3-Next's first conversions: q, k, v and the output gate z in one `ssm_in`, grouped per
  // k head ([q | k | its v heads' v | their z] each), in place of attn_qkv and attn_gate.
  bool delta_net_ssm_in = false;
  float rms_eps = 1e-5f;
  float rope_freq_base = 10000.0f;
  float rope_freq_scale = 1.0f; // 1 / linear or YaRN scaling factor
  // RoPE scaling beyond linear (llama3 keys, YaRN), as the kernels take it.
  RopeScaling rope_scaling = RopeScaling::kNone;
  float rope_scaling_factor = 1.0f, rope_low_freq_factor = 1.0f, rope_high_freq_factor = 4.0f;
  int64_t rope_ctx_orig = 0;
  // M-RoPE (families with rope_sections): rotary pairs per temporal/height/width position.
  int32_t rope_sections[3] = {0, 0, 0};
  float yarn_ext_factor = 0.0f, yarn_attn_factor = 1.0f, yarn_beta_fast = 32.0f,
        yarn_beta_slow = 1.0f;
  // MoE (n_expert 0: dense).
  int64_t n_expert = 0;
  int64_t n_expert_used = 0;
  int64_t n_ff_exp = 0;   // width of one routed expert
  int64_t n_ff_shexp = 0; // width of the shared expert (0: none)
  int64_t n_dense_lead = 0; // leading layers with a dense FFN (leading_dense_block_count)
  int64_t moe_layer_step = 1; // after them every this-many-th layer routes (the others dense)
  bool normalize_expert_weights = true;
  ExpertGating gating = ExpertGating::kSoftmax;
  float expert_weights_scale = 1.0f;  // the routed weights' factor after renormalising
  bool expert_selection_bias = false; // exp_probs_b.bias (GLM-4.5)
  // Group-limited routing (expert_group_count / _used_count; DeepSeek-V3, Ling 2.0): the
  // experts in n_expert_groups consecutive groups, chosen only from the best
  // n_expert_groups_used of them. 1: no groups.
  int64_t n_expert_groups = 1, n_expert_groups_used = 1;
  // Optional parts present in this file (all layers alike).
  bool qkv_bias = false;
  bool out_bias = false;
  bool norm_biases = false; // attn_norm/ffn_norm/output_norm biases (phimoe)
  bool output_bias = false; // output.bias on the logits (phimoe)
  bool qk_norm = false;
  bool tied_output = false; // no output.weight: the head multiplies by token_embd
  bool post_norms = false;  // post_attention_norm / post_ffw_norm (Gemma)
  bool fused_qkv = false;   // attn_qkv (Phi-3)
  bool attn_sinks = false;  // attn_sinks: a sink logit per head (gpt-oss)
  bool moe_biases = false;  // router and expert biases (gpt-oss)
  bool token_types = false; // token_types: the encoder adds each token's type row (BERT)
  int64_t n_token_types = 0; // its rows
  // A BERT cross-encoder's [SEP] (a reranker with two or more token types): the tokens
  // after its first one in a text are token type 1 — the second text of the pair, as
  // BERT's tokenizer encodes "[CLS] query [SEP] document [SEP]". kNoToken for every other
  // model, whose tokens are all type 0.
  TokenId pair_separator = kNoToken;
  // Attention sees the whole text, later tokens too (`attention.causal` false: encoders,
  // gte-Qwen2): such a model only embeds, a text in one pass.
  bool causal = true;
  // LongRoPE: rope_factors_long / _short; the long ones when the context passes
  // rope_ctx_orig. Their cos/sin magnitude is yarn_attn_factor (rope.scaling.attn_factor).
  bool long_rope = false;
  // The families' block options (runtime/model/arch/arch_family.h, read by
  // hparams_block_options.cpp); the defaults change nothing.
  float embed_scale = 1.0f;    // the embedding rows' factor (Gemma: sqrt(n_embd); Granite)
  float residual_scale = 1.0f; // a block's output before its residual add (Granite)
  float logit_scale = 1.0f;    // the logits' factor (Granite: 1 / its logit_scale)
  float attn_scale = 0.0f;     // the attention scores' factor; 0: 1/sqrt(head_dim)
  float attn_softcap = 0.0f, final_softcap = 0.0f; // Gemma 2; 0: off
  // Mistral 3's attention temperature (0: none) and the positions per step of it; Llama 4's,
  // on its unrotated layers only.
  float attn_temp_scale = 0.0f;
  int64_t attn_temp_length = 0;
  bool temp_on_unrotated_only = false;
  // Every nope_period-th layer attends without RoPE (the family's; 0: every layer rotates).
  int nope_period = 0;
  // Llama 4: local layers attend in chunks of sliding_window positions (from the query's
  // chunk's start), not a window ending at the query.
  bool chunked_window = false;
  // Llama 4: the rotating layers' q and k RMS-normalised per head, without a weight, after
  // RoPE.
  bool rope_qk_norm = false;
  int64_t sliding_window = 0;     // positions a local layer sees (0: no local layers)
  std::vector<bool> local_layers; // per layer: attends to the window only
  float local_rope_base = 0.0f;   // local layers' RoPE base (0: the global RoPE); unscaled
                                  // unless the family keeps the scaling (gpt-oss)
  // Embedding models name how their rows are pooled (pooling_type); others leave it
  // unspecified (runtime/model/pooling.h).
  Pooling pooling = Pooling::kUnspecified;

  bool is_moe() const { return n_expert > 0; }
  // Whether layer `layer` routes experts (a MoE model's leading dense layers do not, nor
  // those between interleaved MoE layers).
  bool is_moe_layer(int64_t layer) const {
    return is_moe() && layer >= n_dense_lead && (layer + 1) % moe_layer_step == 0;
  }
  // The first layer that routes (n_layer when none does).
  int64_t first_moe_layer() const;
  bool has_dense_layers() const { return !is_moe() || first_moe_layer() > 0 || moe_layer_step > 1; }
  bool has_shared_expert() const { return n_ff_shexp > 0; }
  int64_t q_dim() const { return n_head * head_dim; }
  bool has_recurrent_layers() const { return delta_net.d_k > 0; }
  bool is_recurrent_layer(int64_t layer) const {
    return layer >= 0 && static_cast<size_t>(layer) < recurrent_layers.size() &&
           recurrent_layers[static_cast<size_t>(layer)];
  }
  // The first layer that attends (n_layer when every layer recurs).
  int64_t first_attention_layer() const {
    int64_t il = 0;
    while (il < n_layer && is_recurrent_layer(il))
      ++il;
    return il;
  }
  // attn_q's rows: each head's query, then (gated attention: Qwen3-Next) its gate.
  int64_t q_rows() const { return family->gated_attention ? 2 * q_dim() : q_dim(); }
  bool latent_attention() const { return kv_lora_rank > 0; }
  // What the attention op sees per KV head: keys of attn_key_dim values, values of
  // attn_value_dim (MLA's absorbed form: the rotated part then the latent, and the latent,
  // one KV head; its older form: a head's keys, rotated part first, and its values).
  int64_t attn_key_dim() const { return latent_cache ? rope_dim + kv_lora_rank : head_dim; }
  int64_t attn_value_dim() const {
    return latent_cache ? kv_lora_rank : latent_attention() ? head_dim_v : head_dim;
  }
  // Values of a position's K row and V row in the cache.
  int64_t kv_dim() const { return n_head_kv * attn_key_dim(); }
  int64_t v_dim() const { return n_head_kv * attn_value_dim(); }
  // Width of the FFN scratch (gate/up activations): the largest FFN the layers run.
  int64_t ffn_scratch_width() const;
  // The RoPE of this model for its attention blocks (freq_factors: rope_freqs or null).
  RopeParams rope(const float* freq_factors) const;
  // Layer `layer`'s: a local layer's own base, unscaled, when the family has one.
  RopeParams rope(const float* freq_factors, int64_t layer) const;
  bool is_local_layer(int64_t layer) const {
    return layer >= 0 && static_cast<size_t>(layer) < local_layers.size() &&
           local_layers[static_cast<size_t>(layer)];
  }
  // LongRoPE: whether a sequence of n_ctx positions rotates by the long factors.
  bool uses_long_rope_factors(int64_t n_ctx) const { return long_rope && n_ctx > rope_ctx_orig; }
  // Whether layer `layer`'s attention rotates q and k (SmolLM3's NoPE layers do not).
  // An encoder whose positions are rows of position_embd (BERT), not RoPE.
  bool has_position_table() const { return family->encoder && !family->encoder_rope_glu; }
  bool uses_rope(int64_t layer) const {
    if (has_position_table())
      return false;
    return nope_period == 0 || layer < 0 || (layer + 1) % nope_period != 0;
  }
  // The window is centred on the query (gemma-embedding, ModernBERT: they attend both
  // ways): a query at p sees p - sliding_window/2 .. p + sliding_window/2.
  bool symmetric_window() const { return family->sliding.symmetric; }
  // The positions a query of layer `layer` sees back to itself included (0: all).
  int64_t attention_window(int64_t layer) const {
    return is_local_layer(layer) ? sliding_window : 0;
  }
  // The attention temperature of layer `layer` (0: none).
  float attention_temperature(int64_t layer) const {
    return temp_on_unrotated_only && uses_rope(layer) ? 0.0f : attn_temp_scale;
  }
};

// Fails with a message naming the key (or tensor) for anything missing, inconsistent
// or unsupported: an architecture without a family, an unknown RoPE scaling type, a
// layer that has an optional tensor another layer lacks, …
// `overrides` (hparam_overrides.h) stand in for the file's keys of the same suffix.
Result<ModelHParams> read_model_hparams(const gguf::GgufFile& file,
                                        const HParamOverrides* overrides = nullptr);

// What a model that attends both ways answers a request for logits.
inline constexpr const char* kEmbedsOnlyMessage =
    "this model attends both ways (an encoder such as BERT, or attention.causal false): it "
    "embeds text, it does not generate; use --embedding (pshard-run), the embeddings "
    "endpoint (pshard-server) or pshard_context_embed";

// Refuses generating (logits) with such a model, kEmbedsOnlyMessage.
Status check_generates(const ModelHParams& hp);

// decode_embeddings' check for such a model: a text is one pass from position 0.
Status check_one_pass_text(const ModelHParams& hp, int64_t n_past, int64_t max_rows);

// The most tokens a session's pass holds, asked for n_batch with a context of n_ctx: a
// model that attends both ways embeds a text in one pass, so its pass holds the context.
inline int64_t pass_tokens_for(const ModelHParams& hp, int64_t n_batch, int64_t n_ctx) {
  return hp.causal || n_batch >= n_ctx ? n_batch : n_ctx;
}

// A session's context against the model: an encoder with a position table has rows for
// its training context only, so a longer one is refused, naming -c.
Status check_context_fits(const ModelHParams& hp, int64_t n_ctx);

} // namespace pshard
