// The attention sub-layer: RMSNorm, Q/K/V projections (+ biases), per-head q/k RMSNorm
// (Qwen3, Gemma 3), RoPE (normal or NeoX, with the model's scaling — a local layer's own;
// M-RoPE positions when given), KV-cache append, causal grouped-query attention over the
// cache (a sliding window, scale, soft-cap and sinks as the layer has them), output projection
// (+ bias, + Gemma's post-norm), residual.
#include "runtime/model/sublayer.h"

namespace pshard {

void attention_forward(ForwardPass& p, const AttentionWeights& w, const float* rope_freqs,
                       const KvView& kv) {
  const ModelHParams& hp = p.hp;
  const ActivationPtrs& a = p.act;
  const int64_t n = p.n_tokens(), d = hp.n_embd;

  p.ops.rms_norm(a.hidden, w.norm.data, a.normed, n, d, hp.rms_eps);
  p.ops.matmul(w.wq, a.normed, n, a.q);
  p.ops.matmul(w.wk, a.normed, n, a.k);
  p.ops.matmul(w.wv, a.normed, n, a.v);
  if (w.bq.data) {
    p.ops.add_bias(a.q, w.bq.data, n, hp.q_dim());
    p.ops.add_bias(a.k, w.bk.data, n, hp.kv_dim());
    p.ops.add_bias(a.v, w.bv.data, n, hp.kv_dim());
  }
  if (w.q_norm.data) { // each head its own row of head_dim values
    p.ops.rms_norm(a.q, w.q_norm.data, a.q, n * hp.n_head, hp.head_dim, hp.rms_eps);
    p.ops.rms_norm(a.k, w.k_norm.data, a.k, n * hp.n_head_kv, hp.head_dim, hp.rms_eps);
  }

  // Positions, the cache and what attention sees are per sequence: a batch runs them
  // segment by segment (one sequence: one segment over all tokens).
  RopeParams rope = hp.rope(rope_freqs, p.layer);
  AttentionDims dims{hp.n_head, hp.n_head_kv, hp.head_dim};
  dims.window = hp.attention_window(p.layer);
  dims.scale = hp.attn_scale;
  dims.softcap = hp.attn_softcap;
  dims.temp_scale = hp.attn_temp_scale;
  dims.temp_length = hp.attn_temp_length;
  dims.sinks = w.sinks.data;
  const SeqSegment whole{0, n, p.pos0, nullptr};
  const std::span<const SeqSegment> segments =
      dims.window > 0 && !p.window_segments.empty() ? p.window_segments : p.segments;
  for (const SeqSegment& g : segments.empty() ? std::span<const SeqSegment>(&whole, 1)
                                              : segments) {
    const KvView seq = g.pages ? kv.with_pages(g.pages, g.pos0 + g.count) : kv;
    float* q = a.q + g.begin * hp.q_dim();
    float* k = a.k + g.begin * hp.kv_dim();
    const float* v = a.v + g.begin * hp.kv_dim();
    if (!p.rope_positions.empty()) // M-RoPE: the image grid's or the text's own positions
      rope.positions = p.rope_positions.data() + 3 * g.begin;
    if (hp.uses_rope(p.layer)) {
      p.ops.rope(q, g.count, hp.n_head, g.pos0, rope);
      p.ops.rope(k, g.count, hp.n_head_kv, g.pos0, rope);
    }
    p.ops.kv_append(seq, k, v, g.pos0, g.count);
    p.ops.attention(q, seq, dims, g.pos0, g.count, a.attn_out + g.begin * hp.q_dim());
  }

  p.ops.matmul(w.wo, a.attn_out, n, a.proj);
  if (w.bo.data)
    p.ops.add_bias(a.proj, w.bo.data, n, d);
  residual_add(p, w.post_norm, a.proj);
}

} // namespace pshard
