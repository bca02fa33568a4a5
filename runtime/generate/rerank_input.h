// The tokens a reranker scores for one query and one document.
//
//   - A reranker with a prompt (tokenizer.chat_template.rerank, or its family's built-in
//     one: Qwen3-Reranker) gets the prompt with every "{query}" and "{document}" filled,
//     tokenized as a text (its special tokens parsed), as llama.cpp fills it.
//   - An encoder reranker (bge-reranker: XLM-RoBERTa and BERT cross-encoders) gets the
//     pair as its tokenizer frames two texts: each text tokenized alone, its control-token
//     text left as text, then "<s> query </s></s> document </s>" (RoBERTa's) or, for a
//     WordPiece ("bert") vocabulary, "[CLS] query [SEP] document [SEP]".
//
//   PSHARD_ASSIGN_OR_RETURN(auto ids, rerank_input(tok, format, "capital of France?", doc));
#pragma once

#include "runtime/core/status.h"
#include "runtime/tokenizer/tokenizer.h"

#include <string>
#include <string_view>
#include <vector>

namespace pshard {

struct RerankFormat {
  const std::string* prompt = nullptr; // "{query}" and "{document}" in it to fill; the
                                       // caller keeps it
  bool encoder = false;              // the model attends both ways (a pair is framed)
  int64_t n_token_types = 0;         // the encoder's token types (segment embeddings)
  TokenId pair_separator = kNoToken; // the token after which it reads type 1 (hparams.h)
};

// `prompt` with its placeholders filled; a query holding "{document}" stays as written.
std::string fill_rerank_prompt(std::string_view prompt, std::string_view query,
                               std::string_view document);

// kInvalidArgument, naming what is missing, for a decoder without a prompt, a vocabulary
// without the tokens that frame a pair, or an encoder of several token types that does not
// read the pair's second text as type 1 after the separator the framing uses.
Result<std::vector<TokenId>> rerank_input(const Tokenizer& tok, const RerankFormat& format,
                                          std::string_view query, std::string_view document);

} // namespace pshard
