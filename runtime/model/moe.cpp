// The MoE sub-layer: RMSNorm, router, top-k expert dispatch (Ops::moe_dispatch: softmax
// over all experts, top k, weights renormalised when the model asks, SiLU-gated expert
// FFNs), plus a shared expert scaled by a sigmoid gate when the model has one
// (qwen2moe), residual.
#include "runtime/model/sublayer.h"

#include "runtime/model/routing_recorder.h"

namespace pshard {

void moe_forward(ForwardPass& p, const MoeWeights& w) {
  const ModelHParams& hp = p.hp;
  const ActivationPtrs& a = p.act;
  const int64_t n = p.n_tokens(), d = hp.n_embd;

  p.ops.rms_norm(a.hidden, w.norm.data, a.normed, n, d, hp.rms_eps);
  p.ops.matmul(w.router, a.normed, n, a.router);
  if (p.routing) // before the dispatch turns the logits into probabilities in place
    p.routing->record(p.layer, a.router, n);
  MoeDispatch dispatch{w.gate,     w.up,     w.down, hp.n_expert_used, d,
                       hp.n_ff_exp, a.expert_in, a.expert_out, a.gate, a.up, w.host_routes};
  dispatch.normalize_weights = hp.normalize_expert_weights;
  p.ops.moe_dispatch(a.normed, a.router, dispatch, n, a.moe_out);
  moe_finish(p, w);
}

void moe_finish(ForwardPass& p, const MoeWeights& w) {
  const ModelHParams& hp = p.hp;
  const ActivationPtrs& a = p.act;
  const int64_t n = p.n_tokens(), d = hp.n_embd;
  if (w.shexp.gate.data) {
    glu_forward(p, w.shexp, a.proj);
    p.ops.matmul(w.shexp_gate_inp, a.normed, n, a.shexp_gate);
    p.ops.add_gated(a.moe_out, a.proj, a.shexp_gate, n, d);
  }
  residual_add(p, VectorWeight{}, a.moe_out);
}

} // namespace pshard
