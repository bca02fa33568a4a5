// gpt-oss: OpenAI's open-weight MoE models (gpt-oss-20b: 24 layers, 32 experts;
// gpt-oss-120b: 36 layers, 128 experts; 4 used per token). Attention with q/k/v and
// output biases, NeoX RoPE with YaRN, and a learned sink logit per head in every
// softmax; every other layer (the even ones) attends to a window of 128 positions with
// the same RoPE. Each layer's MoE block reads `post_attention_norm` as its pre-norm (its
// name in llama.cpp's converter), routes by the top-k router logits plus bias, weighs
// them by a softmax over those k (the same as renormalising the softmax over all), and
// runs experts with biases and a clamped SwiGLU. Experts ship as MXFP4.
#include "runtime/model/arch/arch_family.h"

namespace pshard {

const ArchFamily kGptOssFamily = {
    .name = "gpt-oss",
    .summary = "gpt-oss (gpt-oss-20b, gpt-oss-120b)",
    .rope_style = RopeStyle::kNeox,
    .ffn = FfnForm::kMoe,
    .qkv_bias = Presence::kRequired,
    .out_bias = Presence::kRequired,
    .attn_sinks = Presence::kRequired,
    .moe_biases = Presence::kRequired,
    .ffn_norm = "post_attention_norm",
    .expert_width_key = true,
    .normalize_expert_weights = true,
    .activation = FfnActivation::kSwigluOai,
    .sliding = {.period = 2, .default_window = 128, .local_keeps_scaling = true},
};

} // namespace pshard
