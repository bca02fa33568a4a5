// Test helper: a token's id by its text, failing the test when there is none.
#pragma once

#include "runtime/tokenizer/tokenizer.h"
#include "runtime/tokenizer/vocabulary.h"

#include <gtest/gtest.h>
#include <string_view>

namespace pshard::testing_vocab {

inline TokenId id_of(const Tokenizer& tok, std::string_view text) {
  const auto& tokens = tok.vocabulary().tokens;
  for (size_t i = 0; i < tokens.size(); ++i)
    if (tokens[i].text == text)
      return static_cast<TokenId>(i);
  ADD_FAILURE() << "no token " << text;
  return kNoToken;
}

} // namespace pshard::testing_vocab
