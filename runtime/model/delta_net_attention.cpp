// A recurrent layer's sub-layer (Gated DeltaNet: Qwen3-Next, Qwen3.5) in the attention
// sub-layer's place: RMSNorm; the mixed q/k/v stream, the output gate z and b/a projected;
// the conv and the recurrence over the sequence's state (runtime/kernels/delta_net.h), kept
// in the layer's cache rows; each v head's output RMS-normalised by ssm_norm and multiplied
// by silu(z); ssm_out; residual. One sequence per pass: the batch engines refuse models with
// recurrent layers (their states are not paged).
#include "runtime/model/sublayer.h"

namespace pshard {

void delta_net_forward(ForwardPass& p, const AttentionWeights& w, const KvView& state) {
  const ModelHParams& hp = p.hp;
  const DeltaNetDims& d = hp.delta_net;
  const ActivationPtrs& a = p.act;
  const int64_t n = p.n_tokens();
  pre_norm(p.ops, hp, a.hidden, w.norm.data, w.norm_b.data, a.normed, n);
  p.ops.matmul(w.ssm_qkv, a.normed, n, a.q);
  p.ops.matmul(w.ssm_gate, a.normed, n, a.attn_gate);
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
  p.ops.delta_net(d, dw, a.q, b, alpha, stride, state, p.pos0, n, a.attn_out);
  p.ops.rms_norm(a.attn_out, w.ssm_norm.data, a.attn_out, n * d.n_v_heads, d.d_v, hp.rms_eps);
  p.ops.silu_mul(a.attn_gate, a.attn_out, a.attn_out, n * d.value_dim());
  p.ops.matmul(w.ssm_out, a.attn_out, n, a.proj);
  residual_add(p, w.post_norm, a.proj);
}

} // namespace pshard
