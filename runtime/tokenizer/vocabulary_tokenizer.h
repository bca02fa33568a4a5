// VocabularyTokenizer: the part of a Tokenizer that only reads its Vocabulary
// (size, special ids, the BOS default, which tokens end generation), shared by
// SpmTokenizer, BpeTokenizer and WpmTokenizer, which add encode() and decode().
#pragma once

#include "runtime/tokenizer/special_token_splitter.h"
#include "runtime/tokenizer/token_overrides.h"
#include "runtime/tokenizer/tokenizer.h"
#include "runtime/tokenizer/vocabulary.h"

#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace pshard {

class VocabularyTokenizer : public Tokenizer {
public:
  // Subclasses keep views into vocab_, so the object stays where it was built.
  VocabularyTokenizer(const VocabularyTokenizer&) = delete;
  VocabularyTokenizer& operator=(const VocabularyTokenizer&) = delete;

  int32_t n_vocab() const override { return vocab_.size(); }
  TokenId bos() const override { return vocab_.bos_id; }
  TokenId eos() const override { return vocab_.eos_id; }
  bool add_bos_by_default() const override { return vocab_.add_bos; }
  bool is_end_of_generation(TokenId id) const override {
    return id >= 0 && id < vocab_.size() && end_of_generation_[id];
  }
  const Vocabulary& vocabulary() const override { return vocab_; }

protected:
  explicit VocabularyTokenizer(Vocabulary vocab)
      : vocab_(std::move(vocab)), end_of_generation_(end_of_generation_flags(vocab_)) {}

  // What encode() does around the tokenizer proper: BOS when asked for, the text cut
  // at added tokens (which go out as they are), each run of text between them given
  // to encode_text(run, starts_text, out) — starts_text is true at the start of the
  // text and right after an added token — and EOS when the vocabulary adds it.
  template <typename EncodeText>
  std::vector<TokenId> encode_around_specials(const SpecialTokenSplitter& specials,
                                              std::string_view text, bool add_bos,
                                              bool parse_special, EncodeText&& encode_text) const {
    std::vector<TokenId> out;
    out.reserve(text.size() / 3 + 2);
    if (add_bos && vocab_.bos_id != kNoToken)
      out.push_back(vocab_.bos_id);
    bool starts_text = true;
    for (const TextFragment& fragment : specials.split(text, parse_special)) {
      if (fragment.token != kNoToken) {
        out.push_back(fragment.token);
        starts_text = true;
        continue;
      }
      encode_text(fragment.text, starts_text, out);
      starts_text = false;
    }
    if (add_bos && vocab_.add_eos && vocab_.eos_id != kNoToken)
      out.push_back(vocab_.eos_id);
    return out;
  }

  // The pieces of `ids` concatenated; with drop_first_space the first piece that
  // shows anything (control tokens show nothing) loses a leading space: the one
  // SentencePiece adds at the start of a text, the one before WordPiece's first word.
  std::string join_pieces(std::span<const TokenId> ids, bool drop_first_space) const {
    std::string text;
    for (TokenId id : ids) {
      std::string piece = token_to_piece(id);
      if (piece.empty())
        continue;
      if (drop_first_space && piece[0] == ' ')
        piece.erase(0, 1);
      drop_first_space = false;
      text += piece;
    }
    return text;
  }

  const Vocabulary vocab_;

private:
  std::vector<bool> end_of_generation_;
};

} // namespace pshard
