// glm4moe: Zhipu's GLM-4.5, GLM-4.5-Air and GLM-4.6. Attention with q/k/v biases, per-head
// q/k RMSNorms in the larger models, NeoX RoPE over the first half of each head
// (`rope.dimension_count`, 64 of 128). The first `leading_dense_block_count` layers run a
// dense SwiGLU FFN, the rest routed experts chosen by sigmoid(router logits) +
// exp_probs_b (the bias only chooses), weighed by the unbiased sigmoids, renormalised
// (`expert_weights_norm`) and scaled by `expert_weights_scale`, plus an ungated shared
// expert. The FFN's pre-norm is llama.cpp's `post_attention_norm`. The file's last
// `nextn_predict_layers` blocks are the multi-token-prediction head, which llama.cpp's
// forward pass does not run; pshard neither.
#include "runtime/model/arch/arch_family.h"

namespace pshard {

const ArchFamily kGlm4MoeFamily = {
    .name = "glm4moe",
    .summary = "GLM-4.5, GLM-4.5-Air, GLM-4.6",
    .rope_style = RopeStyle::kNeox,
    .ffn = FfnForm::kMoe,
    .qkv_bias = Presence::kOptional,
    .qk_norm = Presence::kOptional,
    .shared_expert = Presence::kRequired,
    .shared_expert_gate = false,
    .ffn_norm = "post_attention_norm",
    .expert_width_key = true,
    .gating = ExpertGating::kSigmoid,
    .expert_selection_bias = Presence::kRequired,
    // llama.cpp's loader: false when the file has no expert_weights_norm key.
    .normalize_expert_weights = false,
};

} // namespace pshard
