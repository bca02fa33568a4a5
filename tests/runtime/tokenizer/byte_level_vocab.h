// Test helpers for byte-level BPE vocabularies built in memory (used by the
// tokenizer, generation and fuzz tests).
#pragma once

#include "runtime/tokenizer/byte_unicode.h"
#include "runtime/tokenizer/vocabulary.h"

#include <string>
#include <string_view>
#include <vector>

namespace pshard::testing_vocab {

// The byte-level text of raw bytes ("a b" -> "aĠb").
inline std::string byte_level(std::string_view raw) {
  std::string out;
  append_byte_level(raw, out);
  return out;
}

// The 256 byte-level characters as normal tokens in byte order, so that token b
// stands for byte b: what every byte-level BPE vocabulary starts with.
inline std::vector<TokenData> byte_level_alphabet() {
  std::vector<TokenData> tokens;
  for (int b = 0; b < 256; ++b)
    tokens.push_back({byte_level(std::string(1, static_cast<char>(b)))});
  return tokens;
}

} // namespace pshard::testing_vocab
