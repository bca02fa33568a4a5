// BpeTokenizer: byte-level BPE ("gpt2" in tokenizer.ggml.model), as used by
// Llama 3, Qwen2/2.5/3, Mistral NeMo (Tekken), DeepSeek, GPT-2, Falcon, MPT,
// StarCoder and Refact.
//
// Encoding:
//   1. added tokens are cut out (SpecialTokenSplitter: user-defined always,
//      control with parse_special);
//   2. each run of text between them is cut into pieces by the pre-tokenizer
//      that tokenizer.ggml.pre names (PreTokenizer, pre_tokenizer_patterns.h);
//   3. each piece becomes one symbol per byte (its byte-level character, see
//      byte_unicode.h) and the adjacent pair with the lowest merge rank is
//      merged, repeatedly (ties: the leftmost pair) — except that with
//      ignore_merges (Llama 3, Tekken) a piece that is a whole token is taken
//      as it is;
//   4. each final symbol becomes its token; one that is not a token (a merge
//      whose result the vocabulary lacks) is emitted as the tokens of its
//      characters.
// Decoding maps each character of a token back to its byte, so any byte
// sequence, valid UTF-8 or not, round-trips.
//
//   PSHARD_ASSIGN_OR_RETURN(auto tok, BpeTokenizer::create(std::move(vocab)));
//   std::vector<TokenId> ids = tok->encode("Hello world", tok->add_bos_by_default());
#pragma once

#include "runtime/tokenizer/bpe_merges.h"
#include "runtime/tokenizer/pre_tokenizer.h"
#include "runtime/tokenizer/pre_tokenizer_patterns.h"
#include "runtime/tokenizer/special_token_splitter.h"
#include "runtime/tokenizer/vocabulary_tokenizer.h"

#include <string>
#include <vector>

namespace pshard {

class BpeTokenizer final : public VocabularyTokenizer {
public:
  // Validates `vocab`, builds the merge table and compiles the pre-tokenizer.
  // Missing merges give kInvalidFormat.
  static Result<std::unique_ptr<BpeTokenizer>> create(Vocabulary vocab);

  std::vector<TokenId> encode(std::string_view text, bool add_bos,
                              bool parse_special = true) const override;
  std::string token_to_piece(TokenId id) const override;
  std::string decode(std::span<const TokenId> ids) const override;

  std::span<const std::string> warnings() const override { return warnings_; }

  // The pre-tokenizer in use (after the fallback for an unknown name).
  const PreTokenizerSpec& pre_tokenizer() const { return *spec_; }

private:
  BpeTokenizer(Vocabulary vocab, const PreTokenizerSpec& spec, PreTokenizer pre);

  // Steps 2-4 for one run of text.
  void encode_text(std::string_view text, std::vector<TokenId>& out) const;
  // Steps 3-4 for one piece.
  void encode_piece(std::string_view piece, std::vector<TokenId>& out) const;
  // Step 4 for one final symbol.
  void emit_symbol(int32_t symbol, std::vector<TokenId>& out) const;

  const PreTokenizerSpec* spec_;
  PreTokenizer pre_;
  SpecialTokenSplitter specials_; // these two point into vocab_
  BpeMerges merges_;
  std::vector<std::string> warnings_;
};

} // namespace pshard
