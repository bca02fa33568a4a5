// bert: BERT encoders as llama.cpp converts them — the embedding models bge-small/base/
// large-en-v1.5, all-MiniLM-L6/L12-v2, mxbai-embed-large-v1, snowflake-arctic-embed (their
// WordPiece vocabulary is pshard's WPM tokenizer). Absolute positions, post-norm blocks
// with LayerNorm and biases, a GELU FFN, attention both ways, no head (ArchFamily::encoder).
#include "runtime/model/arch/arch_family.h"

namespace pshard {

const ArchFamily kBertFamily = {
    .name = "bert",
    .summary = "BERT encoders (bge, all-MiniLM, mxbai-embed; embeddings only)",
    .qkv_bias = Presence::kRequired,
    .out_bias = Presence::kRequired,
    .encoder = true,
};

} // namespace pshard
