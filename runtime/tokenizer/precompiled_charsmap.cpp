#include "runtime/tokenizer/precompiled_charsmap.h"

#include <cstring>

namespace pshard {
namespace {

// A darts-clone unit: bits 0-7 the label (bit 31 set too on a value unit, so it never
// equals a byte), bit 8 "has a leaf", bit 9 "offset scaled by 256", bits 10-30 the offset.
uint32_t unit_offset(uint32_t unit) { return (unit >> 10) << ((unit & (1u << 9)) >> 6); }
uint32_t unit_label(uint32_t unit) { return unit & ((1u << 31) | 0xFFu); }
bool unit_has_leaf(uint32_t unit) { return ((unit >> 8) & 1u) != 0; }
uint32_t unit_value(uint32_t unit) { return unit & ((1u << 31) - 1); }

} // namespace

Result<PrecompiledCharsmap> PrecompiledCharsmap::parse(std::string_view blob) {
  PrecompiledCharsmap map;
  if (blob.empty())
    return map;
  uint32_t trie_bytes = 0;
  if (blob.size() < sizeof trie_bytes)
    return invalid_format("tokenizer.ggml.precompiled_charsmap has " + std::to_string(blob.size()) +
                          " bytes, too few for its 4-byte trie size");
  std::memcpy(&trie_bytes, blob.data(), sizeof trie_bytes);
  const size_t after_trie = sizeof trie_bytes + static_cast<size_t>(trie_bytes);
  if (trie_bytes == 0 || trie_bytes % sizeof(uint32_t) != 0 || after_trie >= blob.size())
    return invalid_format("tokenizer.ggml.precompiled_charsmap names a trie of " +
                          std::to_string(trie_bytes) + " bytes in a blob of " +
                          std::to_string(blob.size()) +
                          " (it must be whole 4-byte units followed by the replacement strings): "
                          "convert the model again");
  if (blob.back() != '\0')
    return invalid_format("tokenizer.ggml.precompiled_charsmap's replacement strings do not end "
                          "with NUL: the blob is truncated or not SentencePiece's");
  map.units_.resize(trie_bytes / sizeof(uint32_t));
  std::memcpy(map.units_.data(), blob.data() + sizeof trie_bytes, trie_bytes);
  map.replacements_.assign(blob.substr(after_trie));
  return map;
}

CharsmapMatch PrecompiledCharsmap::longest_match(std::string_view text) const {
  CharsmapMatch best;
  if (units_.empty())
    return best;
  size_t node = unit_offset(units_[0]);
  for (size_t i = 0; i < text.size(); ++i) {
    const auto byte = static_cast<unsigned char>(text[i]);
    node ^= byte;
    if (node >= units_.size())
      break;
    const uint32_t unit = units_[node];
    if (unit_label(unit) != byte)
      break;
    node ^= unit_offset(unit);
    if (!unit_has_leaf(unit))
      continue;
    if (node >= units_.size())
      break;
    const size_t at = unit_value(units_[node]);
    if (at >= replacements_.size())
      break; // the pool ends with NUL, so a string starting inside it ends inside it
    best.replacement = std::string_view(replacements_.data() + at);
    best.consumed = i + 1;
  }
  return best;
}

} // namespace pshard
