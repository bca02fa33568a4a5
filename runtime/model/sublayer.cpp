#include "runtime/model/sublayer.h"

#include "runtime/kernels/ops.h"
#include "runtime/kernels/quantize.h"

namespace pshard {

std::vector<SubLayer> llama_sublayers(const LlamaHParams& hp) {
  std::vector<SubLayer> out;
  out.push_back({SubLayerKind::kEmbed, -1, "embed"});
  for (int64_t il = 0; il < hp.n_layer; ++il) {
    const std::string idx = "[" + std::to_string(il) + "]";
    out.push_back({SubLayerKind::kAttention, il, "attn" + idx});
    if (hp.is_moe())
      out.push_back({SubLayerKind::kMoe, il, "moe" + idx});
    else
      out.push_back({SubLayerKind::kFfn, il, "ffn" + idx});
  }
  out.push_back({SubLayerKind::kHead, -1, "head"});
  return out;
}

void Activations::reserve(const LlamaHParams& hp, int64_t n) {
  if (n <= max_tokens)
    return;
  max_tokens = n;
  auto size = [n](std::vector<float>& v, int64_t per_token) {
    v.assign(static_cast<size_t>(n * per_token), 0.0f);
  };
  size(hidden, hp.n_embd);
  size(normed, hp.n_embd);
  size(q, hp.q_dim());
  size(k, hp.kv_dim());
  size(v, hp.kv_dim());
  size(attn_out, hp.q_dim());
  size(proj, hp.n_embd);
  size(gate, hp.n_ff);
  size(up, hp.n_ff);
  size(router, hp.n_expert);
  const int64_t moe_width = hp.is_moe() ? hp.n_embd : 0;
  size(expert_in, moe_width);
  size(expert_out, moe_width);
  size(moe_out, moe_width);
  logits.assign(static_cast<size_t>(hp.n_vocab), 0.0f);
}

size_t Activations::bytes() const {
  size_t n = 0;
  for (const auto* v : {&hidden, &normed, &q, &k, &v, &attn_out, &proj, &gate, &up, &router,
                        &expert_in, &expert_out, &moe_out, &logits})
    n += v->size() * sizeof(float);
  return n;
}

void embed_forward(ForwardPass& p) {
  const MatrixView& emb = p.weights.token_embd;
  for (int64_t t = 0; t < p.n_tokens(); ++t) {
    const uint8_t* row = emb.data + static_cast<size_t>(p.tokens[t]) * emb.row_bytes;
    dequantize_row(emb.type, row, p.act.hidden.data() + t * p.hp.n_embd, p.hp.n_embd);
  }
}

void ffn_forward(ForwardPass& p, int64_t layer) {
  const FfnWeights& w = p.weights.layers[static_cast<size_t>(layer)].ffn;
  const int64_t n = p.n_tokens(), d = p.hp.n_embd, ff = p.hp.n_ff;
  Activations& a = p.act;
  for (int64_t t = 0; t < n; ++t)
    rms_norm(a.hidden.data() + t * d, w.norm.data, a.normed.data() + t * d, d, p.hp.rms_eps);
  matmul(w.gate, a.normed.data(), n, a.gate.data(), p.pool);
  matmul(w.up, a.normed.data(), n, a.up.data(), p.pool);
  silu_mul(a.gate.data(), a.up.data(), a.gate.data(), n * ff);
  matmul(w.down, a.gate.data(), n, a.proj.data(), p.pool);
  add_inplace(a.hidden.data(), a.proj.data(), n * d);
}

void head_forward(ForwardPass& p) {
  const int64_t d = p.hp.n_embd;
  const float* last = p.act.hidden.data() + (p.n_tokens() - 1) * d;
  rms_norm(last, p.weights.output_norm.data, p.act.normed.data(), d, p.hp.rms_eps);
  matmul(p.weights.output, p.act.normed.data(), 1, p.act.logits.data(), p.pool);
}

void run_sublayer(const SubLayer& s, ForwardPass& p) {
  switch (s.kind) {
  case SubLayerKind::kEmbed: embed_forward(p); return;
  case SubLayerKind::kAttention: attention_forward(p, s.layer); return;
  case SubLayerKind::kFfn: ffn_forward(p, s.layer); return;
  case SubLayerKind::kMoe: moe_forward(p, s.layer); return;
  case SubLayerKind::kHead: head_forward(p); return;
  }
}

} // namespace pshard
