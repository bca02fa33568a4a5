// TokenFilter: which tokens may be sampled next, such as those a grammar allows
// (runtime/grammar/token_grammar.h). A Sampler with a filter samples only among them
// and tells the filter which one it took.
#pragma once

#include "runtime/core/status.h"
#include "runtime/tokenizer/token_id.h"

#include <cstdint>
#include <span>

namespace pshard {

class TokenFilter {
public:
  virtual ~TokenFilter() = default;
  // Whether `id` may come next. Cheap: a greedy sampler asks it of its choice first
  // and builds the whole set only when the answer is no.
  virtual bool allows(TokenId id) = 0;
  // Every token that may come next: bit (id % 64) of word (id / 64); valid until
  // the next accept().
  virtual std::span<const uint64_t> allowed() = 0;
  // `id` was sampled (one that allows() takes): move past it.
  virtual Status accept(TokenId id) = 0;
};

inline bool token_bit(std::span<const uint64_t> bits, TokenId id) {
  const auto i = static_cast<size_t>(id);
  return id >= 0 && i / 64 < bits.size() && ((bits[i / 64] >> (i % 64)) & 1u);
}

} // namespace pshard
