// qwen3vl and qwen3vlmoe: the language models of Qwen3-VL (dense 2B to 32B; MoE 30B-A3B,
// 235B-A22B). Qwen3's and Qwen3-MoE's layers with interleaved multimodal RoPE
// (`rope.dimension_sections`, pairs dealt t, h, w in turn) and DeepStack: the first
// `n_deepstack_layers` layers add an image's DeepStack rows (runtime/model/deepstack.h)
// after their FFN. The image embeddings come from a qwen3vl_merger projector file.
#include "runtime/model/arch/arch_family.h"

namespace pshard {

const ArchFamily kQwen3VlFamily = {
    .name = "qwen3vl",
    .summary = "Qwen3-VL dense language model",
    .rope_style = RopeStyle::kNeox,
    .ffn = FfnForm::kDense,
    .qk_norm = Presence::kRequired,
    .interleaved_mrope = true,
    .deepstack = true,
};

const ArchFamily kQwen3VlMoeFamily = {
    .name = "qwen3vlmoe",
    .summary = "Qwen3-VL MoE language model (Qwen3-VL-30B-A3B, -235B-A22B)",
    .rope_style = RopeStyle::kNeox,
    .ffn = FfnForm::kMoe,
    .qk_norm = Presence::kRequired,
    .expert_width_key = true,
    .normalize_expert_weights = true,
    .interleaved_mrope = true,
    .deepstack = true,
};

} // namespace pshard
