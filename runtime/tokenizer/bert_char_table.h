// BertChar: what BERT's normalizer and pre-tokenizer make of one Unicode character —
// dropped, a space between words, a word of its own (punctuation, CJK ideographs) or
// part of a word — and its normalized form (NFD without non-spacing marks, lowercased:
// "É" -> "e", "Ⅻ" -> "ⅻ", "한" -> its three conjoining jamo).
//
// The rules (Hugging Face's BertNormalizer and BertPreTokenizer) are listed in
// tablegen/bert_char_table_gen.cpp, which computes them for every code point with ICU
// at build time; pshard itself needs no ICU at run time.
//
//   const BertChar c = BertChar::of(U'\u00C9');
//   if (c.kind() == BertCharKind::kWord) c.append_to(word);   // word += "e"
#pragma once

#include <cstdint>
#include <string>

namespace pshard {

enum class BertCharKind : uint8_t {
  kDropped = 0,  // controls, format characters, private use, NUL, U+FFFD, lone marks
  kSpace = 1,    // White_Space: ends the word before it
  kIsolated = 2, // punctuation or a CJK ideograph: a word by itself
  kWord = 3,     // anything else: part of a word
  // (The table's kind 4, a Hangul syllable, is reported as kWord.)
};

class BertChar {
public:
  // Any value: one past U+10FFFF and beyond are dropped.
  static BertChar of(char32_t c);

  BertCharKind kind() const { return kind_; }
  // Appends the normalized form (UTF-8) to `out`; nothing for kDropped and kSpace.
  void append_to(std::string& out) const;

  // The Unicode version of the generated table (ICU's at build time), e.g. "15.0".
  static const char* unicode_version();

private:
  BertChar(char32_t c, uint16_t rule);

  char32_t c_;
  uint16_t rule_;
  BertCharKind kind_;
};

} // namespace pshard
