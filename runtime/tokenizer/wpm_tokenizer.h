// WpmTokenizer: WordPiece ("bert" in tokenizer.ggml.model), as used by BERT and the
// sentence-embedding models built on it (BGE, MiniLM, E5, ...).
//
// Encoding:
//   1. added tokens are cut out (SpecialTokenSplitter: "[CLS]", "[SEP]", "[MASK]", ...
//      with parse_special);
//   2. each run of text between them is normalized and split into words
//      (split_bert_words: lowercase, accents stripped, punctuation and CJK ideographs
//      words of their own);
//   3. each word is covered greedily from the left by the longest vocabulary piece
//      that fits: the first spelled "▁" + text (U+2581, as llama.cpp's converter
//      writes BERT's word-initial pieces), the rest as they are (BERT's "##" pieces);
//      a word with any part no piece covers, or longer than 100 characters, becomes
//      the unknown token as a whole.
// With add_bos, [CLS] comes first and [SEP] last (tokenizer.ggml.cls_token_id and
// seperator_token_id, read as BOS and EOS; add_sep_token turns [SEP] off).
// Decoding cannot give the text back (case and accents are gone): word-initial pieces
// get a space, pieces inside a word join, control tokens show as nothing and the
// unknown token as " \uFFFD" (a word that could not be spelled).
//
//   PSHARD_ASSIGN_OR_RETURN(auto tok, WpmTokenizer::create(std::move(vocab)));
//   tok->encode("Hello, world!", true);   // [CLS] ▁hello ▁, ▁world ▁! [SEP]
#pragma once

#include "runtime/tokenizer/special_token_splitter.h"
#include "runtime/tokenizer/vocabulary_tokenizer.h"

#include <string_view>
#include <unordered_map>
#include <vector>

namespace pshard {

class WpmTokenizer final : public VocabularyTokenizer {
public:
  // Validates `vocab`: it needs an unknown token and word-initial "▁" pieces.
  static Result<std::unique_ptr<WpmTokenizer>> create(Vocabulary vocab);

  std::vector<TokenId> encode(std::string_view text, bool add_bos,
                              bool parse_special = true) const override;
  std::string token_to_piece(TokenId id) const override;
  std::string decode(std::span<const TokenId> ids) const override;

  // BERT's max_input_chars_per_word: a longer word is the unknown token.
  static constexpr size_t kMaxWordCharacters = 100;

private:
  explicit WpmTokenizer(Vocabulary vocab);

  // Step 3 for one word.
  void encode_word(std::string_view word, std::vector<TokenId>& out) const;
  TokenId find_piece(std::string_view text) const;

  // Pieces WordPiece may produce (normal and user-defined tokens), by text.
  std::unordered_map<std::string_view, TokenId> pieces_;
  size_t longest_piece_ = 0;      // in bytes
  SpecialTokenSplitter specials_; // points into vocab_
};

} // namespace pshard
