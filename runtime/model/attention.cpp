// The attention sub-layer: RMSNorm (an encoder: none, and a LayerNorm after the residual),
// Q/K/V projections (+ biases), per-head q/k RMSNorm (Qwen3, Gemma 3), RoPE (normal or NeoX,
// with the model's scaling — a local layer's own; M-RoPE positions when given), KV-cache
// append, grouped-query attention over the cache (causal, or both ways for an encoder; a
// sliding window, scale, soft-cap and sinks as the layer has them), output projection
// (+ bias, + Gemma's post-norm), residual.
#include "runtime/model/sublayer.h"

namespace pshard {
namespace {

// Each token's type: 0, or for a cross-encoder (hparams' pair_separator) 1 after the
// first separator of its text — the pair's second text, as BERT's tokenizer marks it.
std::vector<TokenId> token_types(const ForwardPass& p, std::span<const SeqSegment> segments) {
  std::vector<TokenId> types(static_cast<size_t>(p.n_tokens()), 0);
  if (p.hp.pair_separator == kNoToken)
    return types;
  for (const SeqSegment& g : segments) {
    TokenId type = 0;
    for (int64_t i = g.begin; i < g.begin + g.count; ++i) {
      types[static_cast<size_t>(i)] = type;
      if (p.tokens[static_cast<size_t>(i)] == p.hp.pair_separator)
        type = 1;
    }
  }
  return types;
}

// An encoder's attn[0] first finishes the embedding (tensor_layout.h says why here): the
// token's row plus its token type's, plus the position's, LayerNormed — llama.cpp's order
// of the adds. Positions are each segment's own.
void encoder_input(ForwardPass& p, const AttentionWeights& w) {
  const ActivationPtrs& a = p.act;
  const int64_t n = p.n_tokens(), d = p.hp.n_embd;
  const SeqSegment whole{0, n, p.pos0, nullptr};
  const std::span<const SeqSegment> segments =
      p.segments.empty() ? std::span<const SeqSegment>(&whole, 1) : p.segments;
  if (w.token_types.data) {
    p.ops.embed_rows(w.token_types, token_types(p, segments), a.normed);
    p.ops.add(a.hidden, a.normed, n * d);
  }
  if (w.pos_embd.data) { // nomic-bert has none: it rotates q and k instead
    std::vector<TokenId> positions(static_cast<size_t>(n));
    for (const SeqSegment& g : segments)
      for (int64_t i = 0; i < g.count; ++i)
        positions[static_cast<size_t>(g.begin + i)] = static_cast<TokenId>(g.pos0 + i);
    p.ops.embed_rows(w.pos_embd, positions, a.normed);
    p.ops.add(a.hidden, a.normed, n * d);
  }
  p.ops.layer_norm(a.hidden, w.embd_norm.data, w.embd_norm_b.data, a.hidden, n, d, p.hp.rms_eps);
}

} // namespace

void attention_forward(ForwardPass& p, const AttentionWeights& w, const float* rope_freqs,
                       const KvView& kv) {
  const ModelHParams& hp = p.hp;
  const ActivationPtrs& a = p.act;
  const int64_t n = p.n_tokens(), d = hp.n_embd;
  if (hp.latent_attention())
    return latent_attention_forward(p, w, rope_freqs, kv);
  if (hp.is_recurrent_layer(p.layer))
    return delta_net_forward(p, w, kv);

  if (w.embd_norm.data) // attn[0] of an encoder (or ModernBERT)
    encoder_input(p, w);
  // An encoder's blocks have no pre-norm: they read the residual stream itself.
  const float* in = a.hidden;
  if (w.norm.data) {
    pre_norm(p.ops, hp, a.hidden, w.norm.data, w.norm_b.data, a.normed, n);
    in = a.normed;
  }
  if (hp.family->gated_attention) { // each head's query, then its gate (Qwen3-Next)
    const int64_t hd = hp.head_dim;
    p.ops.matmul(w.wq, in, n, a.attn_out);
    p.ops.copy_rows(a.attn_out, 2 * hd, a.q, hd, n * hp.n_head, hd);
    p.ops.copy_rows(a.attn_out + hd, 2 * hd, a.attn_gate, hd, n * hp.n_head, hd);
  } else {
    p.ops.matmul(w.wq, in, n, a.q);
  }
  p.ops.matmul(w.wk, in, n, a.k);
  p.ops.matmul(w.wv, in, n, a.v);
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
  dims.symmetric_window = hp.symmetric_window();
  dims.chunked = hp.chunked_window;
  dims.scale = hp.attn_scale;
  dims.softcap = hp.attn_softcap;
  dims.temp_scale = hp.attention_temperature(p.layer);
  dims.temp_length = hp.attn_temp_length;
  dims.sinks = w.sinks.data;
  dims.causal = hp.causal;
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
      if (hp.rope_qk_norm) { // Llama 4: each head's row, no weight
        p.ops.rms_norm(q, nullptr, q, g.count * hp.n_head, hp.head_dim, hp.rms_eps);
        p.ops.rms_norm(k, nullptr, k, g.count * hp.n_head_kv, hp.head_dim, hp.rms_eps);
      }
    }
    p.ops.kv_append(seq, k, v, g.pos0, g.count);
    p.ops.attention(q, seq, dims, g.pos0, g.count, a.attn_out + g.begin * hp.q_dim());
  }

  if (hp.family->gated_attention)
    p.ops.sigmoid_mul(a.attn_out, a.attn_gate, n * hp.q_dim());
  p.ops.matmul(w.wo, a.attn_out, n, a.proj);
  if (w.bo.data)
    p.ops.add_bias(a.proj, w.bo.data, n, d);
  residual_add(p, w.post_norm, a.proj);
  if (w.out_norm.data) // an encoder: LayerNorm of the residual sum
    p.ops.layer_norm(a.hidden, w.out_norm.data, w.out_norm_b.data, a.hidden, n, d, hp.rms_eps);
}

} // namespace pshard
