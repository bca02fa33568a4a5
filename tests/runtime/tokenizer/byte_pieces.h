// Test helper: SentencePiece's 256 byte-fallback tokens, "<0x00>" .. "<0xFF>" (type
// kByte), for in-memory vocabularies (the tokenizer and fuzz tests).
#pragma once

#include "runtime/tokenizer/vocabulary.h"

#include <cstdio>

namespace pshard::testing_vocab {

inline void append_byte_pieces(Vocabulary& vocab) {
  for (int b = 0; b < 256; ++b) {
    char text[8];
    std::snprintf(text, sizeof(text), "<0x%02X>", b);
    vocab.tokens.push_back({text, 0.0f, TokenType::kByte});
  }
}

} // namespace pshard::testing_vocab
