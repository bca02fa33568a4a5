#include "runtime/tokenizer/utf8.h"

namespace pshard {
namespace {

bool is_continuation(unsigned char byte) { return (byte & 0xC0) == 0x80; }

// Where the complete part of `bytes` ends: the start of a trailing sequence
// whose lead promises more bytes than have arrived, else bytes.size().
size_t complete_prefix_length(std::string_view bytes) {
  const size_t n = bytes.size();
  // A sequence is at most 4 bytes, so its lead is among the last 4.
  size_t continuation = 0;
  for (size_t i = n; i > 0 && n - i < 4; --i) {
    const auto byte = static_cast<unsigned char>(bytes[i - 1]);
    if (is_continuation(byte)) {
      ++continuation;
      continue;
    }
    const size_t expected = utf8_sequence_length(byte);
    return expected > continuation + 1 ? i - 1 : n;
  }
  return n; // only continuation bytes: malformed, nothing to wait for
}

} // namespace

size_t utf8_sequence_length(unsigned char lead) {
  if (lead < 0x80)
    return 1;
  if ((lead & 0xE0) == 0xC0)
    return 2;
  if ((lead & 0xF0) == 0xE0)
    return 3;
  if ((lead & 0xF8) == 0xF0)
    return 4;
  return 1;
}

char32_t decode_utf8(std::string_view text, size_t pos, size_t* length) {
  *length = 0;
  if (pos >= text.size())
    return 0;
  const auto lead = static_cast<unsigned char>(text[pos]);
  const size_t n = utf8_sequence_length(lead);
  if (n == 1) {
    if (lead >= 0x80)
      return 0; // a stray continuation byte or 0xF8..0xFF
    *length = 1;
    return lead;
  }
  if (pos + n > text.size())
    return 0;
  char32_t cp = lead & (0xFF >> (n + 1));
  for (size_t i = 1; i < n; ++i) {
    const auto byte = static_cast<unsigned char>(text[pos + i]);
    if (!is_continuation(byte))
      return 0;
    cp = (cp << 6) | (byte & 0x3F);
  }
  // Overlong forms, surrogates and values past Unicode are not UTF-8.
  constexpr char32_t kSmallest[] = {0, 0, 0x80, 0x800, 0x10000};
  if (cp < kSmallest[n] || (cp >= 0xD800 && cp <= 0xDFFF) || cp > 0x10FFFF)
    return 0;
  *length = n;
  return cp;
}

bool is_valid_utf8(std::string_view text) {
  for (size_t pos = 0; pos < text.size();) {
    size_t length = 0;
    decode_utf8(text, pos, &length);
    if (length == 0)
      return false;
    pos += length;
  }
  return true;
}

void append_utf8(char32_t cp, std::string& out) {
  if (cp < 0x80) {
    out.push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out.push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out.push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out.push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

std::string Utf8StreamBuffer::push(std::string_view bytes) {
  pending_.append(bytes);
  const size_t cut = complete_prefix_length(pending_);
  std::string ready = pending_.substr(0, cut);
  pending_.erase(0, cut);
  return ready;
}

std::string Utf8StreamBuffer::flush() {
  std::string rest;
  rest.swap(pending_);
  return rest;
}

} // namespace pshard
