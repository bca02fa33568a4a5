// qwen3next: Qwen3-Next-80B-A3B (Instruct, Thinking). Three of every four layers are Gated
// DeltaNet (a recurrence over a fixed per-sequence state: runtime/kernels/delta_net.h), the
// fourth gated attention: attn_q writes each head's query and its gate, the attention's
// output times the gate's sigmoid; per-head q/k RMSNorm, NeoX RoPE over the first
// rope.dimension_count values of a head. Every FFN is routed experts (a softmax, the top k
// renormalised) plus a shared expert scaled by sigmoid(ffn_gate_inp_shexp · x); its pre-norm
// is post_attention_norm. The converter folds Qwen's 1 + w norms into the weights.
#include "runtime/model/arch/arch_family.h"

namespace pshard {

const ArchFamily kQwen3NextFamily = {
    .name = "qwen3next",
    .summary = "Qwen3-Next (Qwen3-Next-80B-A3B)",
    .rope_style = RopeStyle::kNeox,
    .ffn = FfnForm::kMoe,
    .qk_norm = Presence::kRequired,
    .shared_expert = Presence::kRequired,
    .shared_expert_gate = true,
    .ffn_norm = "post_attention_norm",
    .expert_width_key = true,
    .normalize_expert_weights = true,
    .gated_delta_net = true,
    .gated_attention = true,
};

} // namespace pshard
