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
#include <vector>

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

  size_t size() const { return n_merges_; }

private:
  // Both indexes are open-addressed arrays rather than std::unordered_map: a 150K-token
  // vocabulary makes ~300K symbols and 150K merges, and a node a key (an allocation to
  // build, a pointer chase more to look up) was most of loading it.
  struct SymbolSlot {
    uint32_t hash = 0;          // the text's hash_tag
    int32_t symbol = kNoSymbol; // kNoSymbol: empty
  };
  struct MergeSlot {
    uint64_t pair = 0;          // left << 32 | right
    Merge merge{-1, kNoSymbol}; // rank -1: empty
  };

  int32_t intern(std::string_view text); // the symbol of `text`, made if new
  // The slot holding `text` or, when absent, the empty slot where it belongs.
  SymbolSlot& symbol_slot(std::string_view text, uint64_t hash);
  const SymbolSlot& symbol_slot(std::string_view text, uint64_t hash) const;
  void add_symbol(std::string_view text, int32_t symbol); // a repeated text takes `symbol`
  void grow_symbols();
  MergeSlot& merge_slot(uint64_t pair);
  const MergeSlot& merge_slot(uint64_t pair) const;

  const Vocabulary* vocab_ = nullptr;
  int32_t n_tokens_ = 0;
  std::vector<SymbolSlot> symbol_slots_; // a power of two, at most half full
  size_t n_symbols_ = 0;
  std::deque<std::string> extra_texts_; // symbols past the vocabulary
  std::vector<MergeSlot> merge_slots_;  // a power of two, at most half full
  size_t n_merges_ = 0;
  std::array<int32_t, 256> byte_symbols_{};
};

} // namespace pshard
