// deepseek2: DeepSeek-V2, V2-Lite, V2.5, V3, R1 and the models built on them (Moonlight,
// Kimi K2). Multi-head latent attention (MLA): queries from attn_q (or, in the larger
// models, through the low-rank attn_q_a, its RMSNorm and attn_q_b), keys and values
// from one compressed latent per token (attn_kv_a_mqa: kv_lora_rank values, RMSNormed,
// plus rope.dimension_count values rotated by adjacent-pair RoPE and shared by every head),
// expanded per head by attn_k_b / attn_v_b. pshard runs the absorbed form llama.cpp runs,
// caching the latent, not each head's keys and values (runtime/model/mla_attention.cpp).
// The FFN: `leading_dense_block_count` dense layers, then routed experts (softmax in V2,
// sigmoid + exp_probs_b in V3, `expert_gating_func` decides; group-limited in V3) plus an
// ungated shared expert `expert_shared_count` experts wide; the routed weights
// renormalised when `expert_weights_norm` says so and times `expert_weights_scale`.
#include "runtime/model/arch/arch_family.h"

namespace pshard {

const ArchFamily kDeepseek2Family = {
    .name = "deepseek2",
    .summary = "DeepSeek-V2, V2-Lite, V3, R1, Moonlight, Kimi K2",
    .rope_style = RopeStyle::kNormal,
    .ffn = FfnForm::kMoe,
    .shared_expert = Presence::kRequired,
    .shared_expert_gate = false,
    .expert_width_key = true,
    .gating = ExpertGating::kSoftmax,
    .expert_selection_bias = Presence::kOptional,
    // llama.cpp's loader: false when the file has no expert_weights_norm key (V2).
    .normalize_expert_weights = false,
    .latent_attention = true,
};

} // namespace pshard
