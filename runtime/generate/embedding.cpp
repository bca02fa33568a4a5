#include "runtime/generate/embedding.h"

#include <algorithm>

namespace pshard {

Result<std::vector<float>> embed(Decoder& decoder, int64_t n_embd, std::span<const TokenId> tokens,
                                 Pooling pooling, const EmbeddingOptions& options) {
  if (pooling == Pooling::kUnspecified)
    return invalid_argument("the model names no pooling (its pooling_type); choose mean, cls, "
                            "last or none");
  PSHARD_RETURN_IF_ERROR(check_embedding_options(options, n_embd));
  if (tokens.empty())
    return invalid_argument("nothing to embed: the text has no tokens");
  const int64_t step = decoder.max_embedding_rows();
  if (step <= 0)
    return unsupported("this session returns logits only, not embeddings");
  if (static_cast<int64_t>(tokens.size()) > decoder.n_ctx())
    return out_of_range("the text has " + std::to_string(tokens.size()) +
                        " tokens, more than the context of " + std::to_string(decoder.n_ctx()) +
                        "; shorten it or use a larger context (-c)");
  PSHARD_RETURN_IF_ERROR(decoder.rewind(0));
  Pooler pooler(pooling, n_embd, static_cast<int64_t>(tokens.size()), options);
  const auto width = static_cast<size_t>(n_embd);
  for (size_t at = 0; at < tokens.size(); at += static_cast<size_t>(step)) {
    const size_t n = std::min(static_cast<size_t>(step), tokens.size() - at);
    PSHARD_ASSIGN_OR_RETURN(std::span<const float> rows,
                            decoder.decode_embeddings(tokens.subspan(at, n)));
    for (size_t i = 0; i < n; ++i)
      pooler.add(static_cast<int64_t>(at + i), rows.subspan(i * width, width));
  }
  return pooler.finish(options);
}

} // namespace pshard
