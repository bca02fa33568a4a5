// qwen2vl: the language model of Qwen2-VL and Qwen2.5-VL (and Cosmos-Reason1): Qwen2's
// layers (NeoX RoPE, q/k/v biases, dense SwiGLU) with multimodal RoPE. Each head's
// rotary pairs are split by `rope.dimension_sections` among a temporal, a height and a
// width position; text tokens advance all three together (plain NeoX RoPE), an image's
// tokens take its grid coordinates. The image embeddings come from a projector file
// (runtime/vision).
#include "runtime/model/arch/arch_family.h"

namespace pshard {

const ArchFamily kQwen2VlFamily = {
    .name = "qwen2vl",
    .summary = "Qwen2-VL, Qwen2.5-VL language model",
    .rope_style = RopeStyle::kNeox,
    .ffn = FfnForm::kDense,
    .qkv_bias = Presence::kRequired,
    .rope_sections = true,
};

} // namespace pshard
