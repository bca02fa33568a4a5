// UTF-8 helpers for tokenizers and for streaming generated text.
//
// Byte-fallback tokens carry one raw byte each, so a character such as "½"
// (C2 BD) arrives in two pieces. Utf8StreamBuffer holds back an incomplete
// trailing sequence until the rest arrives:
//
//   Utf8StreamBuffer out;
//   for (TokenId id : generated) std::cout << out.push(tok.token_to_piece(id));
//   std::cout << out.flush();   // whatever is left, even if incomplete
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace pshard {

// Length of the UTF-8 sequence that starts with `lead`: 1..4, or 1 for a byte
// that cannot start a sequence (a stray continuation byte or 0xF8..0xFF), so
// that malformed text still splits into something.
size_t utf8_sequence_length(unsigned char lead);

// The code point of the well-formed UTF-8 sequence at text[pos] (shortest form,
// no surrogates, at most U+10FFFF) and its length in *length; 0 with *length =
// 0 when the bytes there are not one.
char32_t decode_utf8(std::string_view text, size_t pos, size_t* length);

// Whether `text` is whole, well-formed UTF-8 characters only.
bool is_valid_utf8(std::string_view text);

// Appends the UTF-8 encoding of `code_point` (which must be at most U+10FFFF).
void append_utf8(char32_t code_point, std::string& out);

class Utf8StreamBuffer {
public:
  // Appends bytes and returns the longest prefix of everything held that does
  // not end inside a UTF-8 sequence. Malformed bytes are passed through as they
  // are (they can never become complete, so holding them back would stall).
  std::string push(std::string_view bytes);
  // Returns and clears whatever is still held back.
  std::string flush();
  // Bytes held back, waiting for the rest of their character.
  size_t pending() const { return pending_.size(); }

private:
  std::string pending_;
};

} // namespace pshard
