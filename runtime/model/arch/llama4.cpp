// llama4: Meta's Llama 4 text model (Scout 17B-16E, Maverick 17B-128E), as llama.cpp runs
// it. Llama's block (adjacent-pair RoPE with rope_freqs, SwiGLU, grouped-query attention)
// with every fourth layer unrotated (NoPE) and attending to the whole context, its queries
// warmed by a temperature past 8192 positions; the other layers attend in chunks of 8192
// positions, their q and k RMS-normalised per head after RoPE (not Maverick's); every
// `interleave_moe_layer_step`-th layer routes one expert by sigmoid, the expert's input
// scaled by its weight, plus an ungated shared expert; the others run a dense FFN of
// feed_forward_length (the experts' width is expert_feed_forward_length).
#include "runtime/model/arch/arch_family.h"

namespace pshard {

const ArchFamily kLlama4Family = {
    .name = "llama4",
    .summary = "Llama 4 (Scout, Maverick)",
    .rope_style = RopeStyle::kNormal,
    .ffn = FfnForm::kMoe,
    .shared_expert = Presence::kRequired,
    .shared_expert_gate = false,
    .expert_width_key = true,
    .gating = ExpertGating::kSigmoid,
    .normalize_expert_weights = false,
    .nope_period = 4,
    .llama4_attention = true,
    .weighted_expert_inputs = true,
};

} // namespace pshard
