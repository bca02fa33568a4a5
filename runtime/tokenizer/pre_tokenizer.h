// PreTokenizer: cuts text into the pieces byte-level BPE encodes one at a time,
// with a list of regular expressions applied in turn. Each expression splits
// every piece the previous ones left into its matches and the text between
// them, keeping both (Hugging Face's Split pre-tokenizer with "Isolated"
// behaviour; llama.cpp's unicode_regex_split). An expression sees one piece as
// its whole subject, so `$` and `(?!\S)` stop at the piece's end.
//
//   PSHARD_ASSIGN_OR_RETURN(PreTokenizer pre, PreTokenizer::create(patterns));
//   std::vector<std::string_view> pieces;
//   pre.split("Hello  world", pieces);          // "Hello", " ", " world" (GPT-2)
//
// The expressions run on PCRE2 (UTF, Unicode properties for \p{L}, \p{N} ...,
// JIT-compiled). \s and \S mean Unicode's White_Space property, as in
// tokenizer.json's Oniguruma and in llama.cpp (PCRE2's own \s adds U+180E).
// Bytes that are not UTF-8 never match anything, so they end up in the pieces
// between matches and no byte of the text is ever lost. A PreTokenizer is
// immutable after create(): split() may run on several threads at once.
#pragma once

#include "runtime/core/status.h"

#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace pshard {

class PreTokenizer {
public:
  // Compiles every pattern; a pattern PCRE2 rejects gives kInvalidArgument
  // naming it, the offset and PCRE2's reason.
  static Result<PreTokenizer> create(std::span<const std::string_view> patterns);

  PreTokenizer(PreTokenizer&&) noexcept;
  PreTokenizer& operator=(PreTokenizer&&) noexcept;
  ~PreTokenizer();

  // Appends the pieces of `text`, in order, as views into it; together they
  // cover the text exactly. An empty text gives no pieces.
  void split(std::string_view text, std::vector<std::string_view>& pieces) const;

private:
  struct Expression;
  PreTokenizer() = default;
  std::vector<std::unique_ptr<Expression>> expressions_;
};

// `pattern` with \s and \S replaced by explicit White_Space classes (outside and
// inside [...] classes); exposed for the tests.
std::string with_white_space_classes(std::string_view pattern);

} // namespace pshard
