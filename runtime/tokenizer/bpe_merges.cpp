#include "runtime/tokenizer/bpe_merges.h"

#include "runtime/tokenizer/byte_unicode.h"

#include <algorithm>
#include <bit>
#include <functional>
#include <utility>

namespace pshard {
namespace {

uint64_t pair_key(int32_t left, int32_t right) {
  return (static_cast<uint64_t>(static_cast<uint32_t>(left)) << 32) | static_cast<uint32_t>(right);
}

uint64_t hash_text(std::string_view text) { return std::hash<std::string_view>{}(text); }
// What a slot keeps of a text's hash to skip most comparisons: the high half, since the
// low bits pick the slot and are mostly alike along one probe.
uint32_t hash_tag(uint64_t hash) { return static_cast<uint32_t>(hash >> 32); }

// A pair's slot start: the ids are small and dense, so mix them before masking.
uint64_t hash_pair(uint64_t pair) {
  pair ^= pair >> 33;
  pair *= 0xff51afd7ed558ccdull;
  pair ^= pair >> 33;
  return pair;
}

// Room for `n` keys at most half full.
size_t slots_for(size_t n) { return std::bit_ceil(std::max<size_t>(2 * n, 16)); }

} // namespace

Status BpeMerges::build(const Vocabulary& vocab) {
  vocab_ = &vocab;
  n_tokens_ = vocab.size();
  extra_texts_.clear();
  symbol_slots_.assign(slots_for(vocab.tokens.size() + vocab.merges.size() / 8), SymbolSlot{});
  n_symbols_ = 0;
  merge_slots_.assign(slots_for(vocab.merges.size()), MergeSlot{});
  n_merges_ = 0;
  // Where texts repeat, the last token wins, as in llama.cpp.
  for (TokenId id = 0; id < vocab.size(); ++id)
    add_symbol(vocab.tokens[id].text, id);

  std::string joined;
  for (size_t rank = 0; rank < vocab.merges.size(); ++rank) {
    const std::string_view merge = vocab.merges[rank];
    const size_t space = merge.size() > 1 ? merge.find(' ', 1) : std::string_view::npos;
    if (space == std::string_view::npos)
      return invalid_format("tokenizer.ggml.merges[" + std::to_string(rank) + "] = \"" +
                            std::string(merge) +
                            "\" has no space between its two parts; each merge must be "
                            "\"left right\"");
    const std::string_view left = merge.substr(0, space);
    const std::string_view right = merge.substr(space + 1);
    joined.assign(left);
    joined.append(right);
    const int32_t l = intern(left);
    const int32_t r = intern(right);
    const int32_t result = intern(joined);
    // A pair listed twice keeps its first (highest-priority) rank.
    const uint64_t pair = pair_key(l, r);
    MergeSlot& slot = merge_slot(pair);
    if (slot.merge.rank < 0) {
      slot.pair = pair;
      slot.merge = Merge{static_cast<int32_t>(rank), result};
      ++n_merges_;
    }
  }

  for (int b = 0; b < 256; ++b) {
    std::string character;
    append_byte_level(std::string_view(reinterpret_cast<const char*>(&b), 1), character);
    byte_symbols_[b] = symbol(character);
  }
  return Status::ok_status();
}

const BpeMerges::SymbolSlot& BpeMerges::symbol_slot(std::string_view text, uint64_t hash) const {
  const size_t mask = symbol_slots_.size() - 1;
  for (size_t i = hash & mask;; i = (i + 1) & mask) {
    const SymbolSlot& slot = symbol_slots_[i];
    if (slot.symbol == kNoSymbol ||
        (slot.hash == hash_tag(hash) && this->text(slot.symbol) == text))
      return slot;
  }
}

BpeMerges::SymbolSlot& BpeMerges::symbol_slot(std::string_view text, uint64_t hash) {
  return const_cast<SymbolSlot&>(std::as_const(*this).symbol_slot(text, hash));
}

void BpeMerges::add_symbol(std::string_view text, int32_t symbol) {
  if (2 * (n_symbols_ + 1) > symbol_slots_.size())
    grow_symbols();
  const uint64_t hash = hash_text(text);
  SymbolSlot& slot = symbol_slot(text, hash);
  if (slot.symbol == kNoSymbol)
    ++n_symbols_;
  slot = SymbolSlot{hash_tag(hash), symbol};
}

void BpeMerges::grow_symbols() {
  std::vector<SymbolSlot> old = std::move(symbol_slots_);
  symbol_slots_.assign(2 * old.size(), SymbolSlot{});
  const size_t mask = symbol_slots_.size() - 1;
  for (const SymbolSlot& s : old) {
    if (s.symbol == kNoSymbol)
      continue;
    // Keys are distinct, so the first empty slot is the place; a slot keeps only the
    // hash's tag, so the text is hashed again for the start.
    size_t i = hash_text(text(s.symbol)) & mask;
    while (symbol_slots_[i].symbol != kNoSymbol)
      i = (i + 1) & mask;
    symbol_slots_[i] = s;
  }
}

int32_t BpeMerges::intern(std::string_view text) {
  if (const int32_t found = symbol(text); found != kNoSymbol)
    return found;
  const auto id = static_cast<int32_t>(n_tokens_ + extra_texts_.size());
  extra_texts_.emplace_back(text);
  add_symbol(extra_texts_.back(), id);
  return id;
}

int32_t BpeMerges::symbol(std::string_view text) const {
  if (symbol_slots_.empty())
    return kNoSymbol;
  return symbol_slot(text, hash_text(text)).symbol;
}

const BpeMerges::MergeSlot& BpeMerges::merge_slot(uint64_t pair) const {
  const size_t mask = merge_slots_.size() - 1;
  for (size_t i = hash_pair(pair) & mask;; i = (i + 1) & mask) {
    const MergeSlot& slot = merge_slots_[i];
    if (slot.merge.rank < 0 || slot.pair == pair)
      return slot;
  }
}

BpeMerges::MergeSlot& BpeMerges::merge_slot(uint64_t pair) {
  return const_cast<MergeSlot&>(std::as_const(*this).merge_slot(pair));
}

const BpeMerges::Merge* BpeMerges::find(int32_t left, int32_t right) const {
  if (left < 0 || right < 0 || merge_slots_.empty())
    return nullptr;
  const MergeSlot& slot = merge_slot(pair_key(left, right));
  return slot.merge.rank < 0 ? nullptr : &slot.merge;
}

std::string_view BpeMerges::text(int32_t symbol) const {
  if (symbol < 0)
    return {};
  if (symbol < n_tokens_)
    return vocab_->tokens[symbol].text;
  const size_t extra = static_cast<size_t>(symbol - n_tokens_);
  return extra < extra_texts_.size() ? std::string_view(extra_texts_[extra]) : std::string_view();
}

} // namespace pshard
