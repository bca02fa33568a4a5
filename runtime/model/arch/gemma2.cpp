// gemma2: Gemma 2 (2B, 9B, 27B). Gemma's block (sqrt(n_embd)-scaled embeddings, NeoX
// RoPE, GeGLU, a post-norm on each block's output) without q/k norms; every other layer
// (the even ones) attends to a 4096-position window; attention scores are soft-capped
// at 50 and the final logits at 30.
#include "runtime/model/arch/arch_family.h"

namespace pshard {

const ArchFamily kGemma2Family = {
    .name = "gemma2",
    .summary = "Gemma 2",
    .rope_style = RopeStyle::kNeox,
    .ffn = FfnForm::kDense,
    .activation = FfnActivation::kGeluTanh,
    .post_norms = Presence::kRequired,
    .scale_embeddings = true,
    .sliding = {.period = 2, .default_window = 4096, .local_rope_base = 0.0f},
    .attn_softcap = 50.0f,
    .final_softcap = 30.0f,
    .width_scaled_attention_layers = 46,
};

} // namespace pshard
