// phi3: Phi-3 and Phi-3.5 (mini, medium), Phi-4 and Phi-4-mini. Llama's block with NeoX
// RoPE, q/k/v fused into one attn_qkv and the FFN's gate and up into one ffn_up (gate
// rows first); the long-context models rotate with LongRoPE's per-pair factors. The
// converters write the sliding window Phi-3-mini trained with; llama.cpp runs these
// models with full attention, and so does pshard.
#include "runtime/model/arch/arch_family.h"

namespace pshard {

const ArchFamily kPhi3Family = {
    .name = "phi3",
    .summary = "Phi-3, Phi-3.5, Phi-4",
    .rope_style = RopeStyle::kNeox,
    .ffn = FfnForm::kDense,
    .sliding = {.ignore_key = true},
    .fused_qkv = Presence::kOptional,
    .fused_gate_up = true,
    .long_rope = true,
};

} // namespace pshard
