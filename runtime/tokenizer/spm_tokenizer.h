// SpmTokenizer: SentencePiece BPE ("llama" in tokenizer.ggml.model), as used by
// Llama 1/2, Mistral, Phi-3 and the TinyStories models.
//
// Encoding, per run of text between special tokens:
//   1. spaces become "▁" (U+2581), and a "▁" is prepended at the start of the
//      text and after each special token (tokenizer.ggml.add_space_prefix);
//   2. the text is split into UTF-8 characters (a malformed byte is one of its
//      own, so any bytes round-trip through byte fallback);
//   3. the adjacent pair whose concatenation is a vocabulary piece with the
//      highest score is merged, repeatedly (ties: the leftmost pair);
//   4. each final symbol becomes its id, or its bytes as <0xXX> byte tokens
//      (byte fallback), or the unknown token.
// Added tokens are cut out first (SpecialTokenSplitter): user-defined ones
// always, control ones when the caller asks for it (parse_special, the default).
//
//   PSHARD_ASSIGN_OR_RETURN(auto tok, SpmTokenizer::create(std::move(vocab)));
//   std::vector<TokenId> ids = tok->encode("Hello world", /*add_bos=*/true);
#pragma once

#include "runtime/tokenizer/sentencepiece_pieces.h"
#include "runtime/tokenizer/special_token_splitter.h"

#include <string_view>
#include <unordered_map>
#include <vector>

namespace pshard {

class SpmTokenizer final : public SentencePieceTokenizer {
public:
  // Validates `vocab` and builds the lookup tables.
  static Result<std::unique_ptr<SpmTokenizer>> create(Vocabulary vocab);

  std::vector<TokenId> encode(std::string_view text, bool add_bos,
                              bool parse_special = true) const override;

private:
  explicit SpmTokenizer(Vocabulary vocab);

  // Steps 1-4 above for one run of ordinary text.
  void encode_text(std::string_view text, bool space_prefix, std::vector<TokenId> &out) const;
  // Steps 2-4 for one run of escaped text (a word, or all of it).
  void merge_and_emit(std::string_view escaped, std::vector<TokenId>& out) const;
  // Step 4 for one symbol.
  void emit_symbol(std::string_view symbol, std::vector<TokenId> &out) const;

  // Pieces BPE may produce (normal and user-defined tokens), by text.
  std::unordered_map<std::string_view, TokenId> pieces_;
  bool splits_at_spaces_ = false; // no piece has a space marker after anything else
  ByteTokens byte_tokens_;
  SpecialTokenSplitter specials_; // points into vocab_
};

} // namespace pshard
