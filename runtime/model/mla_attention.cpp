// Multi-head latent attention (DeepSeek-V2/V3), in the absorbed form llama.cpp runs: the
// cache holds, per position, one latent of kv_lora_rank values (RMSNormed) and a part of
// rope_dim values rotated by RoPE and shared by all heads — not each head's keys and
// values (576 values a position for DeepSeek-V3 instead of 128 heads x 320).
//
// A head's key would be [attn_k_b_h · latent | rotated part] and its value attn_v_b_h ·
// latent; the products are regrouped instead. Each head's unrotated query part goes
// through attn_k_b_h's transpose (the file stores it transposed for this) into the latent's
// space, so every head attends over the same keys [rotated part | latent] (one KV head,
// query and key rotated part first so RoPE's leading dimensions are it) with the latent as
// values, and the head's output comes back through attn_v_b_h. The scores are the
// un-absorbed ones, so their scale is that of a head's query width (hparams_mla.cpp).
#include "runtime/model/sublayer.h"

namespace pshard {

void latent_attention_forward(ForwardPass& p, const AttentionWeights& w, const float* rope_freqs,
                              const KvView& kv) {
  const ModelHParams& hp = p.hp;
  const ActivationPtrs& a = p.act;
  Ops& ops = p.ops;
  const int64_t n = p.n_tokens(), heads = hp.n_head, r = hp.kv_lora_rank, rot = hp.rope_dim;
  const int64_t dq = hp.head_dim, nope = dq - rot, dk = hp.attn_key_dim(), dv = hp.head_dim_v;

  pre_norm(ops, hp, a.hidden, w.norm.data, w.norm_b.data, a.normed, n);
  // Queries, n x heads x dq (each head's unrotated part, then its rotated part), in attn_out.
  float* q = a.attn_out;
  if (w.wq_a.data) { // the larger models: through a low rank and its norm
    ops.matmul(w.wq_a, a.normed, n, a.latent);
    ops.rms_norm(a.latent, w.q_a_norm.data, a.latent, n, hp.q_lora_rank, hp.rms_eps);
    ops.matmul(w.wq_b, a.latent, n, q);
  } else {
    ops.matmul(w.wq, a.normed, n, q);
  }
  // The latent and the rotated part, n x (r + rot): V is the normed latent, K the rotated
  // part then V.
  ops.matmul(w.wkv_a, a.normed, n, a.latent);
  ops.copy_rows(a.latent, r + rot, a.v, r, n, r);
  ops.rms_norm(a.v, w.kv_a_norm.data, a.v, n, r, hp.rms_eps);
  ops.copy_rows(a.latent + r, r + rot, a.k, dk, n, rot);
  ops.copy_rows(a.v, r, a.k + rot, dk, n, r);
  // The absorbed queries, n x heads x dk in act.q: each head's rotated part, then its
  // unrotated part taken into the latent's space by attn_k_b_h (all heads in one op).
  ops.copy_rows(q + nope, dq, a.q, dk, n * heads, rot);
  ops.matmul_heads(w.wk_b, q, heads * dq, dq, n, a.q + rot, heads * dk, dk);

  RopeParams rope = hp.rope(rope_freqs, p.layer); // the leading rot of each dk-wide head
  AttentionDims dims{heads, 1, dk};
  dims.head_dim_v = r;
  dims.scale = hp.attn_scale;
  dims.causal = hp.causal;
  const SeqSegment whole{0, n, p.pos0, nullptr};
  for (const SeqSegment& g :
       p.segments.empty() ? std::span<const SeqSegment>(&whole, 1) : p.segments) {
    const KvView seq = g.pages ? kv.with_pages(g.pages, g.pos0 + g.count) : kv;
    float* qg = a.q + g.begin * heads * dk;
    float* kg = a.k + g.begin * dk;
    ops.rope(qg, g.count, heads, g.pos0, rope);
    ops.rope(kg, g.count, 1, g.pos0, rope);
    ops.kv_append(seq, kg, a.v + g.begin * r, g.pos0, g.count);
    ops.attention(qg, seq, dims, g.pos0, g.count, a.attn_out + g.begin * heads * r);
  }

  // Each head's output (n x r in the latent's space) through attn_v_b_h, n x heads x dv in
  // act.q (the queries are spent), then the output projection.
  ops.matmul_heads(w.wv_b, a.attn_out, heads * r, r, n, a.q, heads * dv, dv);
  ops.matmul(w.wo, a.q, n, a.proj);
  residual_add(p, w.post_norm, a.proj);
}

} // namespace pshard
