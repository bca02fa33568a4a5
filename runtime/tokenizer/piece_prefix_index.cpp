#include "runtime/tokenizer/piece_prefix_index.h"

#include <algorithm>

namespace pshard {
namespace {

// Bytes compared unsigned, so the order is the order of UTF-8 code points; a text that
// ends before `depth` sorts before every byte.
int byte_at(std::string_view text, size_t depth) {
  return depth < text.size() ? static_cast<unsigned char>(text[depth]) : -1;
}

bool bytes_less(std::string_view a, std::string_view b) {
  return std::lexicographical_compare(a.begin(), a.end(), b.begin(), b.end(), [](char x, char y) {
    return static_cast<unsigned char>(x) < static_cast<unsigned char>(y);
  });
}

} // namespace

PiecePrefixIndex::PiecePrefixIndex(std::vector<std::pair<std::string_view, TokenId>> pieces)
    : pieces_(std::move(pieces)) {
  std::erase_if(pieces_, [](const auto& p) { return p.first.empty(); });
  std::sort(pieces_.begin(), pieces_.end(), [](const auto& a, const auto& b) {
    return bytes_less(a.first, b.first) || (a.first == b.first && a.second < b.second);
  });
  pieces_.erase(std::unique(pieces_.begin(), pieces_.end(),
                            [](const auto& a, const auto& b) { return a.first == b.first; }),
                pieces_.end());
}

void PiecePrefixIndex::narrow(size_t depth, unsigned char byte, size_t& lo, size_t& hi) const {
  const auto first = pieces_.begin() + static_cast<std::ptrdiff_t>(lo);
  const auto last = pieces_.begin() + static_cast<std::ptrdiff_t>(hi);
  const auto from = std::partition_point(
      first, last, [&](const auto& p) { return byte_at(p.first, depth) < byte; });
  const auto to = std::partition_point(
      from, last, [&](const auto& p) { return byte_at(p.first, depth) == byte; });
  lo = static_cast<size_t>(from - pieces_.begin());
  hi = static_cast<size_t>(to - pieces_.begin());
}

} // namespace pshard
