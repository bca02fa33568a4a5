// One text's embedding through a one-sequence Decoder (pshard-run --embedding, the C
// API's pshard_embed): the tokens from position 0, in passes of the decoder's
// max_embedding_rows(), pooled and shaped (runtime/model/pooling.h). Batches of requests
// go through the scheduler instead (RequestParams::embedding).
//
//   PSHARD_ASSIGN_OR_RETURN(std::vector<float> v,
//       embed(*session, model.hparams().n_embd, ids, Pooling::kLast, {.normalize = true}));
#pragma once

#include "runtime/model/decoder.h"
#include "runtime/model/pooling.h"

#include <vector>

namespace pshard {

// The decoder is rewound to position 0 first (what it held is forgotten). kNone returns
// every token's row. kInvalidArgument for kUnspecified pooling or options that do not fit.
Result<std::vector<float>> embed(Decoder& decoder, int64_t n_embd, std::span<const TokenId> tokens,
                                 Pooling pooling, const EmbeddingOptions& options);

} // namespace pshard
