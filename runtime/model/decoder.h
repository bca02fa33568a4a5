// What the generation loop needs from a session: decode tokens, report the position,
// and for speculative decoding every token's logits and a rewind.
// CpuSession (all-CPU) and the hybrid executor's session both implement it.
#pragma once

#include "runtime/core/status.h"
#include "runtime/tokenizer/token_id.h"

#include <cstdint>
#include <span>
#include <vector>

namespace pshard {

class Decoder {
public:
  virtual ~Decoder() = default;
  // Appends tokens at the current position and returns the logits of the last one
  // (valid until the next call). Fails, leaving the session unchanged, when a token
  // id is out of range or the context would overflow.
  virtual Result<std::span<const float>> decode(std::span<const TokenId> tokens) = 0;
  virtual int64_t n_past() const = 0;
  virtual int64_t n_ctx() const = 0;

  // Speculative decoding (runtime/generate/prompt_lookup.h) checks drafted tokens in one
  // pass and drops the rejected ones. decode_all appends tokens like decode() but returns
  // every token's logits, tokens.size() rows of n_vocab, for at most max_logit_rows()
  // tokens (the session reserves that many rows when it is made; 1: no speculation).
  // rewind forgets the positions from n_past on: the next call writes its KV rows over
  // theirs. A decoder without them answers kUnsupported.
  virtual int64_t max_logit_rows() const { return 1; }
  // Whether rewind may go to any earlier position (speculation needs it); false: only to 0
  // (a model with recurrent layers, whose state keeps no earlier positions).
  virtual bool rewinds_anywhere() const { return true; }
  virtual Result<std::span<const float>> decode_all(std::span<const TokenId> tokens);
  virtual Status rewind(int64_t n_past);

  // Embeddings (runtime/model/pooling.h): appends tokens like decode(), at most
  // max_embedding_rows() of them, and returns their final hidden states after the output
  // norm — tokens.size() rows of n_embd, host memory, valid until the next call — without
  // running the head. A decoder without it answers kUnsupported.
  virtual int64_t max_embedding_rows() const { return 0; }
  virtual Result<std::span<const float>> decode_embeddings(std::span<const TokenId> tokens);
};

// Why a model with recurrent layers refuses speculative decoding.
inline constexpr const char* kRecurrentNoDraftsMessage =
    "speculative decoding (--draft-max) drops rejected drafts by rewinding, which this model's "
    "recurrent layers cannot (they keep a state, not positions); use --draft-max 0";

// decode_all's checks: decode()'s, and no more tokens than the logit rows.
Status check_decode_all(std::span<const TokenId> tokens, int64_t n_vocab, int64_t n_past,
                        int64_t n_ctx, int64_t max_logit_rows);
// decode_embeddings' checks: decode()'s, and no more tokens than one pass holds.
Status check_decode_embeddings(std::span<const TokenId> tokens, int64_t n_vocab, int64_t n_past,
                               int64_t n_ctx, int64_t max_rows);
// 0, 1, …, n - 1: the logit rows of every token of a pass (ForwardPass::logit_rows).
std::vector<int64_t> every_row(size_t n);
// rewind's check: a position between 0 and the current one.
Status check_rewind(int64_t to, int64_t n_past);

// The checks every decode() makes before touching the session: at least one token,
// every id inside the vocabulary, and room in the context for all of them.
Status check_decode_input(std::span<const TokenId> tokens, int64_t n_vocab, int64_t n_past,
                          int64_t n_ctx);

} // namespace pshard
