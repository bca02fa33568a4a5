// qwen2: Qwen2 and Qwen2.5 dense models. NeoX RoPE (rotating x[i] with x[i + d/2]),
// biases on the q/k/v projections (none on the output projection), dense SwiGLU.
#include "runtime/model/arch/arch_family.h"

namespace pshard {

const ArchFamily kQwen2Family = {
    .name = "qwen2",
    .summary = "Qwen2, Qwen2.5",
    .rope_style = RopeStyle::kNeox,
    .ffn = FfnForm::kDense,
    .qkv_bias = Presence::kRequired,
};

} // namespace pshard
