#include "runtime/model/sublayer.h"

#include <algorithm>

namespace pshard {

namespace {

// Per-token widths in carve order; logits (one token) come last.
struct Widths {
  int64_t hidden, normed, q, k, v, attn_out, proj, gate, up, router, expert_in, expert_out, moe_out,
      shexp_gate, latent, latent_normed, attn_gate, ssm_ba;
};

Widths widths(const ModelHParams& hp) {
  const int64_t moe = hp.is_moe() ? hp.n_embd : 0, ff = hp.ffn_scratch_width();
  // Latent attention (mla_attention.cpp): q holds the queries the attention op reads (the
  // older form: first every head's expanded keys and values), attn_out first attn_q's
  // output then the attention's, and a scratch row the queries' low rank or the latent with
  // its rotated part (the older form: and a row for the normed latent).
  const bool mla = hp.latent_attention();
  const int64_t nope = hp.head_dim - hp.rope_dim;
  const int64_t q = !mla ? hp.q_dim()
                    : hp.latent_cache
                        ? hp.n_head * hp.attn_key_dim()
                        : hp.n_head * std::max(hp.attn_key_dim(), nope + hp.head_dim_v);
  // Gated attention: attn_q's rows (each head's query and gate) land in attn_out first. A
  // recurrent layer: its mixed stream in q, its output in attn_out, z in attn_gate.
  const bool gated = hp.family->gated_attention, recurrent = hp.has_recurrent_layers();
  const DeltaNetDims& dn = hp.delta_net;
  int64_t attn_out = mla ? hp.n_head * std::max(hp.head_dim, hp.attn_value_dim()) : hp.q_dim();
  // The first conversions' ssm_in writes q, k, v and z together into attn_out first.
  attn_out = std::max({attn_out, gated ? hp.q_rows() : 0, recurrent ? dn.value_dim() : 0,
                       hp.delta_net_ssm_in ? dn.conv_dim() + dn.value_dim() : 0});
  const int64_t attn_gate = std::max(gated ? hp.q_dim() : 0, recurrent ? dn.value_dim() : 0);
  const int64_t latent = mla ? std::max(hp.q_lora_rank, hp.kv_lora_rank + hp.rope_dim) : 0;
  const int64_t latent_normed = mla && !hp.latent_cache ? hp.kv_lora_rank : 0;
  return {hp.n_embd,
          hp.n_embd,
          std::max(q, recurrent ? dn.conv_dim() : 0),
          hp.kv_dim(),
          hp.v_dim(),
          attn_out,
          hp.n_embd,
          ff,
          ff,
          hp.n_expert,
          moe,
          moe,
          moe,
          hp.has_shared_expert() ? 1 : 0,
          latent,
          latent_normed,
          attn_gate,
          recurrent ? 2 * dn.n_v_heads : 0};
}

} // namespace

size_t activation_floats(const ModelHParams& hp, int64_t n, int64_t n_logit_rows) {
  const Widths w = widths(hp);
  const int64_t per_token = w.hidden + w.normed + w.q + w.k + w.v + w.attn_out + w.proj + w.gate +
                            w.up + w.router + w.expert_in + w.expert_out + w.moe_out +
                            w.shexp_gate + w.latent + w.latent_normed + w.attn_gate + w.ssm_ba;
  return static_cast<size_t>(per_token * n + hp.n_vocab * n_logit_rows);
}

ActivationPtrs carve_activations(const ModelHParams& hp, int64_t n, float* base) {
  const Widths w = widths(hp);
  ActivationPtrs a;
  float* at = base;
  auto take = [&](float*& p, int64_t per_token) {
    p = at;
    at += per_token * n;
  };
  take(a.hidden, w.hidden);
  take(a.normed, w.normed);
  take(a.q, w.q);
  take(a.k, w.k);
  take(a.v, w.v);
  take(a.attn_out, w.attn_out);
  take(a.proj, w.proj);
  take(a.gate, w.gate);
  take(a.up, w.up);
  take(a.router, w.router);
  take(a.expert_in, w.expert_in);
  take(a.expert_out, w.expert_out);
  take(a.moe_out, w.moe_out);
  take(a.shexp_gate, w.shexp_gate);
  take(a.latent, w.latent);
  take(a.latent_normed, w.latent_normed);
  take(a.attn_gate, w.attn_gate);
  take(a.ssm_ba, w.ssm_ba);
  a.logits = at;
  return a;
}

void Activations::reserve(const ModelHParams& hp, int64_t n, int64_t max_logit_rows) {
  if (n <= max_tokens_ && max_logit_rows <= max_logit_rows_)
    return;
  max_tokens_ = std::max(n, max_tokens_);
  max_logit_rows_ = std::max(max_logit_rows, max_logit_rows_);
  storage_ = ZeroedArray<float>(activation_floats(hp, max_tokens_, max_logit_rows_));
  n = max_tokens_;
  ptrs_ = carve_activations(hp, n, storage_.data());
}

SubLayerWeights host_sublayer_weights(const ModelWeights& w, const SubLayer& s) {
  SubLayerWeights out;
  switch (s.kind) {
  case SubLayerKind::kEmbed:
    out.embed = w.token_embd;
    break;
  case SubLayerKind::kAttention:
    out.attn = w.layers[static_cast<size_t>(s.layer)].attn;
    out.rope_freqs = w.rope_freqs.data ? w.rope_freqs.data : w.rope_short.data;
    out.rope_long = w.rope_long.data;
    break;
  case SubLayerKind::kFfn:
    out.ffn = w.layers[static_cast<size_t>(s.layer)].ffn;
    break;
  case SubLayerKind::kMoe:
    out.moe = w.layers[static_cast<size_t>(s.layer)].moe;
    break;
  case SubLayerKind::kHead:
    out.head = {w.output_norm.data, w.output, w.output_norm_b.data, w.output_b.data};
    break;
  }
  return out;
}

void pre_norm(Ops& ops, const ModelHParams& hp, const float* x, const float* weight,
              const float* bias, float* y, int64_t n) {
  if (hp.family->layer_norms) {
    ops.layer_norm(x, weight, bias, y, n, hp.n_embd, hp.rms_eps);
    return;
  }
  ops.rms_norm(x, weight, y, n, hp.n_embd, hp.rms_eps);
  if (bias) // RMSNorm has no bias of its own: phimoe's is added after it
    ops.add_bias(y, bias, n, hp.n_embd);
}

void embed_forward(ForwardPass& p, const MatrixView& table) {
  p.ops.embed_rows(table, p.tokens, p.act.hidden);
  if (p.hp.embed_scale != 1.0f) // Gemma: sqrt(n_embd); Granite: its embedding_scale
    p.ops.scale(p.act.hidden, p.hp.embed_scale, p.n_tokens() * p.hp.n_embd);
}

void glu_forward(ForwardPass& p, const FfnWeights& w, const float* in, float* out) {
  const int64_t n = p.n_tokens(), ff = w.gate.rows;
  const ActivationPtrs& a = p.act;
  p.ops.matmul(w.gate, in, n, a.gate);
  p.ops.matmul(w.up, in, n, a.up);
  gated_activation(p.ops, p.hp.family->activation, a.gate, a.up, a.gate, n * ff);
  p.ops.matmul(w.down, a.gate, n, out);
}

// An encoder's FFN on the residual stream itself — BERT's up (+ bias), GELU, down (+ bias);
// nomic-bert's SwiGLU without biases — then the residual sum LayerNormed.
void encoder_ffn_forward(ForwardPass& p, const FfnWeights& w) {
  const int64_t n = p.n_tokens(), d = p.hp.n_embd, ff = w.up.rows;
  const ActivationPtrs& a = p.act;
  if (w.gate.data) {
    glu_forward(p, w, a.hidden, a.proj);
  } else {
    p.ops.matmul(w.up, a.hidden, n, a.up);
    p.ops.add_bias(a.up, w.up_bias.data, n, ff);
    p.ops.gelu(a.up, n * ff);
    p.ops.matmul(w.down, a.up, n, a.proj);
    p.ops.add_bias(a.proj, w.down_bias.data, n, d);
  }
  p.ops.add(a.hidden, a.proj, n * d);
  p.ops.layer_norm(a.hidden, w.out_norm.data, w.out_norm_b.data, a.hidden, n, d, p.hp.rms_eps);
}

void ffn_forward(ForwardPass& p, const FfnWeights& w) {
  if (!w.norm.data)
    return encoder_ffn_forward(p, w);
  const int64_t n = p.n_tokens();
  const ActivationPtrs& a = p.act;
  pre_norm(p.ops, p.hp, a.hidden, w.norm.data, w.norm_b.data, a.normed, n);
  glu_forward(p, w, a.normed, a.proj);
  residual_add(p, w.post_norm, a.proj);
}

void residual_add(ForwardPass& p, const VectorWeight& post_norm, float* out) {
  const int64_t n = p.n_tokens(), d = p.hp.n_embd;
  if (post_norm.data)
    p.ops.rms_norm(out, post_norm.data, out, n, d, p.hp.rms_eps);
  if (p.hp.residual_scale != 1.0f)
    p.ops.scale(out, p.hp.residual_scale, n * d);
  p.ops.add(p.act.hidden, out, n * d);
}

void head_forward(ForwardPass& p, const HeadWeights& w) {
  const int64_t d = p.hp.n_embd;
  const int64_t rows = p.n_logit_rows();
  for (int64_t i = 0; i < rows; ++i) {
    const int64_t t = p.logit_rows.empty() ? p.n_tokens() - 1 : p.logit_rows[static_cast<size_t>(i)];
    pre_norm(p.ops, p.hp, p.act.hidden + t * d, w.norm, w.norm_b, p.act.normed + i * d, 1);
  }
  p.ops.matmul(w.output, p.act.normed, rows, p.act.logits);
  if (w.output_b)
    p.ops.add_bias(p.act.logits, w.output_b, rows, p.hp.n_vocab);
  if (p.hp.logit_scale != 1.0f) // Granite
    p.ops.scale(p.act.logits, p.hp.logit_scale, rows * p.hp.n_vocab);
  if (p.hp.final_softcap > 0.0f) // Gemma 2
    p.ops.softcap(p.act.logits, p.hp.final_softcap, rows * p.hp.n_vocab);
}

void run_sublayer(const SubLayer& s, ForwardPass& p, const SubLayerWeights& w, const KvView& kv) {
  p.layer = s.layer;
  switch (s.kind) {
  case SubLayerKind::kEmbed:
    embed_forward(p, w.embed);
    return;
  case SubLayerKind::kAttention: {
    const int64_t ctx = p.n_ctx > 0 ? p.n_ctx : p.hp.n_ctx_train;
    attention_forward(p, w.attn, p.hp.uses_long_rope_factors(ctx) ? w.rope_long : w.rope_freqs, kv);
    return;
  }
  case SubLayerKind::kFfn:
    ffn_forward(p, w.ffn);
    return;
  case SubLayerKind::kMoe:
    moe_forward(p, w.moe);
    return;
  case SubLayerKind::kHead:
    head_forward(p, w.head);
    return;
  }
}

} // namespace pshard
