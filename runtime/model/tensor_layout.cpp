#include "runtime/model/tensor_layout.h"

#include <charconv>

namespace pshard {
namespace {

using R = WeightRole;

class SpecList {
public:
  explicit SpecList(int64_t layer)
      : prefix_(layer >= 0 ? "blk." + std::to_string(layer) + "." : std::string()) {}

  void add(const std::string& role, const char* suffix, std::vector<int64_t> dims, WeightRole r,
           bool required = true) {
    out.push_back({prefix_ + role + suffix, std::move(dims), r, required});
  }
  std::vector<TensorSpec> out;

private:
  std::string prefix_;
};

// An encoder's embedding beyond the token's row, run by attn[0] (tensor_layout.h).
void encoder_input(const ModelHParams& hp, SpecList& l) {
  const int64_t d = hp.n_embd;
  if (hp.has_position_table()) // nomic-bert rotates q and k instead
    l.out.push_back({"position_embd.weight", {d, hp.n_ctx_train}, R::kPosEmbd});
  if (hp.token_types)
    l.out.push_back({"token_types.weight", {d, hp.n_token_types}, R::kTokenTypes});
  l.out.push_back({"token_embd_norm.weight", {d}, R::kEmbdNorm});
  if (hp.family->encoder) // ModernBERT's norms have no biases
    l.out.push_back({"token_embd_norm.bias", {d}, R::kEmbdNormB});
}

// Multi-head latent attention's projections (runtime/model/mla_attention.cpp).
void latent_attention(const ModelHParams& hp, SpecList& l) {
  const int64_t d = hp.n_embd, q = hp.q_dim(), r = hp.kv_lora_rank, h = hp.n_head;
  if (hp.q_lora_rank > 0) {
    l.add("attn_q_a", ".weight", {d, hp.q_lora_rank}, R::kWqA);
    l.add("attn_q_a_norm", ".weight", {hp.q_lora_rank}, R::kQANorm);
    l.add("attn_q_b", ".weight", {hp.q_lora_rank, q}, R::kWqB);
  } else {
    l.add("attn_q", ".weight", {d, q}, R::kWq);
  }
  l.add("attn_kv_a_mqa", ".weight", {d, r + hp.rope_dim}, R::kWkvA);
  l.add("attn_kv_a_norm", ".weight", {r}, R::kKvANorm);
  if (hp.latent_cache) {
    l.add("attn_k_b", ".weight", {hp.head_dim - hp.rope_dim, r, h}, R::kWkB);
    l.add("attn_v_b", ".weight", {r, hp.head_dim_v, h}, R::kWvB);
  } else { // per head: its unrotated key part's rows, then its value's
    l.add("attn_kv_b", ".weight", {r, h * (hp.head_dim - hp.rope_dim + hp.head_dim_v)}, R::kWkvB);
  }
  l.add("attn_output", ".weight", {h * hp.head_dim_v, d}, R::kWo);
}

// A recurrent layer's tensors (Gated DeltaNet: runtime/kernels/delta_net.h).
void delta_net(const ModelHParams& hp, SpecList& l) {
  const int64_t d = hp.n_embd;
  const DeltaNetDims& dn = hp.delta_net;
  l.add("attn_norm", ".weight", {d}, R::kAttnNorm);
  if (hp.delta_net_ssm_in) {
    l.add("ssm_in", ".weight", {d, dn.conv_dim() + dn.value_dim()}, R::kSsmIn);
  } else {
    l.add("attn_qkv", ".weight", {d, dn.conv_dim()}, R::kSsmQkv);
    l.add("attn_gate", ".weight", {d, dn.value_dim()}, R::kSsmGate);
  }
  if (hp.family->split_beta_alpha) {
    l.add("ssm_beta", ".weight", {d, dn.n_v_heads}, R::kSsmBeta);
    l.add("ssm_alpha", ".weight", {d, dn.n_v_heads}, R::kSsmAlpha);
  } else {
    l.add("ssm_ba", ".weight", {d, 2 * dn.n_v_heads}, R::kSsmBa);
  }
  l.add("ssm_conv1d", ".weight", {dn.conv_kernel, dn.conv_dim()}, R::kSsmConv);
  l.add("ssm_a", "", {dn.n_v_heads}, R::kSsmA);
  l.add("ssm_dt", ".bias", {dn.n_v_heads}, R::kSsmDt);
  l.add("ssm_norm", ".weight", {dn.d_v}, R::kSsmNorm);
  l.add("ssm_out", ".weight", {dn.value_dim(), d}, R::kSsmOut);
}

void attention(const ModelHParams& hp, SpecList& l, int64_t layer) {
  const int64_t d = hp.n_embd, q = hp.q_dim(), kv = hp.kv_dim();
  if (hp.is_recurrent_layer(layer))
    return delta_net(hp, l);
  const bool embedding_norm = hp.family->encoder || hp.family->layer_norms;
  if (embedding_norm && layer == 0)
    encoder_input(hp, l);
  if (!hp.family->encoder &&
      !(hp.family->layer_norms && layer == 0)) { // ModernBERT's layer 0: none
    l.add("attn_norm", ".weight", {d}, R::kAttnNorm);
    if (hp.norm_biases)
      l.add("attn_norm", ".bias", {d}, R::kAttnNormB);
  }
  if (hp.latent_attention()) {
    latent_attention(hp, l);
  } else if (hp.fused_qkv) {
    l.add("attn_qkv", ".weight", {d, q + 2 * kv}, R::kWqkv);
  } else {
    l.add("attn_q", ".weight", {d, hp.q_rows()}, R::kWq);
    l.add("attn_k", ".weight", {d, kv}, R::kWk);
    l.add("attn_v", ".weight", {d, kv}, R::kWv);
  }
  if (!hp.latent_attention())
    l.add("attn_output", ".weight", {q, d}, R::kWo);
  if (hp.qkv_bias) {
    l.add("attn_q", ".bias", {q}, R::kBq);
    l.add("attn_k", ".bias", {kv}, R::kBk);
    l.add("attn_v", ".bias", {kv}, R::kBv);
  }
  if (hp.out_bias)
    l.add("attn_output", ".bias", {d}, R::kBo);
  if (hp.qk_norm) {
    l.add("attn_q_norm", ".weight", {hp.head_dim}, R::kQNorm);
    l.add("attn_k_norm", ".weight", {hp.head_dim}, R::kKNorm);
  }
  if (hp.attn_sinks)
    l.add("attn_sinks", ".weight", {hp.n_head}, R::kAttnSinks);
  if (hp.post_norms)
    l.add("post_attention_norm", ".weight", {d}, R::kAttnPostNorm);
  if (hp.family->encoder) {
    l.add("attn_output_norm", ".weight", {d}, R::kAttnOutNorm);
    l.add("attn_output_norm", ".bias", {d}, R::kAttnOutNormB);
    return; // no RoPE tensors
  }
  // Tensors outside the blocks that every attention block reads.
  l.out.push_back({"rope_freqs.weight", {hp.rope_dim / 2}, R::kRopeFreqs, false});
  if (hp.long_rope) {
    l.out.push_back({"rope_factors_long.weight", {hp.rope_dim / 2}, R::kRopeFactorsLong});
    l.out.push_back({"rope_factors_short.weight", {hp.rope_dim / 2}, R::kRopeFactorsShort});
  }
}

// An encoder's FFN: up (+ bias), GELU, down (+ bias), LayerNorm of the residual sum.
// (nomic-bert: SwiGLU's gate, up and down, no biases.)
void encoder_ffn(const ModelHParams& hp, SpecList& l) {
  const int64_t d = hp.n_embd, ff = hp.n_ff;
  if (hp.family->encoder_rope_glu) {
    l.add("ffn_gate", ".weight", {d, ff}, R::kFfnGate);
    l.add("ffn_up", ".weight", {d, ff}, R::kFfnUp);
    l.add("ffn_down", ".weight", {ff, d}, R::kFfnDown);
  } else {
    l.add("ffn_up", ".weight", {d, ff}, R::kFfnUp);
    l.add("ffn_up", ".bias", {ff}, R::kFfnUpBias);
    l.add("ffn_down", ".weight", {ff, d}, R::kFfnDown);
    l.add("ffn_down", ".bias", {d}, R::kFfnDownBias);
  }
  l.add("layer_output_norm", ".weight", {d}, R::kLayerOutNorm);
  l.add("layer_output_norm", ".bias", {d}, R::kLayerOutNormB);
}

// The FFN or MoE block's pre-norm (and its bias).
void ffn_norm(const ModelHParams& hp, SpecList& l) {
  const std::string name(hp.family->ffn_norm);
  l.add(name, ".weight", {hp.n_embd}, R::kFfnNorm);
  if (hp.norm_biases)
    l.add(name, ".bias", {hp.n_embd}, R::kFfnNormB);
}

void dense_ffn(const ModelHParams& hp, SpecList& l) {
  const int64_t d = hp.n_embd, ff = hp.n_ff;
  if (hp.family->encoder)
    return encoder_ffn(hp, l);
  ffn_norm(hp, l);
  if (hp.family->fused_gate_up) {
    l.add("ffn_up", ".weight", {d, 2 * ff}, R::kFfnGateUp);
  } else {
    l.add("ffn_gate", ".weight", {d, ff}, R::kFfnGate);
    l.add("ffn_up", ".weight", {d, ff}, R::kFfnUp);
  }
  l.add("ffn_down", ".weight", {ff, d}, R::kFfnDown);
  if (hp.post_norms)
    l.add("post_ffw_norm", ".weight", {d}, R::kFfnPostNorm);
}

void moe(const ModelHParams& hp, SpecList& l) {
  const int64_t d = hp.n_embd, ff = hp.n_ff_exp, ne = hp.n_expert;
  ffn_norm(hp, l);
  l.add("ffn_gate_inp", ".weight", {d, ne}, R::kRouter);
  l.add("ffn_gate_exps", ".weight", {d, ff, ne}, R::kGateExps);
  l.add("ffn_up_exps", ".weight", {d, ff, ne}, R::kUpExps);
  l.add("ffn_down_exps", ".weight", {ff, d, ne}, R::kDownExps);
  if (hp.moe_biases) { // small: they travel with the router, not with each expert
    l.add("ffn_gate_inp", ".bias", {ne}, R::kRouterBias);
    l.add("ffn_gate_exps", ".bias", {ff, ne}, R::kGateExpsBias);
    l.add("ffn_up_exps", ".bias", {ff, ne}, R::kUpExpsBias);
    l.add("ffn_down_exps", ".bias", {d, ne}, R::kDownExpsBias);
  }
  if (hp.expert_selection_bias) // chooses the experts, travels with the router
    l.add("exp_probs_b", ".bias", {ne}, R::kExpertSelectionBias);
  if (hp.has_shared_expert()) {
    const int64_t sff = hp.n_ff_shexp;
    if (hp.family->shared_expert_gate)
      l.add("ffn_gate_inp_shexp", ".weight", {d}, R::kShexpGateInp);
    l.add("ffn_gate_shexp", ".weight", {d, sff}, R::kShexpGate);
    l.add("ffn_up_shexp", ".weight", {d, sff}, R::kShexpUp);
    l.add("ffn_down_shexp", ".weight", {sff, d}, R::kShexpDown);
  }
}

} // namespace

bool is_unrun_block_tensor(const ModelHParams& hp, std::string_view name) {
  constexpr std::string_view kPrefix = "blk.";
  if (hp.n_nextn <= 0 || !name.starts_with(kPrefix))
    return false;
  int64_t layer = -1;
  const char* last = name.data() + name.size();
  const auto [end, ec] = std::from_chars(name.data() + kPrefix.size(), last, layer);
  return ec == std::errc() && end != last && *end == '.' && layer >= hp.n_layer &&
         layer < hp.n_layer + hp.n_nextn;
}

bool TensorSpec::is_matrix() const {
  switch (role) {
  // clang-format off
  case R::kOutput: case R::kWq: case R::kWk: case R::kWv: case R::kWo: case R::kWqkv:
  case R::kFfnGate: case R::kFfnUp: case R::kFfnDown: case R::kFfnGateUp: case R::kRouter:
  case R::kGateExps: case R::kUpExps: case R::kDownExps:
  case R::kShexpGateInp: case R::kShexpGate: case R::kShexpUp: case R::kShexpDown:
  case R::kWqA: case R::kWqB: case R::kWkvA: case R::kWkB: case R::kWvB: case R::kWkvB:
  case R::kSsmQkv: case R::kSsmGate: case R::kSsmBa: case R::kSsmBeta: case R::kSsmAlpha:
  case R::kSsmOut: case R::kSsmIn:
    return true;
  // clang-format on
  case R::kTokenEmbd: // gathered by the embed; a matrix only as the tied head (kOutput)
  default:
    return false;
  }
}

bool TensorSpec::is_experts() const {
  return role == R::kGateExps || role == R::kUpExps || role == R::kDownExps;
}

std::vector<TensorSpec> sublayer_tensor_specs(const ModelHParams& hp, const SubLayer& s) {
  SpecList l(s.layer);
  const int64_t d = hp.n_embd;
  switch (s.kind) {
  case SubLayerKind::kEmbed:
    l.add("token_embd", ".weight", {d, hp.n_vocab}, R::kTokenEmbd);
    break;
  case SubLayerKind::kAttention:
    attention(hp, l, s.layer);
    break;
  case SubLayerKind::kFfn:
    dense_ffn(hp, l);
    break;
  case SubLayerKind::kMoe:
    moe(hp, l);
    break;
  case SubLayerKind::kHead:
    if (hp.family->encoder) // embeddings only: the head has no weights and never runs
      break;
    l.add("output_norm", ".weight", {d}, R::kOutputNorm);
    if (hp.norm_biases)
      l.add("output_norm", ".bias", {d}, R::kOutputNormB);
    if (hp.family->layer_norms) // ModernBERT: the final norm alone; it embeds
      break;
    // Tied: the head multiplies by the embedding table (and needs its own GPU copy).
    l.add(hp.tied_output ? "token_embd" : "output", ".weight", {d, hp.n_vocab}, R::kOutput);
    if (hp.output_bias)
      l.add("output", ".bias", {hp.n_vocab}, R::kOutputBias);
    break;
  }
  return std::move(l.out);
}

} // namespace pshard
