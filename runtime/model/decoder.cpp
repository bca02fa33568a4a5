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

Result<std::span<const float>> Decoder::decode_all(std::span<const TokenId>) {
  return unsupported("this decoder returns only the last token's logits (no speculative decoding)");
}

Status Decoder::rewind(int64_t) {
  return unsupported("this decoder cannot drop positions (no speculative decoding)");
}

namespace {

// decode()'s checks, and at most `max_rows` tokens: `what` of n tokens, "but ..." + `limit`.
Status check_rows(std::span<const TokenId> tokens, int64_t n_vocab, int64_t n_past, int64_t n_ctx,
                  int64_t max_rows, const char* what, const std::string& limit) {
  PSHARD_RETURN_IF_ERROR(check_decode_input(tokens, n_vocab, n_past, n_ctx));
  if (static_cast<int64_t>(tokens.size()) > max_rows)
    return invalid_argument(std::string(what) + " of " + std::to_string(tokens.size()) +
                            " tokens, but " + limit);
  return Status::ok_status();
}

} // namespace

Status check_decode_all(std::span<const TokenId> tokens, int64_t n_vocab, int64_t n_past,
                        int64_t n_ctx, int64_t max_logit_rows) {
  return check_rows(tokens, n_vocab, n_past, n_ctx, max_logit_rows, "decode_all",
                    "the session holds logits for " + std::to_string(max_logit_rows) +
                        "; make it with more logit rows (max_logit_rows)");
}

Result<std::span<const float>> Decoder::decode_embeddings(std::span<const TokenId>) {
  return unsupported("this decoder returns logits only, not embeddings");
}

Status check_decode_embeddings(std::span<const TokenId> tokens, int64_t n_vocab, int64_t n_past,
                               int64_t n_ctx, int64_t max_rows) {
  return check_rows(tokens, n_vocab, n_past, n_ctx, max_rows, "decode_embeddings",
                    "one pass of this session holds " + std::to_string(max_rows) +
                        "; pass them in parts");
}

std::vector<int64_t> every_row(size_t n) {
  std::vector<int64_t> rows(n);
  for (size_t i = 0; i < n; ++i)
    rows[i] = static_cast<int64_t>(i);
  return rows;
}

Status check_rewind(int64_t to, int64_t n_past) {
  if (to < 0 || to > n_past)
    return out_of_range("cannot rewind to position " + std::to_string(to) + ": the session holds " +
                        std::to_string(n_past));
  return Status::ok_status();
}

} // namespace pshard
