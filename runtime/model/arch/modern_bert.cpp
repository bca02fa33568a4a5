// modern-bert: ModernBERT encoders (answerdotai/ModernBERT-base/-large; embedding models
// built on it: gte-modernbert-base, modernbert-embed-base, granite-embedding-english-r2).
// Pre-norm blocks with LayerNorms without biases (the token's row LayerNormed first; layer 0
// has no attention norm), q/k/v in one attn_qkv, NeoX RoPE, attention both ways, every third
// layer global from layer 0 (base rope.freq_base, 160000) and the others local (base
// rope.freq_base_swa, 10000) over a window centred on the query (attention.sliding_window
// 128: 64 positions either side), a GeGLU FFN with GELU's exact form whose ffn_up holds the
// activated half first, a final LayerNorm, no biases anywhere; pooling from the file.
#include "runtime/model/arch/arch_family.h"

namespace pshard {

const ArchFamily kModernBertFamily = {
    .name = "modern-bert",
    .summary = "ModernBERT encoders",
    .rope_style = RopeStyle::kNeox,
    .ffn = FfnForm::kDense,
    .activation = FfnActivation::kGeluErf,
    .sliding = {.period = 3,
                .default_window = 0,
                .local_rope_base = 10000.0f,
                .symmetric = true,
                .global_first = true},
    .fused_qkv = Presence::kRequired,
    .fused_gate_up = true,
    .attends_both_ways = true,
    .layer_norms = true,
};

} // namespace pshard
