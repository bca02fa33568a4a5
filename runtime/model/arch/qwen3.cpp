// qwen3: Qwen3 dense models. No attention biases; instead each head of q and k is
// RMS-normalised (attn_q_norm / attn_k_norm, head_dim weights) before NeoX RoPE. The
// head size comes from attention.key_length (128), not n_embd / n_head.
#include "runtime/model/arch/arch_family.h"

namespace pshard {

const ArchFamily kQwen3Family = {
    .name = "qwen3",
    .summary = "Qwen3 dense",
    .rope_style = RopeStyle::kNeox,
    .ffn = FfnForm::kDense,
    .qk_norm = Presence::kRequired,
};

} // namespace pshard
