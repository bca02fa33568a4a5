#include "runtime/tokenizer/wpm_tokenizer.h"

#include "runtime/tokenizer/bert_normalizer.h"
#include "runtime/tokenizer/space_marker.h"

#include <algorithm>

namespace pshard {
namespace {

bool is_continuation_byte(char c) { return (static_cast<unsigned char>(c) & 0xC0) == 0x80; }

size_t count_characters(std::string_view word) {
  return static_cast<size_t>(
      std::count_if(word.begin(), word.end(), [](char c) { return !is_continuation_byte(c); }));
}

bool is_piece(TokenType type) {
  return type == TokenType::kNormal || type == TokenType::kUserDefined ||
         type == TokenType::kUndefined;
}

// Working storage reused from call to call, one per thread (encode() may run on several
// threads at once).
struct Scratch {
  std::vector<std::string> words;
  std::string marked; // "▁" + the word
};

Scratch& scratch() {
  thread_local Scratch s;
  return s;
}

} // namespace

Result<std::unique_ptr<WpmTokenizer>> WpmTokenizer::create(Vocabulary vocab) {
  PSHARD_RETURN_IF_ERROR(validate_vocabulary(vocab));
  if (vocab.unk_id == kNoToken)
    return invalid_format("a WordPiece (\"bert\") vocabulary needs an unknown token for the "
                          "words it cannot spell: set tokenizer.ggml.unknown_token_id (BERT's "
                          "is \"[UNK]\")");
  const bool has_word_starts =
      std::any_of(vocab.tokens.begin(), vocab.tokens.end(),
                  [](const TokenData& token) { return token.text.starts_with(kSpaceMarker); });
  if (!has_word_starts)
    return invalid_format(
        "no token of this WordPiece (\"bert\") vocabulary starts with \"\xE2\x96\x81\" "
        "(U+2581): pshard reads BERT vocabularies as llama.cpp's converter "
        "writes them, word-initial pieces as \"\xE2\x96\x81word\" and \"##piece\" "
        "as \"piece\" (re-convert the model)");
  return std::unique_ptr<WpmTokenizer>(new WpmTokenizer(std::move(vocab)));
}

WpmTokenizer::WpmTokenizer(Vocabulary vocab)
    : VocabularyTokenizer(std::move(vocab)), specials_(vocab_) {
  pieces_.reserve(vocab_.tokens.size());
  for (TokenId id = 0; id < vocab_.size(); ++id) {
    const TokenData& token = vocab_.tokens[id];
    if (is_piece(token.type) && !token.text.empty()) {
      pieces_.emplace(token.text, id); // the first of duplicate texts wins
      longest_piece_ = std::max(longest_piece_, token.text.size());
    }
  }
}

std::vector<TokenId> WpmTokenizer::encode(std::string_view text, bool add_bos,
                                          bool parse_special) const {
  return encode_around_specials(specials_, text, add_bos, parse_special,
                                [this](std::string_view run, bool, std::vector<TokenId>& out) {
                                  std::vector<std::string>& words = scratch().words;
                                  words.clear();
                                  split_bert_words(run, words);
                                  for (const std::string& word : words)
                                    encode_word(word, out);
                                });
}

TokenId WpmTokenizer::find_piece(std::string_view text) const {
  const auto found = pieces_.find(text);
  return found == pieces_.end() ? kNoToken : found->second;
}

void WpmTokenizer::encode_word(std::string_view word, std::vector<TokenId>& out) const {
  if (count_characters(word) > kMaxWordCharacters) {
    out.push_back(vocab_.unk_id);
    return;
  }
  // The first piece is looked up with the marker in front: a view into `marked`.
  std::string& marked = scratch().marked;
  marked.assign(kSpaceMarker);
  marked.append(word);
  const size_t first_token = out.size();
  for (size_t start = 0; start < word.size();) {
    // The longest piece from `start` first; no piece is longer than longest_piece_
    // bytes, and ends fall on character boundaries (the word is valid UTF-8).
    size_t end = std::min(word.size(), start + longest_piece_);
    TokenId piece = kNoToken;
    for (; end > start; --end) {
      if (end < word.size() && is_continuation_byte(word[end]))
        continue; // inside a character
      piece = start == 0 ? find_piece(std::string_view(marked).substr(0, kSpaceMarker.size() + end))
                         : find_piece(word.substr(start, end - start));
      if (piece != kNoToken)
        break;
    }
    if (piece == kNoToken) { // a part no piece covers: the whole word is unknown
      out.resize(first_token);
      out.push_back(vocab_.unk_id);
      return;
    }
    out.push_back(piece);
    start = end;
  }
}

std::string WpmTokenizer::token_to_piece(TokenId id) const {
  if (id < 0 || id >= vocab_.size())
    return {};
  if (id == vocab_.unk_id) // it stands for a whole word
    return " " + std::string(kReplacementCharacter);
  const TokenData& token = vocab_.tokens[id];
  if (token.type == TokenType::kControl || token.type == TokenType::kUnused)
    return {};
  return replace_space_markers(token.text);
}

std::string WpmTokenizer::decode(std::span<const TokenId> ids) const {
  return join_pieces(ids, /*drop_first_space=*/true);
}

} // namespace pshard
