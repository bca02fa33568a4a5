#include "runtime/model/decoder.h"

#include <string>

namespace pshard {

Status check_decode_input(std::span<const TokenId> tokens, int64_t n_vocab, int64_t n_past,
                          int64_t n_ctx) {
  if (tokens.empty())
    return invalid_argument("decode needs at least one token");
  for (TokenId t : tokens)
    if (t < 0 || t >= n_vocab)
      return out_of_range("token id " + std::to_string(t) + " is outside the vocabulary of " +
                          std::to_string(n_vocab));
  if (n_past + static_cast<int64_t>(tokens.size()) > n_ctx)
    return out_of_range("the context is full: " + std::to_string(n_past) + " + " +
                        std::to_string(tokens.size()) + " tokens exceed the context of " +
                        std::to_string(n_ctx) + "; use a larger context (-c)");
  return Status::ok_status();
}

} // namespace pshard
