#include "runtime/tokenizer/sentencepiece_pieces.h"

#include "runtime/tokenizer/space_marker.h"

#include <algorithm>

namespace pshard {
namespace {

int hex_digit(char c) {
  if (c >= '0' && c <= '9')
    return c - '0';
  if (c >= 'A' && c <= 'F')
    return c - 'A' + 10;
  if (c >= 'a' && c <= 'f')
    return c - 'a' + 10;
  return -1;
}

} // namespace

int parse_byte_piece(std::string_view text) {
  if (text.size() != 6 || text.substr(0, 3) != "<0x" || text[5] != '>')
    return -1;
  const int hi = hex_digit(text[3]);
  const int lo = hex_digit(text[4]);
  return hi < 0 || lo < 0 ? -1 : hi * 16 + lo;
}

ByteTokens byte_tokens(const Vocabulary& vocab) {
  ByteTokens bytes;
  bytes.fill(kNoToken);
  for (TokenId id = 0; id < vocab.size(); ++id) {
    const TokenData& token = vocab.tokens[id];
    if (token.type != TokenType::kByte)
      continue;
    const int byte = parse_byte_piece(token.text);
    if (byte >= 0 && bytes[byte] == kNoToken)
      bytes[byte] = id;
  }
  return bytes;
}

bool emit_bytes(std::string_view symbol, const ByteTokens& bytes, std::vector<TokenId>& out) {
  const bool has_all = std::all_of(symbol.begin(), symbol.end(), [&](char c) {
    return bytes[static_cast<unsigned char>(c)] != kNoToken;
  });
  if (!has_all || symbol.empty())
    return false;
  for (char c : symbol)
    out.push_back(bytes[static_cast<unsigned char>(c)]);
  return true;
}

std::string sentencepiece_piece_text(const TokenData& token) {
  switch (token.type) {
  case TokenType::kControl:
    return {};
  case TokenType::kUnknown:
    return std::string(kReplacementCharacter);
  case TokenType::kByte: {
    const int byte = parse_byte_piece(token.text);
    if (byte >= 0)
      return std::string(1, static_cast<char>(byte));
    break; // a malformed byte piece shows as its text
  }
  default:
    break;
  }
  return replace_space_markers(token.text);
}

std::string SentencePieceTokenizer::token_to_piece(TokenId id) const {
  if (id < 0 || id >= vocab_.size())
    return {};
  return sentencepiece_piece_text(vocab_.tokens[id]);
}

std::string SentencePieceTokenizer::decode(std::span<const TokenId> ids) const {
  return join_pieces(ids, /*drop_first_space=*/vocab_.add_space_prefix);
}

} // namespace pshard
