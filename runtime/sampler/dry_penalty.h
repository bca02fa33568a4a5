// DRY, "don't repeat yourself" (P. E. W.'s sampler, text-generation-webui 2024; llama.cpp's
// --dry-* flags and llama-server's dry_* fields): a token that would extend a sequence of
// tokens the text already holds loses multiplier x base^(n - allowed_length) of its logit,
// where n >= allowed_length is the length of the longest such repeat. Unlike the
// repetition penalties it leaves single tokens alone and grows with the repeat, so a
// model may reuse words but not loop over sentences.
//
// A repeat never runs across a sequence breaker (a token whose text holds "\n", ":", "\""
// or "*" by default): formats whose lines start the same way ("Name: ...") stay free.
#pragma once

#include "runtime/sampler/candidate.h"
#include "runtime/tokenizer/token_id.h"

#include <array>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace pshard {

struct DryParams {
  float multiplier = 0.0f;     // 0 = off
  float base = 1.75f;          // >= 1
  int32_t allowed_length = 2;  // repeats shorter than this are free; >= 1
  int32_t penalty_last_n = -1; // how far back repeats are looked for; -1 = all, 0 = off
};

// llama.cpp's default sequence breakers.
inline constexpr std::array<std::string_view, 4> kDefaultDrySequenceBreakers = {"\n", ":", "\"",
                                                                                "*"};
inline std::vector<std::string> default_dry_sequence_breakers() {
  return {kDefaultDrySequenceBreakers.begin(), kDefaultDrySequenceBreakers.end()};
}

// Sequence breakers that span tokens (a name the vocabulary spells "Ser" "aph" "ina"):
// each token whose text ends with a breaker's beginning, sorted by token, with the rest of
// that breaker (runtime/tokenizer/tokens_containing.h: tokens_starting), and the tokens'
// texts, to read what follows one. A breaker held whole by one token is in the per-token
// mask instead.
struct DrySpans {
  std::vector<std::pair<TokenId, std::string>> starts;
  std::function<std::string(TokenId)> piece;
};

// The largest penalty, so that a long loop's token gets a finite (if prohibitive) logit.
inline constexpr double kMaxDryPenalty = 1e30;

class DryPenalty {
public:
  // Subtracts each token's penalty from its candidate's logit. With `by_id`, candidates
  // is indexed by token id (tokens past it are skipped), O(window) time; else it is any
  // set in any order, each looked up among the repeats. `breakers`, indexed by token id,
  // marks the sequence breakers (null or shorter: none past its end); `spans` (may be
  // null), those that span tokens.
  void apply(const DryParams& params, const std::vector<bool>* breakers,
             std::span<const TokenId> history, std::span<Candidate> candidates, bool by_id,
             const DrySpans* spans = nullptr);

  // The longest repeat each token would extend, for those of at least allowed_length
  // (what apply() penalises), as (token, length) sorted by token; exposed for tests.
  const std::vector<std::pair<TokenId, int32_t>>& repeats(const DryParams& params,
                                                          const std::vector<bool>* breakers,
                                                          std::span<const TokenId> history,
                                                          const DrySpans* spans = nullptr);

private:
  std::vector<TokenId> reversed_;
  std::vector<int32_t> z_;
  std::vector<std::pair<TokenId, int32_t>> hits_;
};

} // namespace pshard
