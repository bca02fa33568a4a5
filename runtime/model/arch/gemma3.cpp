// gemma3: Gemma 3 text models (270M, 1B; the language part of 4B, 12B, 27B). Gemma's
// block: embeddings scaled by sqrt(n_embd), per-head q/k RMSNorm, NeoX RoPE, GeGLU FFN,
// and a second RMSNorm on each block's output before the residual add (the GGUF's norm
// weights already include Gemma's +1). Five of every six layers attend to a sliding
// window (512 or 1024) with RoPE base 10000 and no scaling; every sixth attends to the
// whole context with the file's base (1e6) and scaling (linear ×8 from 4B up). Output
// tied to the embeddings.
#include "runtime/model/arch/arch_family.h"

namespace pshard {

const ArchFamily kGemma3Family = {
    .name = "gemma3",
    .summary = "Gemma 3 text",
    .rope_style = RopeStyle::kNeox,
    .ffn = FfnForm::kDense,
    .qk_norm = Presence::kRequired,
    .activation = FfnActivation::kGeluTanh,
    .post_norms = Presence::kRequired,
    .scale_embeddings = true,
    .sliding = {.period = 6, .default_window = 0, .local_rope_base = 10000.0f},
    .width_scaled_attention_layers = 62,
};

} // namespace pshard
