// nomic-bert: Nomic Embed (nomic-embed-text-v1, v1.5) as llama.cpp converts it. BERT's
// post-norm encoder (bert.cpp) with NeoX RoPE on q and k (`rope.freq_base`, 1000) in place
// of a position table, q/k/v in one matrix (attn_qkv) without biases, and a SwiGLU FFN
// (ffn_up, ffn_gate, ffn_down) without biases (ArchFamily::encoder_rope_glu).
#include "runtime/model/arch/arch_family.h"

namespace pshard {

const ArchFamily kNomicBertFamily = {
    .name = "nomic-bert",
    .summary = "Nomic Embed (nomic-embed-text-v1, v1.5; embeddings only)",
    .rope_style = RopeStyle::kNeox,
    .out_bias = Presence::kOptional,
    .fused_qkv = Presence::kRequired,
    .encoder = true,
    .encoder_rope_glu = true,
};

} // namespace pshard
