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
