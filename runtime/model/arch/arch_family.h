// Architecture families: what distinguishes one GGUF `general.architecture` from
// another, declared as data, one small file per family (llama.cpp, qwen2.cpp, …). The
// runtime (hyperparameters, weight binding, forward pass) and the compiler (the
// planner's sub-layer table, bytes and FLOPs) both read the same description, so
// adding a family is one file here plus tests.
//
// Every family shares the transformer skeleton pshard runs: embed, per layer a
// pre-norm attention block and a pre-norm FFN or MoE block, head (an encoder: post-norm
// blocks and no head; see ArchFamily::encoder). A family picks the
// options of that skeleton: RoPE style, which optional tensors exist (biases, per-head
// q/k norms, a shared expert), and how the router weighs its experts. Tensor names are
// GGUF's (llama.cpp's) and the same in every family.
//
//   const ArchFamily* f = find_arch_family("qwen3moe");
//   if (!f) return unsupported(unknown_arch_message("qwen3moe"));
//   f->rope_style == RopeStyle::kNeox;   // rotates (x[i], x[i + d/2])
#pragma once

#include <span>
#include <string>
#include <string_view>

namespace pshard {

// How RoPE pairs the values of a head. kNormal: adjacent pairs (x[2i], x[2i+1]), GGUF
// llama (its q/k rows are stored permuted for it). kNeox: halves (x[i], x[i + d/2]),
// as GPT-NeoX and the Qwen families.
enum class RopeStyle : unsigned char { kNormal, kNeox };

// Whether a family's layers have a tensor: never (the file may not have it), maybe
// (decided by the file, all layers alike), always (a file without it is refused).
enum class Presence : unsigned char { kAbsent, kOptional, kRequired };

// The feed-forward block: dense SwiGLU, routed experts, or either (llama: a MoE when
// `{arch}.expert_count` is set, as Mixtral). A MoE model's first
// `{arch}.leading_dense_block_count` layers run dense FFNs of feed_forward_length (GLM-4.5,
// ERNIE 4.5), and with `{arch}.interleave_moe_layer_step` S only every S-th layer after
// them routes (layer l when (l + 1) % S == 0), the others dense.
enum class FfnForm : unsigned char { kDense, kMoe, kDenseOrMoe };

// The gate's activation of a gated FFN: SiLU (SwiGLU: Llama, Qwen), GELU's tanh
// approximation (GeGLU: Gemma), GELU's exact erf form (ModernBERT's GeGLU), or gpt-oss's
// clamped SwiGLU (its experts:
// min(g, 7) * sigmoid(1.702 * min(g, 7)) * (clamp(u, -7, 7) + 1), the constants llama.cpp
// and OpenAI's reference fix; the GGUF records none).
enum class FfnActivation : unsigned char { kSilu, kGeluTanh, kSwigluOai, kGeluErf };

// How a router turns its logits into expert probabilities: a softmax over all experts
// (Mixtral, Qwen) or each logit's sigmoid on its own (GLM-4.5, DeepSeek-V3), llama.cpp's
// `{arch}.expert_gating_func` 1 and 2.
enum class ExpertGating : unsigned char { kSoftmax, kSigmoid };

// Sliding-window attention (Gemma): which layers see only the last
// `{arch}.attention.sliding_window` positions. Every `period`-th layer (the last of each
// run) attends to the whole context, the others locally; `{arch}.attention.
// sliding_window_pattern` in the file overrides the period. Local layers rotate with
// their own RoPE base (`{arch}.rope.freq_base_swa`, else local_rope_base; 0: the global
// one) and, when one is set, without the file's RoPE scaling — unless local_keeps_scaling
// (gpt-oss: llama.cpp keeps the global scaling for its local layers whatever their base).
struct SlidingWindow {
  int period = 0;             // 0: every layer global (the family has no windows)
  // period 0: a sliding_window key is not an error but ignored (Phi-3's converters write
  // the training window; llama.cpp runs these models with full attention).
  bool ignore_key = false;
  int64_t default_window = 0; // when the file has no sliding_window key (0: no windows then)
  float local_rope_base = 0.0f;
  bool local_keeps_scaling = false;
  // The window is centred on the query (a model attending both ways: gemma-embedding,
  // ModernBERT; llama.cpp's symmetric SWA): a query at p sees p - window/2 .. p + window/2.
  bool symmetric = false;
  // The first layer of each run of `period` is the global one (ModernBERT: 0, 3, 6, …),
  // not the last (Gemma: 5, 11, …).
  bool global_first = false;
};

struct ArchFamily {
  std::string_view name;    // general.architecture, also the metadata key prefix
  std::string_view summary; // for messages and listings: "Qwen3 MoE (Qwen3-30B-A3B, -235B-A22B)"
  RopeStyle rope_style = RopeStyle::kNormal;
  FfnForm ffn = FfnForm::kDense;
  Presence qkv_bias = Presence::kAbsent;    // attn_{q,k,v}.bias
  Presence out_bias = Presence::kAbsent;    // attn_output.bias
  // Biases added after each RMSNorm — attn_norm.bias, ffn_norm.bias, output_norm.bias — and
  // to the logits (output.bias): Phi-3.5-MoE as llama.cpp runs it (its RMSNorm, not the
  // LayerNorm of Microsoft's reference code).
  Presence norm_biases = Presence::kAbsent;
  Presence output_bias = Presence::kAbsent;
  Presence qk_norm = Presence::kAbsent;     // attn_{q,k}_norm: RMSNorm of each head before RoPE
  Presence shared_expert = Presence::kAbsent; // ffn_{gate,up,down}_shexp
  // The shared expert's output is scaled by sigmoid(ffn_gate_inp_shexp · x) (Qwen2-MoE), or
  // added as it is (GLM-4.5: no gate tensor; as wide as expert_shared_count routed experts).
  bool shared_expert_gate = true;
  // attn_sinks (gpt-oss): one learned logit per query head that joins every softmax's
  // denominator and attends to nothing.
  Presence attn_sinks = Presence::kAbsent;
  // Biases of the router (ffn_gate_inp.bias) and of every expert's matrices
  // (ffn_{gate,up,down}_exps.bias, one row per expert) (gpt-oss).
  Presence moe_biases = Presence::kAbsent;
  // The FFN (or MoE) block's pre-norm: llama.cpp names gpt-oss's `post_attention_norm`.
  std::string_view ffn_norm = "ffn_norm";
  // Routed experts' width from `{arch}.expert_feed_forward_length` (else feed_forward_length).
  bool expert_width_key = false;
  // The router's probabilities when the file has no `{arch}.expert_gating_func`.
  ExpertGating gating = ExpertGating::kSoftmax;
  // exp_probs_b.bias (GLM-4.5's e_score_correction): one value per expert added to the
  // probabilities to choose the top k, never to weigh them.
  Presence expert_selection_bias = Presence::kAbsent;
  // The top-k router probabilities are renormalised to sum to one (Mixtral, Qwen3-MoE) or
  // used as they come out of the softmax over all experts (Qwen2-MoE).
  // `{arch}.expert_weights_norm` in the file overrides it.
  bool normalize_expert_weights = true;
  // Multimodal RoPE: `{arch}.rope.dimension_sections` (required) splits each head's
  // rotary pairs among temporal, height and width positions (Qwen2-VL).
  bool rope_sections = false;
  FfnActivation activation = FfnActivation::kSilu;
  // RMSNorms of each block's output before its residual add (Gemma 2/3:
  // post_attention_norm, post_ffw_norm).
  Presence post_norms = Presence::kAbsent;
  // The embedding rows are multiplied by sqrt(n_embd) (Gemma).
  bool scale_embeddings = false;
  SlidingWindow sliding = {};
  // Phi-3: q, k and v as one matrix attn_qkv (rows q, then k, then v) — or, when the file
  // has the three, apart; the FFN's gate and up as one ffn_up of 2·n_ff rows (gate first).
  Presence fused_qkv = Presence::kAbsent;
  bool fused_gate_up = false;
  // LongRoPE (Phi-3.5, Phi-4-mini): per-pair divisors rope_factors_long / _short, the
  // long ones for a context past rope.scaling.original_context_length, and cos/sin scaled
  // by rope.scaling.attn_factor.
  bool long_rope = false;
  // Granite's multipliers: `{arch}.embedding_scale` (the embedding rows'),
  // `{arch}.residual_scale` (each block's output before the residual add),
  // `{arch}.logit_scale` (required; the logits are divided by it) and the generic
  // `{arch}.attention.scale`.
  bool multiplier_keys = false;
  // Mistral 3 (Ministral 3): past the original context, queries are scaled by
  // 1 + `{arch}.attention.temperature_scale` · ln(floor((pos + 1) / L) + 1), L the YaRN
  // original context (Llama 4's attention temperature, as llama.cpp computes it), and
  // `rope.scaling.yarn_log_multiplier` divides YaRN's magnitude (DeepSeek's mscale).
  bool attn_temperature = false;
  // SmolLM3, Llama 4: every nope_period-th layer (the last of each run) attends without
  // RoPE (llama.cpp's fixed step of 4; the GGUF records none). 0: every layer rotates.
  int nope_period = 0;
  // Llama 4 (llama.cpp's fixed values; the GGUF records none): the rotating layers attend in
  // chunks — a query at p sees the positions from p's chunk's start, chunks of
  // `{arch}.attention.chunk_size` (default 8192; `attention.sliding_window` 0 in the file:
  // no chunks, and only the last layer unrotated, MobileLLM-R1); the unrotated layers' queries
  // grow by 1 + 0.1 · ln(floor((pos + 1) / 8192) + 1); the rotating layers' q and k are
  // RMS-normalised per head without a weight after RoPE (not with 128 experts: Maverick); and
  // each routed expert's input is its token's row times the expert's weight (output unweighted).
  bool llama4_attention = false;
  bool weighted_expert_inputs = false;
  // Gemma 2's soft-capping defaults (`{arch}.attn_logit_softcapping`,
  // `{arch}.final_logit_softcapping` override them; 0: off): scores and logits x become
  // cap * tanh(x / cap).
  float attn_softcap = 0.0f, final_softcap = 0.0f;
  // The attention scale 1/sqrt(query_pre_attn_scalar) that the GGUF does not record:
  // a model with this many layers (Gemma's 27B) scales by 1/sqrt(n_embd / n_head) instead
  // of 1/sqrt(head_dim), as Google's reference configs and llama.cpp do. 0: never.
  // `{arch}.attention.scale` in the file, when present, is the scale itself.
  int64_t width_scaled_attention_layers = 0;
  // A BERT encoder (embedding models: bge, all-MiniLM, mxbai-embed, arctic-embed). The
  // embedding adds the position's row of position_embd (absolute positions, no RoPE) and
  // token type 0's row of token_types (when the file has it) to the token's, then
  // LayerNorms the sum (token_embd_norm; with a bias, as every encoder norm). The blocks
  // have no pre-norms: each LayerNorms the residual sum after its add (attn_output_norm,
  // layer_output_norm); q/k/v/output biases; the FFN is ffn_up (+ bias), GELU (erf, the
  // models' own definition), ffn_down (+ bias). Attention sees the whole text
  // (`{arch}.attention.causal`, default false), so a text is one pass. No head: the model
  // embeds, it does not generate. Eps from `{arch}.attention.layer_norm_epsilon`.
  bool encoder = false;
  // A decoder's blocks that attend both ways by default (gemma-embedding, ModernBERT): an
  // embedding model without an `attention.causal` key, which may not set it true.
  bool attends_both_ways = false;
  // ModernBERT: the pre-norms and the final norm are LayerNorms without biases (eps
  // `{arch}.attention.layer_norm_epsilon`), not RMSNorms; the token's row is LayerNormed
  // (token_embd_norm, run by attn[0] as an encoder's embedding norm), and layer 0 has no
  // attn_norm (it reads that norm's output). The head is the final norm alone: such a
  // model embeds.
  bool layer_norms = false;
  // An encoder whose positions are RoPE on q and k (the family's rope_style) instead of a
  // position table, and whose FFN is SwiGLU without biases (Nomic Embed's NomicBert).
  bool encoder_rope_glu = false;
  // Multi-head latent attention (DeepSeek-V2/V3): the keys and values of a token are one
  // latent of `attention.kv_lora_rank` values plus a rotated part shared by every head,
  // and the cache holds that instead of each head's keys and values
  // (runtime/model/mla_attention.cpp).
  bool latent_attention = false;
  // Qwen3-Next, Qwen3.5: most layers are Gated DeltaNet (runtime/kernels/delta_net.h), a
  // recurrence over a fixed state, not attention; every `{arch}.full_attention_interval`-th
  // layer (default 4; or the file's per-layer `attention.recurrent_layers`) attends. Their
  // attention is gated: attn_q writes each head's query and then its gate, and the
  // attention's output is multiplied by the gate's sigmoid before attn_output.
  bool gated_delta_net = false;
  bool gated_attention = false;
  // Qwen3.5: b and a from ssm_beta and ssm_alpha (not one ssm_ba grouped per k head), the v
  // heads tiled over the k heads (v head h reads k head h % n_k).
  bool split_beta_alpha = false;
  // Interleaved M-RoPE (`rope.dimension_sections`; Qwen3-VL, Qwen3.5): pair i takes the
  // height position when i % 3 == 1 and i < 3 * sections[1], the width position when
  // i % 3 == 2 and i < 3 * sections[2], else the temporal one (HF's
  // apply_interleaved_mrope). For text, whose three positions are equal, NeoX RoPE.
  bool interleaved_mrope = false;
  // Qwen3-VL: `{arch}.n_deepstack_layers` first layers add an image's DeepStack rows after
  // their last sub-layer (runtime/model/deepstack.h).
  bool deepstack = false;
};

// The family of `general.architecture`, or null.
const ArchFamily* find_arch_family(std::string_view arch);
// Every family pshard runs, in a fixed order (for messages and tests).
std::span<const ArchFamily* const> arch_families();
// "architecture 'X' is not supported; pshard runs: llama (…), qwen2 (…), …"
std::string unknown_arch_message(std::string_view arch);

// The families, one per file in this folder.
extern const ArchFamily kLlamaFamily;
extern const ArchFamily kQwen2Family;
extern const ArchFamily kQwen2VlFamily;
extern const ArchFamily kQwen2MoeFamily;
extern const ArchFamily kQwen3Family;
extern const ArchFamily kQwen3MoeFamily;
extern const ArchFamily kGemma2Family;
extern const ArchFamily kGemma3Family;
extern const ArchFamily kGemmaEmbeddingFamily;
extern const ArchFamily kPhi3Family;
extern const ArchFamily kGraniteFamily;
extern const ArchFamily kGraniteMoeFamily;
extern const ArchFamily kMistral3Family;
extern const ArchFamily kSmolLm3Family;
extern const ArchFamily kLlama4Family;
extern const ArchFamily kGptOssFamily;
extern const ArchFamily kBertFamily;
extern const ArchFamily kNomicBertFamily;
extern const ArchFamily kModernBertFamily;
extern const ArchFamily kGlm4Family;
extern const ArchFamily kGlm4MoeFamily;
extern const ArchFamily kErnie45Family;
extern const ArchFamily kErnie45MoeFamily;
extern const ArchFamily kPhiMoeFamily;
extern const ArchFamily kDots1Family;
extern const ArchFamily kBailingMoe2Family;
extern const ArchFamily kDeepseek2Family;
extern const ArchFamily kQwen3NextFamily;
extern const ArchFamily kQwen35Family;
extern const ArchFamily kQwen35MoeFamily;
extern const ArchFamily kQwen3VlFamily;
extern const ArchFamily kQwen3VlMoeFamily;

} // namespace pshard
