// A reranker's prompt of a query and a document, "{query}" and "{document}" in it to fill:
// GGUF's tokenizer.chat_template.rerank when the file has it. Qwen3-Reranker files
// converted before llama.cpp's converter wrote that key get the prompt of Qwen3-
// Reranker's model card, which llama.cpp then built in for the family.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace pshard {

inline constexpr std::string_view kQwen3RerankPrompt =
    "<|im_start|>system\nJudge whether the Document meets the requirements based on the Query "
    "and the Instruct provided. Note that the answer can only be \"yes\" or \"no\".<|im_end|>\n"
    "<|im_start|>user\n<Instruct>: Given a web search query, retrieve relevant passages that "
    "answer the query\n<Query>: {query}\n<Document>: {document}<|im_end|>\n"
    "<|im_start|>assistant\n<think>\n\n</think>\n\n";

// The file's prompt (`from_file`), else the family's built-in one, else none.
inline std::optional<std::string> rerank_prompt_for(std::optional<std::string> from_file,
                                                    std::string_view arch) {
  if (from_file)
    return from_file;
  if (arch == "qwen3")
    return std::string(kQwen3RerankPrompt);
  return std::nullopt;
}

} // namespace pshard
