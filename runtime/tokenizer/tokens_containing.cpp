#include "runtime/tokenizer/tokens_containing.h"

#include <algorithm>

namespace pshard {
namespace {

// One pass over the vocabulary: the tokens holding a text and, with `find_starts`, those
// where one begins.
TokensOfTexts scan(const Tokenizer& tokenizer, std::span<const std::string> texts,
                   bool find_starts) {
  TokensOfTexts out;
  out.containing.assign(static_cast<size_t>(tokenizer.n_vocab()), false);
  bool any = false, spanning = false;
  for (const std::string& t : texts) {
    any = any || !t.empty();
    spanning = spanning || t.size() >= 2; // a one-byte text cannot go on past a token
  }
  if (!any)
    return out;
  find_starts = find_starts && spanning;
  for (TokenId id = 0; id < tokenizer.n_vocab(); ++id) {
    const std::string piece = tokenizer.token_to_piece(id);
    const bool whole = std::any_of(texts.begin(), texts.end(), [&](const std::string& t) {
      return !t.empty() && piece.find(t) != std::string::npos;
    });
    out.containing[static_cast<size_t>(id)] = whole;
    if (whole || !find_starts || piece.empty())
      continue;
    for (const std::string& t : texts)
      for (size_t k = std::min(piece.size(), t.size() - 1); k >= 1 && t.size() >= 2; --k)
        if (piece.compare(piece.size() - k, k, t, 0, k) == 0)
          out.starting.emplace_back(id, t.substr(k));
  }
  return out; // ids ascend
}

} // namespace

std::vector<bool> tokens_containing(const Tokenizer& tokenizer,
                                    std::span<const std::string> texts) {
  return scan(tokenizer, texts, false).containing;
}

std::vector<std::pair<TokenId, std::string>> tokens_starting(const Tokenizer& tokenizer,
                                                             std::span<const std::string> texts) {
  return scan(tokenizer, texts, true).starting;
}

TokensOfTexts tokens_of_texts(const Tokenizer& tokenizer, std::span<const std::string> texts) {
  return scan(tokenizer, texts, true);
}

} // namespace pshard
