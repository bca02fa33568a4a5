#include "runtime/tokenizer/ugm_tokenizer.h"

#include "runtime/tokenizer/utf8.h"

#include <algorithm>
#include <limits>

namespace pshard {
namespace {

std::vector<std::pair<std::string_view, TokenId>> segment_pieces(const Vocabulary& vocab) {
  std::vector<std::pair<std::string_view, TokenId>> pieces;
  for (TokenId id = 0; id < vocab.size(); ++id) {
    const TokenType type = vocab.tokens[id].type;
    if (type == TokenType::kNormal || type == TokenType::kUndefined)
      pieces.emplace_back(vocab.tokens[id].text, id);
  }
  return pieces;
}

// The best way found so far to cover the normalized text up to a byte offset: its last
// piece, where that piece starts, and the summed score.
struct Best {
  TokenId id = kNoToken;
  size_t start = 0;
  float score = 0.0f;
  bool reached = false;
};

} // namespace

Result<std::unique_ptr<UgmTokenizer>> UgmTokenizer::create(Vocabulary vocab) {
  PSHARD_RETURN_IF_ERROR(validate_vocabulary(vocab));
  if (vocab.unk_id == kNoToken)
    return invalid_format("a SentencePiece Unigram (\"t5\") vocabulary needs an unknown token "
                          "for the characters no piece covers: set "
                          "tokenizer.ggml.unknown_token_id (XLM-RoBERTa's is \"<unk>\", 3)");
  PSHARD_ASSIGN_OR_RETURN(PrecompiledCharsmap charsmap,
                          PrecompiledCharsmap::parse(vocab.precompiled_charsmap));
  return std::unique_ptr<UgmTokenizer>(new UgmTokenizer(std::move(vocab), std::move(charsmap)));
}

UgmTokenizer::UgmTokenizer(Vocabulary vocab, PrecompiledCharsmap charsmap)
    : SentencePieceTokenizer(std::move(vocab)),
      normalizer_(std::move(charsmap),
                  {.dummy_prefix = vocab_.add_space_prefix,
                   .remove_extra_whitespaces = vocab_.remove_extra_whitespaces}),
      pieces_(segment_pieces(vocab_)), byte_tokens_(byte_tokens(vocab_)), specials_(vocab_) {
  // Below the lowest score of the normal pieces, as SentencePiece takes it.
  float lowest = std::numeric_limits<float>::max();
  for (const TokenData& token : vocab_.tokens)
    if (token.type == TokenType::kNormal)
      lowest = std::min(lowest, token.score);
  unknown_score_ = (lowest == std::numeric_limits<float>::max() ? 0.0f : lowest) - kUnknownPenalty;
}

std::vector<TokenId> UgmTokenizer::encode(std::string_view text, bool add_bos,
                                          bool parse_special) const {
  return encode_around_specials(specials_, text, add_bos, parse_special,
                                [this](std::string_view run, bool, std::vector<TokenId>& out) {
                                  segment(normalizer_.normalize(run), out);
                                });
}

void UgmTokenizer::segment(std::string_view text, std::vector<TokenId>& out) const {
  if (text.empty())
    return;
  std::vector<Best> best(text.size() + 1);
  best[0].reached = true;
  const auto offer = [&](size_t end, TokenId id, size_t start, float score) {
    Best& b = best[end];
    if (!b.reached || score > b.score)
      b = {id, start, score, true};
  };
  for (size_t start = 0; start < text.size();) {
    const size_t char_bytes = std::min(
        utf8_sequence_length(static_cast<unsigned char>(text[start])), text.size() - start);
    const float here = best[start].score;
    bool covers_char = false;
    pieces_.for_each_prefix(text.substr(start), [&](size_t length, TokenId id) {
      offer(start + length, id, start, here + vocab_.tokens[id].score);
      covers_char = covers_char || length == char_bytes;
    });
    if (!covers_char)
      offer(start + char_bytes, vocab_.unk_id, start, here + unknown_score_);
    start += char_bytes;
  }

  // Back from the end, then reversed; a run of unknown pieces is one surface.
  std::vector<std::pair<TokenId, std::string_view>> pieces;
  for (size_t end = text.size(); end > 0; end = best[end].start) {
    const Best& b = best[end];
    const std::string_view surface = text.substr(b.start, end - b.start);
    if (b.id == vocab_.unk_id && !pieces.empty() && pieces.back().first == vocab_.unk_id)
      pieces.back().second = text.substr(b.start, pieces.back().second.size() + surface.size());
    else
      pieces.emplace_back(b.id, surface);
  }
  for (auto piece = pieces.rbegin(); piece != pieces.rend(); ++piece) {
    if (piece->first != vocab_.unk_id || !emit_bytes(piece->second, byte_tokens_, out))
      out.push_back(piece->first);
  }
}

} // namespace pshard
