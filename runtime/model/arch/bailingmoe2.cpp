// bailingmoe2: Ant Group's Ling 2.0 and Ring 2.0 MoE models (Ling-mini-2.0, Ling-flash-2.0,
// Ling-1T, Ring-mini-2.0). q, k and v in one attn_qkv, per-head q/k RMSNorms before NeoX
// RoPE over the first `rope.dimension_count` values of each head (half), no biases. The
// first `leading_dense_block_count` layers dense, the others routed by DeepSeek-V3's
// group-limited choice: sigmoid(router logits) + exp_probs_b, only within the best
// `expert_group_used_count` of `expert_group_count` groups; weighed by the unbiased
// sigmoids, renormalised (`expert_weights_norm`) and times `expert_weights_scale`; plus an
// ungated shared expert. Blocks past `nextn_predict_layers` are the unrun MTP head.
#include "runtime/model/arch/arch_family.h"

namespace pshard {

const ArchFamily kBailingMoe2Family = {
    .name = "bailingmoe2",
    .summary = "Ling 2.0, Ring 2.0",
    .rope_style = RopeStyle::kNeox,
    .ffn = FfnForm::kMoe,
    .qk_norm = Presence::kRequired,
    .shared_expert = Presence::kOptional,
    .shared_expert_gate = false,
    .expert_width_key = true,
    .gating = ExpertGating::kSigmoid,
    .expert_selection_bias = Presence::kOptional,
    // llama.cpp's loader: false when the file has no expert_weights_norm key.
    .normalize_expert_weights = false,
    .fused_qkv = Presence::kRequired,
};

} // namespace pshard
