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
//
// Files converted before 2025 have one attn_kv_b (every head's key rows, then its value
// rows) and no split: there each head's keys and values are expanded from the latent and
// cached, as llama.cpp's non-MLA path runs them (keys [rotated part | unrotated part]).
#include "runtime/model/sublayer.h"

namespace pshard {
namespace {

// The queries (n x heads x dq: each head's unrotated part, then its rotated part) into
// act.attn_out, and the latent with its rotated part (n x (r + rot)) into act.latent.
void project(ForwardPass& p, const AttentionWeights& w) {
  const ModelHParams& hp = p.hp;
  const ActivationPtrs& a = p.act;
  const int64_t n = p.n_tokens();
  pre_norm(p.ops, hp, a.hidden, w.norm.data, w.norm_b.data, a.normed, n);
  if (w.wq_a.data) { // the larger models: through a low rank and its norm
    p.ops.matmul(w.wq_a, a.normed, n, a.latent);
    p.ops.rms_norm(a.latent, w.q_a_norm.data, a.latent, n, hp.q_lora_rank, hp.rms_eps);
    p.ops.matmul(w.wq_b, a.latent, n, a.attn_out);
  } else {
    p.ops.matmul(w.wq, a.normed, n, a.attn_out);
  }
  p.ops.matmul(w.wkv_a, a.normed, n, a.latent);
}

// RoPE on the queries and keys (the leading rot of each head), the cache append and the
// attention, segment by segment (a batch's sequences), into act.attn_out.
void attend(ForwardPass& p, const float* rope_freqs, const KvView& kv, int64_t kv_heads) {
  const ModelHParams& hp = p.hp;
  const ActivationPtrs& a = p.act;
  const int64_t n = p.n_tokens(), heads = hp.n_head, dk = hp.attn_key_dim();
  const int64_t dv = hp.attn_value_dim();
  RopeParams rope = hp.rope(rope_freqs, p.layer);
  AttentionDims dims{heads, kv_heads, dk};
  dims.head_dim_v = dv;
  dims.scale = hp.attn_scale;
  dims.causal = hp.causal;
  const SeqSegment whole{0, n, p.pos0, nullptr};
  for (const SeqSegment& g :
       p.segments.empty() ? std::span<const SeqSegment>(&whole, 1) : p.segments) {
    const KvView seq = g.pages ? kv.with_pages(g.pages, g.pos0 + g.count) : kv;
    float* qg = a.q + g.begin * heads * dk;
    float* kg = a.k + g.begin * kv_heads * dk;
    p.ops.rope(qg, g.count, heads, g.pos0, rope);
    p.ops.rope(kg, g.count, kv_heads, g.pos0, rope);
    p.ops.kv_append(seq, kg, a.v + g.begin * kv_heads * dv, g.pos0, g.count);
    p.ops.attention(qg, seq, dims, g.pos0, g.count, a.attn_out + g.begin * heads * dv);
  }
}

// The older files' form: each head's keys [rotated part | attn_kv_b's key rows · latent]
// and values attn_kv_b's value rows · latent, every head its own KV head.
void expanded_attention_forward(ForwardPass& p, const AttentionWeights& w, const float* rope_freqs,
                                const KvView& kv) {
  const ModelHParams& hp = p.hp;
  const ActivationPtrs& a = p.act;
  Ops& ops = p.ops;
  const int64_t n = p.n_tokens(), heads = hp.n_head, r = hp.kv_lora_rank, rot = hp.rope_dim;
  const int64_t dq = hp.head_dim, nope = dq - rot, dv = hp.head_dim_v, kv_row = nope + dv;
  project(p, w);
  // The normed latent, then every head's expansions in act.q.
  ops.copy_rows(a.latent, r + rot, a.latent_normed, r, n, r);
  ops.rms_norm(a.latent_normed, w.kv_a_norm.data, a.latent_normed, n, r, hp.rms_eps);
  ops.matmul(w.wkv_b, a.latent_normed, n, a.q);
  ops.copy_rows(a.q, kv_row, a.k + rot, dq, n * heads, nope);
  ops.copy_rows(a.q + nope, kv_row, a.v, dv, n * heads, dv);
  for (int64_t h = 0; h < heads; ++h) // the shared rotated part, each head's copy
    ops.copy_rows(a.latent + r, r + rot, a.k + h * dq, heads * dq, n, rot);
  // The queries, each head's rotated part first as its keys have it.
  ops.copy_rows(a.attn_out + nope, dq, a.q, dq, n * heads, rot);
  ops.copy_rows(a.attn_out, dq, a.q + rot, dq, n * heads, nope);
  attend(p, rope_freqs, kv, heads);
  ops.matmul(w.wo, a.attn_out, n, a.proj);
  residual_add(p, w.post_norm, a.proj);
}

} // namespace

void latent_attention_forward(ForwardPass& p, const AttentionWeights& w, const float* rope_freqs,
                              const KvView& kv) {
  const ModelHParams& hp = p.hp;
  if (!hp.latent_cache)
    return expanded_attention_forward(p, w, rope_freqs, kv);
  const ActivationPtrs& a = p.act;
  Ops& ops = p.ops;
  const int64_t n = p.n_tokens(), heads = hp.n_head, r = hp.kv_lora_rank, rot = hp.rope_dim;
  const int64_t dq = hp.head_dim, nope = dq - rot, dk = hp.attn_key_dim(), dv = hp.head_dim_v;

  project(p, w);
  const float* q = a.attn_out;
  // V is the normed latent, K the rotated part then V.
  ops.copy_rows(a.latent, r + rot, a.v, r, n, r);
  ops.rms_norm(a.v, w.kv_a_norm.data, a.v, n, r, hp.rms_eps);
  ops.copy_rows(a.latent + r, r + rot, a.k, dk, n, rot);
  ops.copy_rows(a.v, r, a.k + rot, dk, n, r);
  // The absorbed queries, n x heads x dk in act.q: each head's rotated part, then its
  // unrotated part taken into the latent's space by attn_k_b_h (all heads in one op).
  ops.copy_rows(q + nope, dq, a.q, dk, n * heads, rot);
  ops.matmul_heads(w.wk_b, q, heads * dq, dq, n, a.q + rot, heads * dk, dk);
  attend(p, rope_freqs, kv, 1);
  // Each head's output (n x r in the latent's space) through attn_v_b_h, n x heads x dv in
  // act.q (the queries are spent), then the output projection.
  ops.matmul_heads(w.wv_b, a.attn_out, heads * r, r, n, a.q, heads * dv, dv);
  ops.matmul(w.wo, a.q, n, a.proj);
  residual_add(p, w.post_norm, a.proj);
}

} // namespace pshard
