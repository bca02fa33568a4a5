// llama: Llama 1/2/3.x, Mistral and Mistral-NeMo/Minitron, Mixtral-style MoE.
// Adjacent-pair RoPE (the converter permutes q/k rows for it), optional attention
// biases (some fine-tunes and converted models carry them), dense SwiGLU or, when
// llama.expert_count is set, top-k routed experts with renormalised weights.
#include "runtime/model/arch/arch_family.h"

namespace pshard {

const ArchFamily kLlamaFamily = {
    .name = "llama",
    .summary = "Llama 2/3, Mistral, Mixtral-style MoE",
    .rope_style = RopeStyle::kNormal,
    .ffn = FfnForm::kDenseOrMoe,
    .qkv_bias = Presence::kOptional,
    .out_bias = Presence::kOptional,
};

} // namespace pshard
