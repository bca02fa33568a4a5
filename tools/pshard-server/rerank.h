// POST /v1/rerank (also /rerank and /v1/reranking, llama-server's paths): the rerank API of
// Jina and Cohere as llama-server serves it, for a reranker (pooling_type rank: Qwen3-
// Reranker). `query` a string, `documents` strings (or {"text": ...} objects), `top_n` how
// many results (default all), `return_documents` whether each result repeats its text.
// Each document is put with the query into the model's rerank prompt
// (tokenizer.chat_template.rerank) and scored as one rank-pooled request in the batch,
// beside whatever else it serves; the score is the classification head's first label's
// (Qwen3-Reranker's "yes": a probability). The results are sorted by score, highest first
// (ties by input order), each with its `index` in `documents`.
#pragma once

#include "tools/pshard-server/api_error.h"
#include "tools/pshard-server/serving_engine.h"

#include <nlohmann/json.hpp>
#include <string>
#include <variant>
#include <vector>

namespace pshard::server {

struct RerankRequest {
  std::vector<std::string> documents;
  std::vector<std::vector<pshard_token>> inputs; // each document's prompt, tokenized
  int64_t top_n = 0;                             // 0: all
  bool return_documents = true;
};

std::variant<RerankRequest, ApiError> parse_rerank(const std::string& body,
                                                   const ServingEngine& engine);
std::variant<nlohmann::json, ApiError> run_rerank(ServingEngine& engine, const RerankRequest& r);

} // namespace pshard::server
