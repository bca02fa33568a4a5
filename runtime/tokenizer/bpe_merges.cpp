#include "runtime/tokenizer/bpe_merges.h"

#include "runtime/tokenizer/byte_unicode.h"

namespace pshard {
namespace {

uint64_t pair_key(int32_t left, int32_t right) {
  return (static_cast<uint64_t>(static_cast<uint32_t>(left)) << 32) | static_cast<uint32_t>(right);
}

} // namespace

Status BpeMerges::build(const Vocabulary& vocab) {
  vocab_ = &vocab;
  n_tokens_ = vocab.size();
  symbols_.clear();
  extra_texts_.clear();
  merges_.clear();
  symbols_.reserve(vocab.tokens.size() + vocab.merges.size() / 8);
  // Where texts repeat, the last token wins, as in llama.cpp.
  for (TokenId id = 0; id < vocab.size(); ++id)
    symbols_[vocab.tokens[id].text] = id;

  merges_.reserve(vocab.merges.size());
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
    merges_.try_emplace(pair_key(l, r), Merge{static_cast<int32_t>(rank), result});
  }

  for (int b = 0; b < 256; ++b) {
    std::string character;
    append_byte_level(std::string_view(reinterpret_cast<const char*>(&b), 1), character);
    byte_symbols_[b] = symbol(character);
  }
  return Status::ok_status();
}

int32_t BpeMerges::intern(std::string_view text) {
  if (const auto found = symbols_.find(text); found != symbols_.end())
    return found->second;
  const auto id = static_cast<int32_t>(n_tokens_ + extra_texts_.size());
  extra_texts_.emplace_back(text);
  symbols_.emplace(extra_texts_.back(), id);
  return id;
}

int32_t BpeMerges::symbol(std::string_view text) const {
  const auto found = symbols_.find(text);
  return found == symbols_.end() ? kNoSymbol : found->second;
}

const BpeMerges::Merge* BpeMerges::find(int32_t left, int32_t right) const {
  if (left < 0 || right < 0)
    return nullptr;
  const auto found = merges_.find(pair_key(left, right));
  return found == merges_.end() ? nullptr : &found->second;
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
