// Which tokens' text holds any of some strings: the DRY sampler's sequence breakers
// (runtime/sampler/dry_penalty.h) are given as text ("\n", ":") and apply to every token
// whose piece contains one, "\n\n" and ".\n" as well as "\n".
#pragma once

#include "runtime/tokenizer/tokenizer.h"

#include <span>
#include <string>
#include <vector>

namespace pshard {

// Indexed by token id, n_vocab() long: true where token_to_piece() holds any of `texts`
// (empty strings match nothing). Control tokens, whose piece is empty, never match.
std::vector<bool> tokens_containing(const Tokenizer& tokenizer, std::span<const std::string> texts);

} // namespace pshard
