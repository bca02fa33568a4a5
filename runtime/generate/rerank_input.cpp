#include "runtime/generate/rerank_input.h"

#include "runtime/tokenizer/vocabulary.h"

namespace pshard {
namespace {

void replace_all(std::string& text, std::string_view from, std::string_view to) {
  for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size()))
    text.replace(at, from.size(), to);
}

} // namespace

std::string fill_rerank_prompt(std::string_view prompt, std::string_view query,
                               std::string_view document) {
  // The placeholders are marked apart first, so a query holding "{document}" stays as
  // written rather than being filled in turn.
  std::string text(prompt);
  replace_all(text, "{query}", "\x01q\x01");
  replace_all(text, "{document}", "\x01d\x01");
  replace_all(text, "\x01q\x01", query);
  replace_all(text, "\x01d\x01", document);
  return text;
}

Result<std::vector<TokenId>> rerank_input(const Tokenizer& tok, const RerankFormat& format,
                                          std::string_view query, std::string_view document) {
  if (format.prompt)
    return tok.encode(fill_rerank_prompt(*format.prompt, query, document), tok.add_bos_by_default(),
                      /*parse_special=*/true);
  if (!format.encoder)
    return invalid_argument("the reranker has no prompt for a query and a document "
                            "(tokenizer.chat_template.rerank); convert it again with a converter "
                            "that writes it");
  const TokenId open = tok.bos(), close = tok.eos();
  if (open == kNoToken || close == kNoToken)
    return invalid_argument("the reranker's vocabulary lacks the tokens that frame a query and "
                            "a document (BOS and EOS: <s> and </s>, or [CLS] and [SEP])");
  if (format.n_token_types > 1 && format.pair_separator != close)
    return invalid_argument(
        "this encoder has " + std::to_string(format.n_token_types) +
        " token types but does not read the pair's document as type 1 after its separator "
        "(a BERT cross-encoder names pooling_type rank and its [SEP] as "
        "tokenizer.ggml.seperator_token_id): it would score the pair wrongly");
  // Each text alone, as the model's tokenizer encodes a pair; control text stays text.
  const std::vector<TokenId> q = tok.encode(query, /*add_bos=*/false, /*parse_special=*/false);
  const std::vector<TokenId> d = tok.encode(document, /*add_bos=*/false, /*parse_special=*/false);
  std::vector<TokenId> ids;
  ids.reserve(q.size() + d.size() + 4);
  ids.push_back(open);
  ids.insert(ids.end(), q.begin(), q.end());
  ids.push_back(close);
  if (tok.vocabulary().model != "bert") // RoBERTa separates the two with </s></s>
    ids.push_back(close);
  ids.insert(ids.end(), d.begin(), d.end());
  ids.push_back(close);
  return ids;
}

} // namespace pshard
