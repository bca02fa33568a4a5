#include "runtime/tokenizer/byte_unicode.h"

#include "runtime/tokenizer/utf8.h"

#include <array>

namespace pshard {
namespace {

constexpr bool stands_for_itself(int byte) {
  return (byte >= '!' && byte <= '~') || (byte >= 0xA1 && byte <= 0xAC) ||
         (byte >= 0xAE && byte <= 0xFF);
}

// The highest code point of the alphabet: U+0100 + the 68 remapped bytes - 1.
constexpr char32_t kLastCodePoint = 0x100 + 68 - 1;

struct Tables {
  std::array<char32_t, 256> code_point{};
  std::array<int16_t, kLastCodePoint + 1> byte{};
  std::array<std::string, 256> utf8; // the UTF-8 of code_point[b], 1 or 2 bytes
};

Tables make_tables() {
  Tables t;
  t.byte.fill(-1);
  char32_t next = 0x100;
  for (int b = 0; b < 256; ++b) {
    const char32_t cp = stands_for_itself(b) ? static_cast<char32_t>(b) : next++;
    t.code_point[b] = cp;
    t.byte[cp] = static_cast<int16_t>(b);
    append_utf8(cp, t.utf8[b]);
  }
  return t;
}

const Tables& tables() {
  static const Tables t = make_tables();
  return t;
}

} // namespace

char32_t byte_level_code_point(uint8_t byte) { return tables().code_point[byte]; }

int byte_of_code_point(char32_t code_point) {
  return code_point <= kLastCodePoint ? tables().byte[code_point] : -1;
}

void append_byte_level(std::string_view bytes, std::string& out) {
  const Tables& t = tables();
  for (char c : bytes)
    out += t.utf8[static_cast<unsigned char>(c)];
}

bool append_from_byte_level(std::string_view text, std::string& out) {
  bool all_in_alphabet = true;
  for (size_t pos = 0; pos < text.size();) {
    size_t length = 0;
    const char32_t cp = decode_utf8(text, pos, &length);
    const int byte = length > 0 ? byte_of_code_point(cp) : -1;
    if (byte >= 0) {
      out.push_back(static_cast<char>(byte));
    } else {
      all_in_alphabet = false;
      length = length > 0 ? length : 1;
      out.append(text.substr(pos, length));
    }
    pos += length;
  }
  return all_in_alphabet;
}

} // namespace pshard
