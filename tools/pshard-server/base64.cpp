#include "tools/pshard-server/base64.h"

#include <algorithm>
#include <array>

namespace pshard::server {
namespace {

// 0-63 for the alphabet, -1 for anything else.
constexpr std::array<int8_t, 256> base64_values() {
  std::array<int8_t, 256> v{};
  v.fill(-1);
  constexpr std::string_view alphabet =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  for (size_t i = 0; i < alphabet.size(); ++i)
    v[static_cast<uint8_t>(alphabet[i])] = static_cast<int8_t>(i);
  return v;
}

} // namespace

std::optional<std::vector<uint8_t>> decode_base64(std::string_view text) {
  static constexpr std::array<int8_t, 256> kValues = base64_values();
  while (!text.empty() && text.back() == '=')
    text.remove_suffix(1);
  if (text.size() % 4 == 1)
    return std::nullopt; // one leftover character carries no whole byte
  std::vector<uint8_t> out;
  out.reserve(text.size() * 3 / 4);
  uint32_t bits = 0;
  int n_bits = 0;
  for (char c : text) {
    const int8_t v = kValues[static_cast<uint8_t>(c)];
    if (v < 0)
      return std::nullopt;
    bits = (bits << 6) | static_cast<uint32_t>(v);
    n_bits += 6;
    if (n_bits >= 8) {
      n_bits -= 8;
      out.push_back(static_cast<uint8_t>(bits >> n_bits));
    }
  }
  return out;
}


std::string encode_base64(std::span<const uint8_t> bytes) {
  static constexpr std::string_view kAlphabet =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  for (size_t i = 0; i < bytes.size(); i += 3) {
    const size_t n = std::min<size_t>(3, bytes.size() - i);
    uint32_t group = 0;
    for (size_t k = 0; k < 3; ++k)
      group = (group << 8) | (k < n ? bytes[i + k] : 0u);
    for (size_t k = 0; k < 4; ++k)
      out.push_back(k <= n ? kAlphabet[(group >> (18 - 6 * k)) & 63] : '=');
  }
  return out;
}

} // namespace pshard::server
