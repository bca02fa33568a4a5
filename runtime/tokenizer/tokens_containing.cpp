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

} // namespace pshard
