// qwen3moe: Qwen3-30B-A3B and Qwen3-235B-A22B. Qwen3's attention (per-head q/k
// RMSNorm, NeoX RoPE); every FFN is routed experts of expert_feed_forward_length: a
// softmax over all experts' router logits, the top k, their weights renormalised to
// sum to one. No shared expert.
#include "runtime/model/arch/arch_family.h"

namespace pshard {

const ArchFamily kQwen3MoeFamily = {
    .name = "qwen3moe",
    .summary = "Qwen3 MoE (Qwen3-30B-A3B, Qwen3-235B-A22B)",
    .rope_style = RopeStyle::kNeox,
    .ffn = FfnForm::kMoe,
    .qk_norm = Presence::kRequired,
    .expert_width_key = true,
    .normalize_expert_weights = true,
};

} // namespace pshard
