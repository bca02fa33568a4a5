// What the generation loop needs from a session: decode tokens, report the position.
// CpuSession (all-CPU) and the hybrid executor's session both implement it.
#pragma once

#include "runtime/core/status.h"
#include "runtime/tokenizer/token_id.h"

#include <cstdint>
#include <span>

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
};

// The checks every decode() makes before touching the session: at least one token,
// every id inside the vocabulary, and room in the context for all of them.
Status check_decode_input(std::span<const TokenId> tokens, int64_t n_vocab, int64_t n_past,
                          int64_t n_ctx);

} // namespace pshard
