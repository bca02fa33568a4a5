// granite: IBM Granite 3.x dense (2B, 8B). Llama's block (adjacent-pair RoPE, SwiGLU),
// scaled by the multipliers Granite trains with: the embeddings (12), every block's
// output before the residual add (0.22), the attention scores (instead of
// 1/sqrt(head_dim)), and the logits divided by logit_scale (8 for 2B, 16 for 8B).
#include "runtime/model/arch/arch_family.h"

namespace pshard {

const ArchFamily kGraniteFamily = {
    .name = "granite",
    .summary = "Granite 3.x dense",
    .rope_style = RopeStyle::kNormal,
    .ffn = FfnForm::kDense,
    .multiplier_keys = true,
};

} // namespace pshard
