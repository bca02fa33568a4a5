// PrecompiledCharsmap: SentencePiece's normalization rules in the compiled form its
// models carry (NormalizerSpec.precompiled_charsmap; GGUF's
// tokenizer.ggml.precompiled_charsmap), as XLM-RoBERTa's and T5's vocabularies have them
// (nmt_nfkc: NFKC plus the NMT clean-ups).
//
// The blob is a little-endian uint32 byte count of a double-array trie (darts-clone's
// layout: 32-bit units holding an XOR offset, a label byte and a leaf flag), the trie,
// then the replacement strings, each ending in NUL. The trie maps byte strings to an
// offset into those strings.
//
//   PSHARD_ASSIGN_OR_RETURN(PrecompiledCharsmap map, PrecompiledCharsmap::parse(blob));
//   CharsmapMatch m = map.longest_match("\xEF\xBC\xA1bc");   // "Ａbc": {"A", 3}
#pragma once

#include "runtime/core/status.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace pshard {

struct CharsmapMatch {
  std::string_view replacement; // a view into the charsmap
  size_t consumed = 0;          // bytes of the input matched; 0: no rule applies
};

class PrecompiledCharsmap {
public:
  // An empty blob is the empty map (no rules). kInvalidFormat, naming what is wrong, for
  // a blob too short for its trie, a trie whose size is not whole units, or replacement
  // strings that do not end with NUL.
  static Result<PrecompiledCharsmap> parse(std::string_view blob);

  PrecompiledCharsmap() = default;
  bool empty() const { return units_.empty(); }

  // The rule of the longest key that `text` starts with. A malformed trie (an index out
  // of range) ends the search there; it never reads outside the blob.
  CharsmapMatch longest_match(std::string_view text) const;

private:
  std::vector<uint32_t> units_;
  std::string replacements_; // NUL-terminated strings, one after another
};

} // namespace pshard
