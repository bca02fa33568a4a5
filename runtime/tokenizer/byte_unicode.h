// GPT-2's byte-level alphabet: every byte stands for one printable code point,
// so byte-level BPE vocabularies can store arbitrary bytes as text.
//
// Bytes that are already printable Latin-1 ('!'..'~', U+00A1..U+00AC,
// U+00AE..U+00FF) stand for themselves; the other 68 (controls, the space,
// DEL..U+00A0 and the soft hyphen U+00AD) take U+0100.. in byte order, so the
// space is "Ġ" (U+0120) and the newline "Ċ" (U+010A):
//
//   std::string word;
//   append_byte_level(" hi\n", word);        // "ĠhiĊ"
//   std::string bytes;
//   append_from_byte_level(word, bytes);     // " hi\n"
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace pshard {

// The code point that stands for `byte`.
char32_t byte_level_code_point(uint8_t byte);

// The byte `code_point` stands for, or -1 when it is not in the alphabet.
int byte_of_code_point(char32_t code_point);

// Appends the byte-level text of `bytes` (always valid UTF-8).
void append_byte_level(std::string_view bytes, std::string& out);

// Appends the bytes a byte-level text stands for. Characters outside the
// alphabet (and malformed UTF-8) are copied through unchanged, and the result is
// false, so that a vocabulary with odd entries still shows something.
bool append_from_byte_level(std::string_view text, std::string& out);

} // namespace pshard
