// The MoE sub-layer: its pre-norm (RMSNorm, + bias for phimoe), router (+ bias), top-k expert
// dispatch (Ops::moe_dispatch: softmax or sigmoid probabilities, the top k (by probability +
// selection bias when the model has one), weights renormalised and scaled as the model asks, gated
// expert FFNs with their biases), plus a shared expert — scaled by a sigmoid gate when the model
// has one (qwen2moe), added as it is otherwise (glm4moe) — then the residual.
#include "runtime/model/sublayer.h"

#include "runtime/model/routing_recorder.h"

namespace pshard {

void moe_forward(ForwardPass& p, const MoeWeights& w) {
  const ModelHParams& hp = p.hp;
  const ActivationPtrs& a = p.act;
  const int64_t n = p.n_tokens();

  pre_norm(p.ops, hp, a.hidden, w.norm.data, w.norm_b.data, a.normed, n);
  moe_router_logits(p.ops, w, a.normed, n, a.router);
  MoeDispatch dispatch = moe_dispatch_of(hp, w, a);
  if (p.routing) // before the dispatch turns the logits into probabilities in place
    p.routing->record(p.layer, a.router, n, dispatch.gating);
  dispatch.routes = w.host_routes;
  p.ops.moe_dispatch(a.normed, a.router, dispatch, n, a.moe_out);
  moe_finish(p, w);
}

void moe_router_logits(Ops& ops, const MoeWeights& w, const float* normed, int64_t n,
                       float* logits) {
  ops.matmul(w.router, normed, n, logits);
  if (w.router_bias.data)
    ops.add_bias(logits, w.router_bias.data, n, w.router.rows);
}

MoeDispatch moe_dispatch_of(const ModelHParams& hp, const MoeWeights& w, const ActivationPtrs& a) {
  // Every field up to the gating, in order (no routes: the dispatch routes itself).
  MoeDispatch d{w.gate,    w.up,        w.down,      hp.n_expert_used,
                hp.n_embd, hp.n_ff_exp, a.expert_in, a.expert_out,
                a.gate,    a.up,        nullptr,     moe_gating_of(hp, w)};
  d.activation = hp.family->activation;
  d.gate_bias = w.gate_bias.data;
  d.up_bias = w.up_bias.data;
  d.down_bias = w.down_bias.data;
  return d;
}

MoeGating moe_gating_of(const ModelHParams& hp, const MoeWeights& w) {
  return {hp.gating,
          hp.normalize_expert_weights,
          hp.expert_weights_scale,
          w.selection_bias.data,
          hp.n_expert_groups,
          hp.n_expert_groups_used,
          hp.family->weighted_expert_inputs};
}

void moe_finish(ForwardPass& p, const MoeWeights& w) {
  const ModelHParams& hp = p.hp;
  const ActivationPtrs& a = p.act;
  const int64_t n = p.n_tokens(), d = hp.n_embd;
  if (w.shexp.gate.data) {
    glu_forward(p, w.shexp, a.normed, a.proj);
    if (w.shexp_gate_inp.data) {
      p.ops.matmul(w.shexp_gate_inp, a.normed, n, a.shexp_gate);
      p.ops.add_gated(a.moe_out, a.proj, a.shexp_gate, n, d);
    } else {
      p.ops.add(a.moe_out, a.proj, n * d);
    }
  }
  residual_add(p, VectorWeight{}, a.moe_out);
}

} // namespace pshard
