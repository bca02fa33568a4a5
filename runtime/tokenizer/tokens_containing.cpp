#include "runtime/tokenizer/tokens_containing.h"

namespace pshard {

std::vector<bool> tokens_containing(const Tokenizer& tokenizer,
                                    std::span<const std::string> texts) {
  std::vector<bool> out(static_cast<size_t>(tokenizer.n_vocab()), false);
  bool any = false;
  for (const std::string& t : texts)
    any = any || !t.empty();
  if (!any)
    return out;
  for (TokenId id = 0; id < tokenizer.n_vocab(); ++id) {
    const std::string piece = tokenizer.token_to_piece(id);
    for (const std::string& t : texts)
      if (!t.empty() && piece.find(t) != std::string::npos) {
        out[static_cast<size_t>(id)] = true;
        break;
      }
  }
  return out;
}

std::vector<std::pair<TokenId, std::string>> tokens_starting(const Tokenizer& tokenizer,
                                                             std::span<const std::string> texts) {
  std::vector<std::pair<TokenId, std::string>> out;
  bool any = false;
  for (const std::string& t : texts)
    any = any || t.size() >= 2;
  if (!any)
    return out; // a one-byte text cannot go on past a token
  for (TokenId id = 0; id < tokenizer.n_vocab(); ++id) {
    const std::string piece = tokenizer.token_to_piece(id);
    bool whole = false;
    for (const std::string& t : texts)
      whole = whole || (!t.empty() && piece.find(t) != std::string::npos);
    if (whole || piece.empty())
      continue;
    for (const std::string& t : texts)
      for (size_t k = std::min(piece.size(), t.size() - 1); k >= 1 && t.size() >= 2; --k)
        if (piece.compare(piece.size() - k, k, t, 0, k) == 0)
          out.emplace_back(id, t.substr(k));
  }
  return out; // ids ascend
}

} // namespace pshard
