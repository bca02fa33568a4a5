// DRY's sequence breakers, given as text, as the sampler takes them
// (SamplerParams::dry_breakers and dry_spans): the tokens holding one, and the tokens
// where one begins and goes on in the next. Header-only, for the callers that have a
// tokenizer (the C API, pshard-run's image prompts).
#pragma once

#include "runtime/sampler/dry_penalty.h"
#include "runtime/tokenizer/tokens_containing.h"

#include <memory>
#include <span>
#include <string>
#include <vector>

namespace pshard {

struct DryBreakerTokens {
  std::shared_ptr<const std::vector<bool>> within;
  std::shared_ptr<const DrySpans> spans; // null when no breaker can span tokens
};

// `tokenizer` must outlive the sampler (it reads the pieces after a breaker's start).
inline DryBreakerTokens dry_breaker_tokens(const Tokenizer& tokenizer,
                                           std::span<const std::string> texts) {
  TokensOfTexts tokens = tokens_of_texts(tokenizer, texts);
  DryBreakerTokens out;
  out.within = std::make_shared<const std::vector<bool>>(std::move(tokens.containing));
  if (!tokens.starting.empty())
    out.spans = std::make_shared<const DrySpans>(
        DrySpans{std::move(tokens.starting),
                 [&tokenizer](TokenId id) { return tokenizer.token_to_piece(id); }});
  return out;
}

} // namespace pshard
