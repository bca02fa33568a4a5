#include "tools/pshard-mkmodel/model_metadata.h"

#include <cmath>

namespace pshard {
namespace {

uint32_t u32(int64_t v) { return static_cast<uint32_t>(v); }

Status check_shape(const ModelSpec& s, const ArchFamily& f) {
  if (s.n_embd <= 0 || s.n_layer <= 0 || s.n_head <= 0 || s.n_ff <= 0 || s.n_ctx <= 0)
    return invalid_argument("n_embd, n_layer, n_head, n_ff and the context must be positive");
  const int64_t kv = s.n_head_kv ? s.n_head_kv : s.n_head;
  if (s.n_head_kv < 0 || s.n_head % kv != 0)
    return invalid_argument("--n-head must be a multiple of --n-head-kv");
  if (s.head_dim == 0 && s.n_embd % s.n_head != 0)
    return invalid_argument("--n-embd must be a multiple of --n-head, or give --head-dim");
  const int64_t head = s.head_dim ? s.head_dim : s.n_embd / s.n_head;
  if (head <= 0 || head % 2 != 0)
    return invalid_argument("the head size must be even for RoPE, got " + std::to_string(head));
  if (s.n_expert < 0 || s.n_expert_used < 0 || (s.n_expert > 0) != (s.n_expert_used > 0) ||
      s.n_expert_used > s.n_expert)
    return invalid_argument("an MoE model needs 1 <= --n-expert-used <= --n-expert");
  if (f.ffn == FfnForm::kMoe && s.n_expert == 0)
    return invalid_argument("a " + std::string(f.name) + " model is MoE: give --n-expert and "
                            "--n-expert-used");
  if (f.ffn == FfnForm::kDense && s.n_expert > 0)
    return invalid_argument("a " + std::string(f.name) + " model is dense: --n-expert must be 0");
  if (s.qkv_bias && f.qkv_bias == Presence::kAbsent)
    return invalid_argument(std::string(f.name) + " models have no attention biases (--qkv-bias)");
  if (s.n_ff_shexp != 0 && f.shared_expert == Presence::kAbsent)
    return invalid_argument(std::string(f.name) + " models have no shared expert (--n-ff-shexp)");
  if (!f.shared_expert_gate && s.n_ff_shexp % s.n_ff != 0)
    return invalid_argument(std::string(f.name) + "'s shared expert is as wide as routed experts: "
                                                  "--n-ff-shexp must be a multiple of --n-ff");
  if (s.n_dense_lead < 0 || s.moe_layer_step < 1 ||
      ((s.n_dense_lead > 0 || s.moe_layer_step > 1) &&
       (s.n_expert == 0 || s.n_dense_lead + s.moe_layer_step > s.n_layer)))
    return invalid_argument("--n-dense-lead and --moe-layer-step need a MoE model and must leave "
                            "a layer that routes within --n-layer");
  if (s.n_expert_groups > 1 &&
      (s.n_expert % s.n_expert_groups != 0 || s.n_expert_groups_used < 1 ||
       s.n_expert_groups_used > s.n_expert_groups ||
       s.n_expert_groups_used * (s.n_expert / s.n_expert_groups) < s.n_expert_used))
    return invalid_argument("--expert-groups must split --n-expert evenly and "
                            "--expert-groups-used keep at least --n-expert-used experts");
  if (s.n_nextn < 0 || s.rope_dim < 0 || s.rope_dim > head || s.rope_dim % 2 != 0)
    return invalid_argument("--rope-dim must be even and at most the head size " +
                            std::to_string(head) + "; --nextn-layers not negative");
  if (s.sliding_window >= 0 && f.sliding.period == 0 && !f.llama4_attention)
    return invalid_argument(std::string(f.name) +
                            " models have no sliding window (--sliding-window)");
  if (s.attn_chunk >= 0 && (!f.llama4_attention || s.attn_chunk == 0))
    return invalid_argument(std::string(f.name) + " models have no attention chunks "
                                                  "(--attn-chunk; llama4's must be positive)");
  if (s.attn_temperature_scale >= 0 && !f.attn_temperature)
    return invalid_argument(std::string(f.name) +
                            " models have no attention temperature (--attn-temperature-scale)");
  if (f.latent_attention && (s.rope_dim <= 0 || s.rope_dim >= head || s.n_head_kv > 1))
    return invalid_argument(std::string(f.name) +
                            "'s latent attention rotates part of each "
                            "head, shared by all: give --rope-dim below the head size " +
                            std::to_string(head) + ", and --n-head-kv 1 or none");
  if (!f.latent_attention && (s.kv_lora_rank || s.q_lora_rank || s.head_dim_v || s.mla_kv_b))
    return invalid_argument(std::string(f.name) +
                            " models have no latent attention "
                            "(--kv-lora-rank, --q-lora-rank, --head-dim-v, --mla-kv-b)");
  if (f.gated_delta_net &&
      (s.ssm_conv < 1 || s.ssm_conv > 8 || s.full_attention_interval < 1 || s.ssm_state < 0 ||
       s.ssm_groups < 0 || s.ssm_v_heads < 0 ||
       (s.ssm_v_heads ? s.ssm_v_heads : s.n_head) % (s.ssm_groups ? s.ssm_groups : kv) != 0))
    return invalid_argument("Gated DeltaNet: --ssm-conv must be 1 to 8, "
                            "--full-attention-interval positive, and the v heads "
                            "(--ssm-v-heads) a multiple of the k heads (--ssm-groups)");
  if (s.ssm_in && (!f.gated_delta_net || f.split_beta_alpha))
    return invalid_argument("--ssm-in is Qwen3-Next's first conversions' form (qwen3next only)");
  if (s.attn_softcap >= 0 && f.attn_softcap == 0.0f)
    return invalid_argument(std::string(f.name) +
                            " models have no attention soft-cap (--attn-softcap)");
  return Status::ok_status();
}

Status apply_rope_scaling(const ModelSpec& s, ModelHParams& hp) {
  const std::string& t = s.rope_scaling;
  if (t == "none")
    return Status::ok_status();
  if (!(s.rope_scaling_factor >= 1.0f))
    return invalid_argument("--rope-scaling-factor must be at least 1, got " +
                            std::to_string(s.rope_scaling_factor));
  hp.rope_scaling_factor = s.rope_scaling_factor;
  hp.rope_ctx_orig = s.rope_ctx_orig ? s.rope_ctx_orig
                                     : static_cast<int64_t>(static_cast<float>(s.n_ctx) /
                                                            s.rope_scaling_factor);
  if (t == "linear") {
    hp.rope_scaling = RopeScaling::kLinear;
  } else if (t == "yarn") {
    hp.rope_scaling = RopeScaling::kYarn;
  } else if (t == "llama3") {
    hp.rope_scaling = RopeScaling::kLlama3;
  } else if (t == "longrope") { // factor tensors and keys only, as Phi-3's converter writes
    if (!hp.family->long_rope)
      return invalid_argument("--rope-scaling longrope: " + std::string(hp.family->name) +
                              " models have no LongRoPE (phi3 has)");
    hp.long_rope = true;
    hp.yarn_attn_factor = s.rope_scaling_factor > 1.0f
                              ? std::sqrt(1.0f + std::log(s.rope_scaling_factor) /
                                                     std::log(static_cast<float>(hp.rope_ctx_orig)))
                              : 1.0f;
  } else {
    return invalid_argument("--rope-scaling '" + t +
                            "' is not one of none, linear, yarn, llama3, longrope");
  }
  return Status::ok_status();
}

} // namespace

Result<ModelHParams> hparams_of_spec(const ModelSpec& s) {
  ModelHParams hp;
  hp.family = find_arch_family(s.arch);
  if (!hp.family)
    return invalid_argument("--arch: " + unknown_arch_message(s.arch));
  PSHARD_RETURN_IF_ERROR(check_shape(s, *hp.family));
  const ArchFamily& f = *hp.family;
  hp.name = s.name;
  hp.n_ctx_train = s.n_ctx;
  hp.n_embd = s.n_embd;
  hp.n_layer = s.n_layer;
  hp.n_head = s.n_head;
  hp.n_head_kv = s.n_head_kv ? s.n_head_kv : s.n_head;
  hp.head_dim = s.head_dim ? s.head_dim : s.n_embd / s.n_head;
  hp.rope_dim = s.rope_dim ? s.rope_dim : hp.head_dim;
  hp.rope_freq_base = s.rope_freq_base;
  if (f.latent_attention) { // one KV head, the latent (the older form: each head's own)
    hp.latent_cache = !s.mla_kv_b;
    hp.n_head_kv = hp.latent_cache ? 1 : hp.n_head;
    hp.kv_lora_rank = s.kv_lora_rank ? s.kv_lora_rank : 2 * hp.head_dim;
    hp.q_lora_rank = s.q_lora_rank;
    hp.head_dim_v = s.head_dim_v ? s.head_dim_v : hp.head_dim - hp.rope_dim;
  }
  if (f.gated_delta_net) {
    DeltaNetDims& d = hp.delta_net;
    d.conv_kernel = s.ssm_conv;
    d.d_k = d.d_v = s.ssm_state ? s.ssm_state : hp.head_dim;
    d.n_k_heads = s.ssm_groups ? s.ssm_groups : hp.n_head_kv;
    d.n_v_heads = s.ssm_v_heads ? s.ssm_v_heads : hp.n_head;
    d.grouped_ba = !f.split_beta_alpha;
    d.tiled_heads = f.split_beta_alpha;
    for (int64_t il = 0; il < hp.n_layer; ++il)
      hp.recurrent_layers.push_back((il + 1) % s.full_attention_interval != 0);
    hp.delta_net_ssm_in = s.ssm_in;
  }
  hp.n_ff = s.n_ff;
  hp.n_expert = s.n_expert;
  hp.n_expert_used = s.n_expert_used;
  if (hp.is_moe()) {
    hp.n_ff_exp = s.n_ff;
    if (f.shared_expert == Presence::kRequired || s.n_ff_shexp > 0)
      hp.n_ff_shexp = s.n_ff_shexp ? s.n_ff_shexp : (f.shared_expert_gate ? 4 : 1) * s.n_ff;
    hp.n_dense_lead = s.n_dense_lead;
    hp.moe_layer_step = s.moe_layer_step;
    if (hp.has_dense_layers())
      hp.n_ff = s.n_ff_dense ? s.n_ff_dense : 3 * s.n_ff;
    hp.gating = f.gating;
    hp.expert_selection_bias = f.expert_selection_bias != Presence::kAbsent; // as released
    // GLM-4.5's and the other sigmoid routers' converters write the weights renormalised;
    // Llama 4's writes no routing keys (llama.cpp fixes its sigmoid, unnormalised).
    const bool keyed_sigmoid = hp.gating == ExpertGating::kSigmoid && !f.weighted_expert_inputs;
    hp.normalize_expert_weights = f.normalize_expert_weights || keyed_sigmoid;
    hp.expert_weights_scale = s.expert_weights_scale;
    if (s.n_expert_groups > 1) {
      hp.n_expert_groups = s.n_expert_groups;
      hp.n_expert_groups_used = s.n_expert_groups_used;
    }
  }
  hp.n_nextn = s.n_nextn;
  hp.qkv_bias = f.qkv_bias == Presence::kRequired || s.qkv_bias;
  hp.qk_norm = f.qk_norm == Presence::kRequired;
  hp.out_bias = f.out_bias == Presence::kRequired;
  hp.norm_biases = f.norm_biases == Presence::kRequired;
  hp.output_bias = f.output_bias == Presence::kRequired;
  hp.attn_sinks = f.attn_sinks == Presence::kRequired;
  hp.moe_biases = f.moe_biases == Presence::kRequired;
  hp.post_norms = f.post_norms == Presence::kRequired;
  hp.fused_qkv = f.fused_qkv != Presence::kAbsent; // as the converters write Phi-3
  hp.tied_output = s.tied_output && !f.encoder;
  hp.causal = !f.encoder && !f.attends_both_ways && !s.non_causal;
  if (f.encoder) { // BERT's token types (two; XLM-RoBERTa's one), LayerNorm eps
    hp.token_types = true;
    hp.n_token_types = s.n_token_types;
    hp.rms_eps = 1e-12f;
  }
  PSHARD_RETURN_IF_ERROR(apply_rope_scaling(s, hp));
  if (f.rope_sections) {
    // Qwen2-VL's split of 64 pairs is 16/24/24: a quarter temporal, the rest shared by
    // height and width. Any head size gets the same proportions, the width taking the rest.
    const int32_t pairs = static_cast<int32_t>(hp.rope_dim / 2);
    hp.rope_sections[0] = pairs / 4;
    hp.rope_sections[1] = (pairs - pairs / 4) / 2;
    hp.rope_sections[2] = pairs - hp.rope_sections[0] - hp.rope_sections[1];
  } else if (f.interleaved_mrope) {
    // Dealt t, h, w in turn, every pair covered: Qwen3.5 a third each (its 64 rotated
    // values: 11/11/10), Qwen3-VL 5/16 each to height and width (its 64 pairs: 24/20/20),
    // the temporal position the rest.
    const int32_t pairs = static_cast<int32_t>(hp.rope_dim / 2);
    const int32_t hw = f.split_beta_alpha ? pairs / 3 : pairs * 5 / 16;
    hp.rope_sections[0] = pairs - 2 * hw;
    hp.rope_sections[1] = hp.rope_sections[2] = hw;
  }
  hp.n_deepstack = f.deepstack ? std::min(s.n_deepstack, hp.n_layer) : 0;
  return hp;
}

void write_model_metadata(const ModelSpec& s, const ModelHParams& hp, gguf::GgufWriter& w) {
  const std::string a = s.arch + ".";
  w.set("general.architecture", {s.arch});
  w.set("general.name", {s.name});
  w.set(a + "context_length", {u32(hp.n_ctx_train)});
  w.set(a + "embedding_length", {u32(hp.n_embd)});
  w.set(a + "block_count", {u32(hp.n_layer + hp.n_nextn)});
  if (hp.n_nextn > 0)
    w.set(a + "nextn_predict_layers", {u32(hp.n_nextn)});
  w.set(a + "feed_forward_length", {u32(hp.n_ff)});
  w.set(a + "attention.head_count", {u32(hp.n_head)});
  w.set(a + "attention.head_count_kv", {u32(hp.n_head_kv)});
  if (hp.latent_attention()) { // as llama.cpp's converter writes DeepSeek's since 2025
    w.set(a + "attention.kv_lora_rank", {u32(hp.kv_lora_rank)});
    if (hp.q_lora_rank > 0)
      w.set(a + "attention.q_lora_rank", {u32(hp.q_lora_rank)});
    w.set(a + "attention.key_length", {u32(hp.attn_key_dim())});
    w.set(a + "attention.value_length", {u32(hp.attn_value_dim())});
    if (hp.latent_cache) {
      w.set(a + "attention.key_length_mla", {u32(hp.head_dim)});
      w.set(a + "attention.value_length_mla", {u32(hp.head_dim_v)});
    }
  } else if (s.head_dim != 0) {
    w.set(a + "attention.key_length", {u32(hp.head_dim)});
    w.set(a + "attention.value_length", {u32(hp.head_dim)});
  }
  if (!hp.family->encoder || hp.family->encoder_rope_glu) { // BERT's converter writes none
    w.set(a + "rope.dimension_count", {u32(hp.rope_dim)});
    w.set(a + "rope.freq_base", {hp.rope_freq_base});
  }
  if (hp.family->encoder || hp.family->layer_norms)
    w.set(a + "attention.layer_norm_epsilon", {hp.rms_eps});
  else
    w.set(a + "attention.layer_norm_rms_epsilon", {1e-5f});
  if (!hp.causal && !hp.family->attends_both_ways) // those need none (gemma-embedding)
    w.set(a + "attention.causal", {false});
  if (hp.family->deepstack)
    w.set(a + "n_deepstack_layers", {u32(hp.n_deepstack)});
  if (hp.family->rope_sections || hp.family->interleaved_mrope) {
    gguf::Array sections{gguf::ValueType::kInt32, {}};
    for (int32_t v : {hp.rope_sections[0], hp.rope_sections[1], hp.rope_sections[2], 0})
      sections.items.push_back({v});
    w.set(a + "rope.dimension_sections", {sections});
  }
  if (hp.long_rope) {
    w.set(a + "rope.scaling.attn_factor", {hp.yarn_attn_factor});
    w.set(a + "rope.scaling.original_context_length", {u32(hp.rope_ctx_orig)});
  }
  if (hp.rope_scaling != RopeScaling::kNone) {
    w.set(a + "rope.scaling.type", {s.rope_scaling});
    w.set(a + "rope.scaling.factor", {hp.rope_scaling_factor});
    if (hp.rope_scaling != RopeScaling::kLinear)
      w.set(a + "rope.scaling.original_context_length", {u32(hp.rope_ctx_orig)});
    if (hp.rope_scaling == RopeScaling::kYarn && hp.latent_attention()) // V2-Lite's mscale 0.707
      w.set(a + "rope.scaling.yarn_log_multiplier", {0.0707f});
  }
  if (hp.family->multiplier_keys) { // Granite-3.x-2B's
    w.set(a + "logit_scale", {8.0f});
    w.set(a + "embedding_scale", {12.0f});
    w.set(a + "residual_scale", {0.22f});
    w.set(a + "attention.scale", {1.0f / static_cast<float>(hp.head_dim)});
  }
  if (s.sliding_window >= 0)
    w.set(a + "attention.sliding_window", {u32(s.sliding_window)});
  if (s.attn_softcap >= 0)
    w.set(a + "attn_logit_softcapping", {s.attn_softcap});
  if (s.attn_temperature_scale >= 0)
    w.set(a + "attention.temperature_scale", {s.attn_temperature_scale});
  if (s.attn_chunk > 0)
    w.set(a + "attention.chunk_size", {u32(s.attn_chunk)});
  if (hp.has_recurrent_layers()) { // as llama.cpp's converter writes Qwen3-Next
    const DeltaNetDims& d = hp.delta_net;
    w.set(a + "ssm.conv_kernel", {u32(d.conv_kernel)});
    w.set(a + "ssm.state_size", {u32(d.d_k)});
    w.set(a + "ssm.group_count", {u32(d.n_k_heads)});
    w.set(a + "ssm.time_step_rank", {u32(d.n_v_heads)});
    w.set(a + "ssm.inner_size", {u32(d.value_dim())});
    w.set(a + "full_attention_interval", {u32(s.full_attention_interval)});
  }
  if (s.final_softcap >= 0)
    w.set(a + "final_logit_softcapping", {s.final_softcap});
  if (s.pooling_type >= 0 || s.rerank)
    w.set(a + "pooling_type", {u32(s.rerank ? 4 : s.pooling_type)});
  else if (hp.family->encoder || hp.family->attends_both_ways) // BERT's, EmbeddingGemma's: mean
    w.set(a + "pooling_type", {u32(1)});
  if (hp.is_moe()) {
    w.set(a + "expert_count", {u32(hp.n_expert)});
    w.set(a + "expert_used_count", {u32(hp.n_expert_used)});
    if (hp.family->expert_width_key)
      w.set(a + "expert_feed_forward_length", {u32(hp.n_ff_exp)});
    if (hp.has_shared_expert())
      w.set(a + "expert_shared_feed_forward_length", {u32(hp.n_ff_shexp)});
    if (hp.has_shared_expert() && !hp.family->shared_expert_gate) // GLM-4.5's converter's
      w.set(a + "expert_shared_count", {u32(hp.n_ff_shexp / hp.n_ff_exp)});
    if (hp.n_dense_lead > 0)
      w.set(a + "leading_dense_block_count", {u32(hp.n_dense_lead)});
    if (hp.moe_layer_step > 1)
      w.set(a + "interleave_moe_layer_step", {u32(hp.moe_layer_step)});
    if (hp.n_expert_groups > 1) {
      w.set(a + "expert_group_count", {u32(hp.n_expert_groups)});
      w.set(a + "expert_group_used_count", {u32(hp.n_expert_groups_used)});
    }
    const bool keyed_sigmoid =
        hp.gating == ExpertGating::kSigmoid && !hp.family->weighted_expert_inputs;
    if (keyed_sigmoid) { // as GLM-4.5's converter writes them
      w.set(a + "expert_gating_func", {u32(2)});
      w.set(a + "expert_weights_norm", {hp.normalize_expert_weights});
    }
    if (hp.expert_weights_scale != 1.0f || keyed_sigmoid)
      w.set(a + "expert_weights_scale", {hp.expert_weights_scale});
  }
}

} // namespace pshard
