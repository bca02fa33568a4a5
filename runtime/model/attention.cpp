// The attention sub-layer: RMSNorm, Q/K/V projections, RoPE, KV-cache append, causal
// grouped-query attention over the cache, output projection, residual.
#include "runtime/model/sublayer.h"

namespace pshard {

void attention_forward(ForwardPass& p, const AttentionWeights& w, const float* rope_freqs,
                       const KvView& kv) {
  const LlamaHParams& hp = p.hp;
  const ActivationPtrs& a = p.act;
  const int64_t n = p.n_tokens(), d = hp.n_embd;

  p.ops.rms_norm(a.hidden, w.norm.data, a.normed, n, d, hp.rms_eps);
  p.ops.matmul(w.wq, a.normed, n, a.q);
  p.ops.matmul(w.wk, a.normed, n, a.k);
  p.ops.matmul(w.wv, a.normed, n, a.v);

  const RopeParams rope{hp.head_dim, hp.rope_dim, hp.rope_freq_base, hp.rope_freq_scale,
                        rope_freqs};
  p.ops.rope(a.q, n, hp.n_head, p.pos0, rope);
  p.ops.rope(a.k, n, hp.n_head_kv, p.pos0, rope);
  p.ops.kv_append(kv, a.k, a.v, p.pos0, n);
  p.ops.attention(a.q, kv, {hp.n_head, hp.n_head_kv, hp.head_dim}, p.pos0, n, a.attn_out);

  p.ops.matmul(w.wo, a.attn_out, n, a.proj);
  p.ops.add(a.hidden, a.proj, n * d);
}

} // namespace pshard
