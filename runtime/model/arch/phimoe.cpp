// phimoe: Phi-3.5-MoE (16 experts of 6400, top 2). Phi-3's attention — NeoX RoPE with
// LongRoPE's per-pair factors, q/k/v biases — and a Mixtral-style MoE (softmax over the
// experts, the two best renormalised). Every pre-norm and the final norm is RMSNorm plus a
// bias, and the logits get output.bias, as llama.cpp runs the family (Microsoft's reference
// code uses LayerNorm, and its sparsemixer weighs the two experts each by a softmax of its
// own; llama.cpp's converter writes neither, so pshard follows llama.cpp).
#include "runtime/model/arch/arch_family.h"

namespace pshard {

const ArchFamily kPhiMoeFamily = {
    .name = "phimoe",
    .summary = "Phi-3.5-MoE",
    .rope_style = RopeStyle::kNeox,
    .ffn = FfnForm::kMoe,
    .qkv_bias = Presence::kOptional,
    .out_bias = Presence::kRequired,
    .norm_biases = Presence::kRequired,
    .output_bias = Presence::kRequired,
    .sliding = {.ignore_key = true},
    .long_rope = true,
};

} // namespace pshard
