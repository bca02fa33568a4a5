// UgmTokenizer: SentencePiece Unigram ("t5" in tokenizer.ggml.model), as used by
// XLM-RoBERTa and the embedding and reranking models built on it (bge-m3,
// multilingual-e5, bge-reranker-v2-m3, ...) and by T5.
//
// Encoding, per run of text between added tokens (cut out as for every vocabulary:
// SpecialTokenSplitter):
//   1. the run is normalized (UgmNormalizer: the model's precompiled charsmap, extra
//      whitespace removed, a "▁" in front, spaces as "▁");
//   2. of every way to cover it with normal vocabulary pieces (user-defined ones were cut
//      out already; unused ones never take part), the one whose scores sum highest is taken
//      (Viterbi, in float as SentencePiece sums, ties to the first found); a character that no
//      one-character piece covers is the unknown token, scored 10 below the lowest piece;
//   3. a run of unknown characters becomes one unknown token, or their bytes as <0xXX>
//      tokens when the vocabulary has them (byte fallback).
// add_bos_by_default() is true when the vocabulary adds BOS or EOS (T5 adds only EOS).
//
//   PSHARD_ASSIGN_OR_RETURN(auto tok, UgmTokenizer::create(std::move(vocab)));
//   tok->encode("Hello world", true);   // <s> ▁Hello ▁world </s> (XLM-RoBERTa)
#pragma once

#include "runtime/tokenizer/piece_prefix_index.h"
#include "runtime/tokenizer/sentencepiece_pieces.h"
#include "runtime/tokenizer/special_token_splitter.h"
#include "runtime/tokenizer/ugm_normalizer.h"

#include <string_view>
#include <vector>

namespace pshard {

class UgmTokenizer final : public SentencePieceTokenizer {
public:
  // Validates `vocab` (it needs an unknown token and a well-formed charsmap, if any)
  // and builds the lookup tables.
  static Result<std::unique_ptr<UgmTokenizer>> create(Vocabulary vocab);

  std::vector<TokenId> encode(std::string_view text, bool add_bos,
                              bool parse_special = true) const override;
  bool add_bos_by_default() const override { return vocab_.add_bos || vocab_.add_eos; }

  // SentencePiece's penalty on the unknown token, below the lowest piece's score.
  static constexpr float kUnknownPenalty = 10.0f;

private:
  UgmTokenizer(Vocabulary vocab, PrecompiledCharsmap charsmap);

  // Steps 2 and 3 for one normalized run.
  void segment(std::string_view normalized, std::vector<TokenId>& out) const;

  UgmNormalizer normalizer_;
  PiecePrefixIndex pieces_; // views into vocab_
  ByteTokens byte_tokens_;
  float unknown_score_ = 0.0f;
  SpecialTokenSplitter specials_; // points into vocab_
};

} // namespace pshard
