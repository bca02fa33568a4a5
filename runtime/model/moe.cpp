// The MoE sub-layer: RMSNorm, router, top-k expert dispatch (Ops::moe_dispatch: softmax
// router, weights renormalised to sum to one, SiLU-gated expert FFNs), residual.
#include "runtime/model/sublayer.h"

namespace pshard {

void moe_forward(ForwardPass& p, const MoeWeights& w) {
  const LlamaHParams& hp = p.hp;
  const ActivationPtrs& a = p.act;
  const int64_t n = p.n_tokens(), d = hp.n_embd;

  p.ops.rms_norm(a.hidden, w.norm.data, a.normed, n, d, hp.rms_eps);
  p.ops.matmul(w.router, a.normed, n, a.router);
  const MoeDispatch dispatch{w.gate,  w.up,        w.down,       hp.n_expert_used, d,
                             hp.n_ff, a.expert_in, a.expert_out, a.gate,           a.up,
                             w.host_routes};
  p.ops.moe_dispatch(a.normed, a.router, dispatch, n, a.moe_out);
  p.ops.add(a.hidden, a.moe_out, n * d);
}

} // namespace pshard
