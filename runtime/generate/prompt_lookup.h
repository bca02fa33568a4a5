// Prompt-lookup drafting for speculative decoding: the tokens that followed the most
// recent earlier occurrence of the context's last n tokens (n from ngram_max down to
// ngram_min, longest match first). Text that repeats its context — a summary quoting
// its source, code edited in place, a chat answer restating the question — drafts
// well, at no cost but a scan of the history; the generation loop checks a draft in one
// pass (generator.h), so a rejected one costs a wider pass, never a different token.
//
//   PromptLookup lookup{.draft_max = 8};
//   std::vector<TokenId> draft = draft_from_history(history, lookup, /*limit=*/8);
#pragma once

#include "runtime/core/status.h"
#include "runtime/tokenizer/token_id.h"

#include <cstdint>
#include <span>
#include <vector>

namespace pshard {

struct PromptLookup {
  int32_t draft_max = 0; // most tokens drafted per pass; 0: no speculative decoding
  int32_t ngram_min = 2; // shortest context suffix looked up
  int32_t ngram_max = 4; // longest, tried first
  // Check as many of a draft's tokens as pay by the measured pass times and acceptance
  // (draft_policy.h); false: all of them, up to draft_max.
  bool adaptive = true;
};

// kInvalidArgument naming the field: draft_max >= 0, 1 <= ngram_min <= ngram_max.
Status validate_prompt_lookup(const PromptLookup& lookup);

// The most drafted tokens the tools and the C API let one pass check: more rarely all
// match, and every one costs a row of logits per sequence.
inline constexpr int32_t kMaxDraftTokens = 64;
// What a draft model drafts per pass unless told (llama.cpp's --draft-max default).
inline constexpr int32_t kDefaultDraftMax = 16;
// kInvalidArgument unless 0 <= draft_max <= kMaxDraftTokens.
Status check_draft_max(int32_t draft_max);

// At most min(lookup.draft_max, limit) tokens; empty when nothing matches.
std::vector<TokenId> draft_from_history(std::span<const TokenId> history,
                                        const PromptLookup& lookup, int64_t limit);

} // namespace pshard
