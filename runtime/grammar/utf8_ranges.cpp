#include "runtime/grammar/utf8_ranges.h"

#include <array>

namespace pshard {
namespace {

constexpr char32_t kSurrogateFirst = 0xD800;
constexpr char32_t kSurrogateLast = 0xDFFF;
// The largest code point of each encoded length.
constexpr std::array<char32_t, 3> kLengthEnds = {0x7F, 0x7FF, 0xFFFF};

int encoded_length(char32_t c) { return c <= 0x7F ? 1 : c <= 0x7FF ? 2 : c <= 0xFFFF ? 3 : 4; }

std::array<uint8_t, 4> encode(char32_t c, int n) {
  std::array<uint8_t, 4> b{};
  static constexpr std::array<uint8_t, 5> kLead = {0, 0x00, 0xC0, 0xE0, 0xF0};
  for (int i = n - 1; i > 0; --i) {
    b[i] = static_cast<uint8_t>(0x80 | (c & 0x3F));
    c >>= 6;
  }
  b[0] = static_cast<uint8_t>(kLead[n] | c);
  return b;
}

// Splits [lo, hi] until each piece is a product of per-byte ranges: same encoded
// length, and for every suffix of k continuation bytes either the whole 64^k block
// or a part of one block.
void split(char32_t lo, char32_t hi, std::vector<Utf8Sequence>& out) {
  if (lo > hi)
    return;
  if (lo <= kSurrogateLast && hi >= kSurrogateFirst) {
    if (lo < kSurrogateFirst)
      split(lo, kSurrogateFirst - 1, out);
    if (hi > kSurrogateLast)
      split(kSurrogateLast + 1, hi, out);
    return;
  }
  for (char32_t end : kLengthEnds)
    if (lo <= end && hi > end) {
      split(lo, end, out);
      split(end + 1, hi, out);
      return;
    }
  const int n = encoded_length(lo);
  for (int i = 1; i < n; ++i) {
    const char32_t block = (char32_t{1} << (6 * i)) - 1;
    if ((lo & ~block) == (hi & ~block))
      continue; // both ends in one block of this size: the lower bytes are a plain range
    if ((lo & block) != 0) {
      split(lo, lo | block, out);
      split((lo | block) + 1, hi, out);
      return;
    }
    if ((hi & block) != block) {
      split(lo, (hi & ~block) - 1, out);
      split(hi & ~block, hi, out);
      return;
    }
  }
  const auto a = encode(lo, n);
  const auto b = encode(hi, n);
  Utf8Sequence seq;
  for (int i = 0; i < n; ++i)
    seq.emplace_back(a[i], b[i]);
  out.push_back(std::move(seq));
}

} // namespace

std::vector<Utf8Sequence> utf8_sequences(char32_t first, char32_t last) {
  std::vector<Utf8Sequence> out;
  split(first, last > 0x10FFFF ? 0x10FFFF : last, out);
  return out;
}

} // namespace pshard
