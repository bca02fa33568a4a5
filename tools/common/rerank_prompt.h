// A reranker's prompt of a query and a document: GGUF's tokenizer.chat_template.rerank
// (pshard_model_rerank_template) with every "{query}" and "{document}" filled, as
// llama.cpp fills it. Shared by pshard-server's /v1/rerank and pshard-run --embedding
// ("QUERY<TAB>DOCUMENT" lines, as llama-embedding reads them for rerankers).
#pragma once

#include <string>

namespace pshard {

std::string rerank_prompt(const std::string& prompt, const std::string& query,
                          const std::string& document);

} // namespace pshard
