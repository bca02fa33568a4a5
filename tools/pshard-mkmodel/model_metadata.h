// The metadata half of pshard-mkmodel: a ModelSpec checked and turned into the
// hyperparameters the runtime will read back, and those written as `{arch}.*` keys.
#pragma once

#include "runtime/gguf/gguf_writer.h"
#include "runtime/model/hparams.h"
#include "tools/pshard-mkmodel/model_generator.h"

namespace pshard {

// Fails, naming the option, for shapes the family cannot have (an MoE width for a dense
// family, a head size RoPE cannot rotate, an unknown architecture, …). n_vocab is left 0.
Result<ModelHParams> hparams_of_spec(const ModelSpec& spec);

// general.* and every `{arch}.` key the reader needs (not the vocabulary size).
void write_model_metadata(const ModelSpec& spec, const ModelHParams& hp, gguf::GgufWriter& w);

} // namespace pshard
