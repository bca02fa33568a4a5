// UgmNormalizer: SentencePiece's text normalization before Unigram segmentation
// (XLM-RoBERTa, T5), with the options its models carry:
//   1. the longest charsmap rule at each place replaces what it matches
//      (precompiled_charsmap); where none applies, one UTF-8 character is kept as it
//      is, and a malformed byte becomes U+FFFD;
//   2. remove_extra_whitespaces: spaces at the start are dropped, a run of them in the
//      middle becomes one (a replacement's own leading spaces count), and the end loses
//      every "▁" — even one the text itself held;
//   3. add_dummy_prefix (tokenizer.ggml.add_space_prefix): a "▁" in front;
//   4. every space becomes "▁" (U+2581).
//
//   UgmNormalizer n(std::move(charsmap), {.dummy_prefix = true, .remove_extra_whitespaces = true});
//   n.normalize("  Ｈｅｌｌｏ   world ");   // "▁Hello▁world"
#pragma once

#include "runtime/tokenizer/precompiled_charsmap.h"

#include <string>
#include <string_view>

namespace pshard {

struct UgmNormalizerOptions {
  bool dummy_prefix = true;
  bool remove_extra_whitespaces = true;
};

class UgmNormalizer {
public:
  UgmNormalizer(PrecompiledCharsmap charsmap, UgmNormalizerOptions options)
      : charsmap_(std::move(charsmap)), options_(options) {}

  // Steps 1-4; an empty text stays empty.
  std::string normalize(std::string_view text) const;

private:
  // Step 1 at text[0]: the replacement and the bytes it consumes (at least 1).
  CharsmapMatch normalize_prefix(std::string_view text) const;

  PrecompiledCharsmap charsmap_;
  UgmNormalizerOptions options_;
};

} // namespace pshard
