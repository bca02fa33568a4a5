// BpeMerges: the merge table of a byte-level BPE vocabulary, keyed by symbol
// ids instead of strings so that merging never builds or hashes text.
//
// A symbol is a string BPE can produce: every token text (its symbol id is its
// token id) and every part or result of a merge that is not a token (ids from
// n_vocab up). tokenizer.ggml.merges[r] = "left right" says that the adjacent
// symbols left and right become the symbol left+right, with priority r (lower
// first); the parts are split at the first space after the first byte, so a
// part may itself start with a space.
//
//   BpeMerges merges;
//   PSHARD_RETURN_IF_ERROR(merges.build(vocab));
//   int32_t a = merges.byte_symbol('h'), b = merges.byte_symbol('i');
//   if (const BpeMerges::Merge* m = merges.find(a, b)) ... m->rank, m->result ...
#pragma once

#include "runtime/core/status.h"
#include "runtime/tokenizer/token_id.h"
#include "runtime/tokenizer/vocabulary.h"

#include <array>
#include <cstdint>
#include <deque>
#include <string>
#include <string_view>
#include <unordered_map>

namespace pshard {

class BpeMerges {
public:
  static constexpr int32_t kNoSymbol = -1;
  struct Merge {
    int32_t rank;
    int32_t result; // the merged symbol
  };

  BpeMerges() = default;
  // The table keeps views into `vocab`, which must stay where it is.
  BpeMerges(const BpeMerges&) = delete;
  BpeMerges& operator=(const BpeMerges&) = delete;

  // Reads vocab.merges. A merge without a space between its parts gives
  // kInvalidFormat naming its index.
  Status build(const Vocabulary& vocab);

  // The symbol of a text, or kNoSymbol.
  int32_t symbol(std::string_view text) const;
  // The symbol of the one-character byte-level text of `byte` (kNoSymbol when
  // the vocabulary lacks it).
  int32_t byte_symbol(uint8_t byte) const { return byte_symbols_[byte]; }
  // The merge of two adjacent symbols, or nullptr.
  const Merge* find(int32_t left, int32_t right) const;
  // The token whose text a symbol is, or kNoToken.
  TokenId token(int32_t symbol) const {
    return symbol >= 0 && symbol < n_tokens_ ? symbol : kNoToken;
  }
  // A symbol's text.
  std::string_view text(int32_t symbol) const;

  size_t size() const { return merges_.size(); }

private:
  int32_t intern(std::string_view text); // the symbol of `text`, made if new

  const Vocabulary* vocab_ = nullptr;
  int32_t n_tokens_ = 0;
  std::unordered_map<std::string_view, int32_t> symbols_; // views into vocab or extra_texts_
  std::deque<std::string> extra_texts_;                   // symbols past the vocabulary
  std::unordered_map<uint64_t, Merge> merges_;            // (left << 32 | right) -> merge
  std::array<int32_t, 256> byte_symbols_{};
};

} // namespace pshard
