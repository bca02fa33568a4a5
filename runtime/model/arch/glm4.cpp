// glm4: Zhipu's GLM-4-0414 dense models (GLM-4-9B-0414, GLM-4-32B-0414, GLM-Z1). Adjacent-
// pair RoPE over the first half of each head (`rope.dimension_count`; the converter does not
// permute q/k, the model rotates pairs), optional q/k/v biases, and a
// sandwich of norms: each block's output RMSNormed before its residual add
// (post_attention_norm, post_ffw_norm) as Gemma's; the FFN's gate and up as one ffn_up of
// 2·n_ff rows, gate first.
#include "runtime/model/arch/arch_family.h"

namespace pshard {

const ArchFamily kGlm4Family = {
    .name = "glm4",
    .summary = "GLM-4-0414, GLM-Z1",
    .rope_style = RopeStyle::kNormal,
    .ffn = FfnForm::kDense,
    .qkv_bias = Presence::kOptional,
    .post_norms = Presence::kRequired,
    .fused_gate_up = true,
};

} // namespace pshard
