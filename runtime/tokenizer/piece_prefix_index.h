// PiecePrefixIndex: every vocabulary piece that a text starts with, shortest first, for
// tokenizers that try all of them at each place (Unigram's Viterbi search). Pieces are
// kept sorted by their bytes; each further byte of the text narrows the range of pieces
// that share the text's prefix, so a search ends as soon as no piece continues it.
//
//   PiecePrefixIndex index(texts_and_ids);
//   index.for_each_prefix("\xE2\x96\x81hello", [](size_t length, TokenId id) { ... });
#pragma once

#include "runtime/tokenizer/token_id.h"

#include <string_view>
#include <utility>
#include <vector>

namespace pshard {

class PiecePrefixIndex {
public:
  // (text, id) pairs; the texts are views that must outlive the index. Of pieces with
  // the same text the lowest id is kept; empty texts are left out.
  explicit PiecePrefixIndex(std::vector<std::pair<std::string_view, TokenId>> pieces);

  // Calls found(length, id) for each piece equal to text.substr(0, length), by
  // increasing length.
  template <typename Found> void for_each_prefix(std::string_view text, Found&& found) const {
    size_t lo = 0, hi = pieces_.size();
    for (size_t depth = 0; depth < text.size() && lo < hi; ++depth) {
      narrow(depth, static_cast<unsigned char>(text[depth]), lo, hi);
      // The range's pieces share depth + 1 bytes with the text; the one of exactly that
      // length, if any, sorts first.
      if (lo < hi && pieces_[lo].first.size() == depth + 1)
        found(depth + 1, pieces_[lo].second);
    }
  }

  size_t size() const { return pieces_.size(); }

private:
  // Narrows [lo, hi), whose pieces share `depth` bytes, to those whose next byte is `byte`.
  void narrow(size_t depth, unsigned char byte, size_t& lo, size_t& hi) const;

  std::vector<std::pair<std::string_view, TokenId>> pieces_; // by bytes, unsigned
};

} // namespace pshard
