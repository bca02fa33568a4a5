// Test helpers: small SentencePiece Unigram ("t5") vocabularies in memory, shared by
// ugm_tokenizer_test.cpp and the tokenizer fuzz target.
#pragma once

#include "runtime/tokenizer/vocabulary.h"
#include "tests/runtime/tokenizer/byte_pieces.h"

#include <cstdint>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

namespace pshard::testing_vocab {

// <s> <pad> </s> <unk> (XLM-RoBERTa's order), optionally the 256 byte tokens, then
// `pieces` (text, score) as normal tokens. Extra whitespace removed, a dummy prefix.
inline Vocabulary unigram_vocab(const std::vector<std::pair<std::string, float>>& pieces,
                                bool with_bytes = false) {
  Vocabulary vocab;
  vocab.model = "t5";
  vocab.tokens = {{"<s>", 0.0f, TokenType::kControl},
                  {"<pad>", 0.0f, TokenType::kControl},
                  {"</s>", 0.0f, TokenType::kControl},
                  {"<unk>", 0.0f, TokenType::kUnknown}};
  vocab.bos_id = 0;
  vocab.eos_id = 2;
  vocab.unk_id = 3;
  vocab.add_eos = true;
  vocab.remove_extra_whitespaces = true;
  if (with_bytes)
    append_byte_pieces(vocab);
  for (const auto& [text, score] : pieces)
    vocab.tokens.push_back({text, score, TokenType::kNormal});
  return vocab;
}

// A two-rule charsmap built by hand in darts-clone's layout: "A" -> "a", "AB" -> "ab".
// Units: the root's offset is 1, so "A" (0x41) is unit 1 ^ 0x41 = 64; its leaf is unit
// 64 ^ 1 = 65; "B" (0x42) after it is unit 65 ^ 0x42 = 3, whose leaf is unit 3 ^ 1 = 2.
inline std::string hand_built_charsmap() {
  std::vector<uint32_t> units(66, 0);
  const uint32_t offset_1 = 1u << 10, has_leaf = 1u << 8, value = 1u << 31;
  units[0] = offset_1;
  units[64] = 0x41 | has_leaf | offset_1;
  units[65] = value | 0; // "a" at 0 in the strings
  units[3] = 0x42 | has_leaf | offset_1;
  units[2] = value | 2; // "ab" at 2
  std::string blob(4, '\0');
  const uint32_t bytes = static_cast<uint32_t>(units.size() * 4);
  std::memcpy(blob.data(), &bytes, 4);
  blob.append(reinterpret_cast<const char*>(units.data()), bytes);
  blob.append("a\0ab\0", 5);
  return blob;
}

} // namespace pshard::testing_vocab
