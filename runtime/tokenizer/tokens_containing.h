// Which tokens' text holds any of some strings: the DRY sampler's sequence breakers
// (runtime/sampler/dry_penalty.h) are given as text ("\n", ":") and apply to every token
// whose piece contains one, "\n\n" and ".\n" as well as "\n".
#pragma once

#include "runtime/tokenizer/tokenizer.h"

#include <span>
#include <string>
#include <utility>
#include <vector>

namespace pshard {

// Indexed by token id, n_vocab() long: true where token_to_piece() holds any of `texts`
// (empty strings match nothing). Control tokens, whose piece is empty, never match.
std::vector<bool> tokens_containing(const Tokenizer& tokenizer, std::span<const std::string> texts);

// Where one of `texts` may begin inside a token and go on in the next ones (a name the
// vocabulary spells "Ser" "aph" "ina"): each token whose piece ends with a proper
// beginning of a text, without holding a whole one, and the rest of that text (one pair
// per beginning it ends with), sorted by token.
std::vector<std::pair<TokenId, std::string>> tokens_starting(const Tokenizer& tokenizer,
                                                             std::span<const std::string> texts);

// Both of the above, in one pass over the vocabulary (what a request's own DRY breakers
// need).
struct TokensOfTexts {
  std::vector<bool> containing;
  std::vector<std::pair<TokenId, std::string>> starting;
};
TokensOfTexts tokens_of_texts(const Tokenizer& tokenizer, std::span<const std::string> texts);

} // namespace pshard
