// qwen2moe: Qwen1.5-MoE and Qwen2-MoE. Qwen2's attention (NeoX RoPE, q/k/v biases);
// the FFN is routed experts of expert_feed_forward_length plus one shared expert of
// expert_shared_feed_forward_length that every token runs, its output scaled by
// sigmoid(ffn_gate_inp_shexp · x). The top-k softmax probabilities are NOT
// renormalised (the model's norm_topk_prob is false).
#include "runtime/model/arch/arch_family.h"

namespace pshard {

const ArchFamily kQwen2MoeFamily = {
    .name = "qwen2moe",
    .summary = "Qwen1.5-MoE, Qwen2-MoE",
    .rope_style = RopeStyle::kNeox,
    .ffn = FfnForm::kMoe,
    .qkv_bias = Presence::kRequired,
    .shared_expert = Presence::kRequired,
    .expert_width_key = true,
    .normalize_expert_weights = false,
};

} // namespace pshard
