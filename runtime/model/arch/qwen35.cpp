// qwen35 and qwen35moe: Qwen3.5 (dense: 0.8B to 27B; MoE: 35B-A3B, 122B-A10B, 397B-A17B) —
// the vision tower is a qwen3vl_merger mmproj file (runtime/vision). Qwen3-Next's
// layers (qwen3next.cpp) with two differences as llama.cpp's converter writes them: b and a
// come from ssm_beta and ssm_alpha, not one ssm_ba, and the v heads are stored tiled over
// the k heads (v head h reads k head h % n_k). The RoPE is interleaved M-RoPE, which for
// text (its three positions equal) is NeoX RoPE over rope.dimension_count values when
// `rope.dimension_sections` covers them all, as the converters write it.
#include "runtime/model/arch/arch_family.h"

namespace pshard {

const ArchFamily kQwen35Family = {
    .name = "qwen35",
    .summary = "Qwen3.5 dense (text)",
    .rope_style = RopeStyle::kNeox,
    .ffn = FfnForm::kDense,
    .qk_norm = Presence::kRequired,
    .ffn_norm = "post_attention_norm",
    .gated_delta_net = true,
    .gated_attention = true,
    .split_beta_alpha = true,
    .interleaved_mrope = true,
};

const ArchFamily kQwen35MoeFamily = {
    .name = "qwen35moe",
    .summary = "Qwen3.5 MoE (Qwen3.5-35B-A3B, -122B-A10B, -397B-A17B; text)",
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
    .split_beta_alpha = true,
    .interleaved_mrope = true,
};

} // namespace pshard
