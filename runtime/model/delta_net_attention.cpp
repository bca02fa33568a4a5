// A recurrent layer's sub-layer (Gated DeltaNet: Qwen3-Next, Qwen3.5) in the attention
// sub-layer's place: RMSNorm; the mixed q/k/v stream, the output gate z (or, the first
// Qwen3-Next conversions, all four from ssm_in, regrouped) and b/a projected;
// the conv and the recurrence over the sequence's state (runtime/kernels/delta_net.h), kept
// in the layer's cache rows; each v head's output RMS-normalised by ssm_norm and multiplied
// by silu(z); ssm_out; residual. A batch (pass.segments) keeps one state per sequence slot:
// the state view's rows are the slots' states one after another, and each segment's
// recurrence runs over its own; the projections treat the batch's tokens as rows.
#include "runtime/model/sublayer.h"

namespace pshard {
namespace {

// Sequence slot `seq`'s state in a view holding every slot's, one after another.
KvView slot_state(const KvView& all, int32_t seq) {
  KvView v = all;
  v.k += static_cast<size_t>(seq) * static_cast<size_t>(all.state_rows) * all.k_row_bytes();
  v.v += static_cast<size_t>(seq) * static_cast<size_t>(all.state_rows) * all.v_row_bytes();
  return v;
}

} // namespace

void delta_net_forward(ForwardPass& p, const AttentionWeights& w, const KvView& state) {
  const ModelHParams& hp = p.hp;
  const DeltaNetDims& d = hp.delta_net;
  const ActivationPtrs& a = p.act;
  const int64_t n = p.n_tokens();
  pre_norm(p.ops, hp, a.hidden, w.norm.data, w.norm_b.data, a.normed, n);
  if (w.ssm_in.data) { // per k head [q | k | its v heads' v | their z]: regroup
    const int64_t dk = d.d_k, r_dv = d.value_dim() / d.n_k_heads;
    const int64_t group = 2 * dk + 2 * r_dv, width = d.n_k_heads * group;
    p.ops.matmul(w.ssm_in, a.normed, n, a.attn_out);
    for (int64_t g = 0; g < d.n_k_heads; ++g) {
      const float* in = a.attn_out + g * group;
      p.ops.copy_rows(in, width, a.q + g * dk, d.conv_dim(), n, dk);
      p.ops.copy_rows(in + dk, width, a.q + d.key_dim() + g * dk, d.conv_dim(), n, dk);
      p.ops.copy_rows(in + 2 * dk, width, a.q + 2 * d.key_dim() + g * r_dv, d.conv_dim(), n, r_dv);
      p.ops.copy_rows(in + 2 * dk + r_dv, width, a.attn_gate + g * r_dv, d.value_dim(), n, r_dv);
    }
  } else {
    p.ops.matmul(w.ssm_qkv, a.normed, n, a.q);
    p.ops.matmul(w.ssm_gate, a.normed, n, a.attn_gate);
  }
  const float *b = a.ssm_ba, *alpha = a.ssm_ba;
  int64_t stride = 2 * d.n_v_heads;
  if (w.ssm_ba.data) { // grouped per k head: its v heads' b, then their a
    p.ops.matmul(w.ssm_ba, a.normed, n, a.ssm_ba);
  } else { // Qwen3.5: all b, then all a
    p.ops.matmul(w.ssm_beta, a.normed, n, a.ssm_ba);
    p.ops.matmul(w.ssm_alpha, a.normed, n, a.ssm_ba + n * d.n_v_heads);
    alpha = a.ssm_ba + n * d.n_v_heads;
    stride = d.n_v_heads;
  }
  const DeltaNetWeights dw{w.ssm_conv.data, w.ssm_a.data, w.ssm_dt.data};
  if (p.segments.empty())
    p.ops.delta_net(d, dw, a.q, b, alpha, stride, state, p.pos0, n, a.attn_out);
  for (const SeqSegment& g : p.segments)
    p.ops.delta_net(d, dw, a.q + g.begin * d.conv_dim(), b + g.begin * stride,
                    alpha + g.begin * stride, stride, slot_state(state, g.seq), g.pos0, g.count,
                    a.attn_out + g.begin * d.value_dim());
  p.ops.rms_norm(a.attn_out, w.ssm_norm.data, a.attn_out, n * d.n_v_heads, d.d_v, hp.rms_eps);
  p.ops.silu_mul(a.attn_gate, a.attn_out, a.attn_out, n * d.value_dim());
  p.ops.matmul(w.ssm_out, a.attn_out, n, a.proj);
  residual_add(p, w.post_norm, a.proj);
}

} // namespace pshard
