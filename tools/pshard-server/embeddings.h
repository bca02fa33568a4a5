// POST /v1/embeddings (OpenAI's): `input` a string, an array of strings, an array of token
// ids or an array of such arrays; `encoding_format` "float" (default) or "base64" (the
// little-endian float32 bytes); `dimensions` keeps the first N values before normalizing
// (Matryoshka models). Each input runs as one embedding request in the batch, beside
// whatever else it serves, pooled as the server says (--pooling, or the model's
// pooling_type) and normalized to unit length; the answer lists them in input order with
// the prompt tokens read.
#pragma once

#include "tools/pshard-server/api_error.h"
#include "tools/pshard-server/serving_engine.h"

#include <variant>
#include <vector>

namespace pshard::server {

struct EmbeddingRequest {
  std::vector<std::vector<pshard_token>> inputs;
  bool base64 = false;
  int32_t dimensions = 0; // 0: the model's width
};

std::variant<EmbeddingRequest, ApiError> parse_embeddings(const std::string& body,
                                                          const ServingEngine& engine);

// Every input run as an embedding request (at most as many in the batch at once as it has
// sequences, the rest as they finish): the vectors in input order and the prompt tokens
// read, or the first failure.
struct EmbedResults {
  std::vector<std::vector<float>> vectors;
  int64_t n_prompt_total = 0;
};
std::variant<EmbedResults, ApiError>
embed_inputs(ServingEngine& engine, const std::vector<std::vector<pshard_token>>& inputs,
             const pshard_embed_params& ep);

// run_embeddings: embed_inputs as OpenAI's list object.
std::variant<nlohmann::json, ApiError> run_embeddings(ServingEngine& engine,
                                                      const EmbeddingRequest& r);

} // namespace pshard::server
