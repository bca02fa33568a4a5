// gemma-embedding: EmbeddingGemma (300M), Gemma 3's blocks turned into a text encoder.
// The same block as gemma3 (embeddings scaled by sqrt(n_embd), per-head q/k RMSNorm, NeoX
// RoPE, GeGLU, post-norms; five local layers in six, RoPE base 10000 there), but every
// query sees the whole text, later tokens too, and a local layer's window is centred on
// the query: positions within sliding_window / 2 on either side (llama.cpp's symmetric
// SWA; Hugging Face's bidirectional Gemma 3 masks the same positions). Scores scaled by
// 1/sqrt(head_dim) at every size. Mean pooling from the file; sentence-transformers'
// dense_2 / dense_3 projections after it when the converter kept them
// (runtime/model/pooling.h's EmbeddingProjection).
#include "runtime/model/arch/arch_family.h"

namespace pshard {

const ArchFamily kGemmaEmbeddingFamily = {
    .name = "gemma-embedding",
    .summary = "EmbeddingGemma",
    .rope_style = RopeStyle::kNeox,
    .ffn = FfnForm::kDense,
    .qk_norm = Presence::kRequired,
    .activation = FfnActivation::kGeluTanh,
    .post_norms = Presence::kRequired,
    .scale_embeddings = true,
    .sliding = {.period = 6, .default_window = 0, .local_rope_base = 10000.0f, .symmetric = true},
    .attends_both_ways = true,
};

} // namespace pshard
