// What SentencePiece vocabularies ("llama" BPE and "t5" Unigram alike) share: byte-
// fallback pieces ("<0xAB>", type kByte), how a piece shows as text, and decoding
// (SentencePieceTokenizer, the base of SpmTokenizer and UgmTokenizer).
//
//   ByteTokens bytes = byte_tokens(vocab);
//   if (!emit_bytes(symbol, bytes, out)) out.push_back(vocab.unk_id);
//   std::string text = sentencepiece_piece_text(vocab.tokens[id]);
#pragma once

#include "runtime/tokenizer/token_id.h"
#include "runtime/tokenizer/vocabulary.h"
#include "runtime/tokenizer/vocabulary_tokenizer.h"

#include <array>
#include <string>
#include <string_view>
#include <vector>

namespace pshard {

// byte value -> its <0xXX> token, or kNoToken.
using ByteTokens = std::array<TokenId, 256>;

// The byte of a "<0xAB>" piece, or -1.
int parse_byte_piece(std::string_view text);

// The vocabulary's byte tokens (the first of duplicates).
ByteTokens byte_tokens(const Vocabulary& vocab);

// Appends `symbol` as byte tokens when every byte of it has one (byte fallback), and
// says whether it did; appends nothing otherwise.
bool emit_bytes(std::string_view symbol, const ByteTokens& bytes, std::vector<TokenId>& out);

// A piece as text to show: control tokens "", the unknown token U+FFFD, a byte token its
// byte, others their text with each "▁" a space.
std::string sentencepiece_piece_text(const TokenData& token);

// token_to_piece() and decode() as SentencePiece has them; subclasses encode.
class SentencePieceTokenizer : public VocabularyTokenizer {
public:
  std::string token_to_piece(TokenId id) const override;
  // The pieces joined; the "▁" put in front of the text (add_space_prefix) shows up as a
  // leading space on the first piece and is dropped.
  std::string decode(std::span<const TokenId> ids) const override;

protected:
  using VocabularyTokenizer::VocabularyTokenizer;
};

} // namespace pshard
