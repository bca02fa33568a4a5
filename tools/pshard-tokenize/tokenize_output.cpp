#include "tools/pshard-tokenize/tokenize_output.h"

#include "runtime/tokenizer/utf8.h"
#include "runtime/tokenizer/vocabulary.h"
#include "tools/common/json_writer.h"

#include <charconv>
#include <cstdio>

namespace pshard {
std::string shown_piece(const Tokenizer& tok, TokenId id) {
  const Vocabulary& vocab = tok.vocabulary();
  if (id >= 0 && id < vocab.size()) {
    const TokenData& token = vocab.tokens[id];
    if (token.type == TokenType::kControl || token.type == TokenType::kUnknown)
      return token.text;
  }
  return tok.token_to_piece(id);
}

std::string escape_partial_utf8(std::string_view bytes) {
  std::string out;
  for (size_t pos = 0; pos < bytes.size();) {
    size_t length = 0;
    decode_utf8(bytes, pos, &length);
    if (length > 0) {
      out.append(bytes.substr(pos, length));
      pos += length;
      continue;
    }
    char hex[8];
    std::snprintf(hex, sizeof hex, "\\x%02X", static_cast<unsigned char>(bytes[pos]));
    out += hex;
    ++pos;
  }
  return out;
}

void write_token_lines(std::ostream& out, const Tokenizer& tok, std::span<const TokenId> ids) {
  for (TokenId id : ids) {
    char number[16];
    std::snprintf(number, sizeof number, "%6d", id);
    out << number << " -> '" << escape_partial_utf8(shown_piece(tok, id)) << "'\n";
  }
}

void write_id_list(std::ostream& out, std::span<const TokenId> ids) {
  out << '[';
  for (size_t i = 0; i < ids.size(); ++i)
    out << (i ? ", " : "") << ids[i];
  out << "]\n";
}

void write_tokens_json(std::ostream& out, const Tokenizer& tok, std::span<const TokenId> ids) {
  JsonWriter j(out);
  j.begin_object();
  j.key("count").value(static_cast<int64_t>(ids.size()));
  j.key("ids").begin_array(/*inline_items=*/true);
  for (TokenId id : ids)
    j.value(id);
  j.end_array();
  j.key("tokens").begin_array();
  for (TokenId id : ids) {
    const std::string piece = shown_piece(tok, id);
    j.begin_object();
    j.key("id").value(id);
    j.key("piece").value(piece);
    if (!is_valid_utf8(piece)) { // JSON strings cannot carry part of a character
      j.key("bytes").begin_array(true);
      for (char c : piece)
        j.value(static_cast<int32_t>(static_cast<unsigned char>(c)));
      j.end_array();
    }
    j.end_object();
  }
  j.end_array();
  j.end_object();
  out << "\n";
}

void write_decoded_json(std::ostream& out, std::span<const TokenId> ids, std::string_view text) {
  JsonWriter j(out);
  j.begin_object();
  j.key("ids").begin_array(true);
  for (TokenId id : ids)
    j.value(id);
  j.end_array();
  j.key("text").value(text);
  j.end_object();
  out << "\n";
}

Result<std::vector<TokenId>> parse_token_ids(std::string_view text, int32_t n_vocab) {
  std::vector<TokenId> ids;
  size_t pos = 0;
  const auto is_separator = [](char c) {
    return c == ',' || c == ' ' || c == '\t' || c == '\n' || c == '[' || c == ']';
  };
  while (pos < text.size()) {
    if (is_separator(text[pos])) {
      ++pos;
      continue;
    }
    size_t end = pos;
    while (end < text.size() && !is_separator(text[end]))
      ++end;
    const std::string_view item = text.substr(pos, end - pos);
    int64_t value = 0;
    const auto [stop, error] = std::from_chars(item.data(), item.data() + item.size(), value);
    if (error != std::errc() || stop != item.data() + item.size())
      return invalid_argument("'" + std::string(item) +
                              "' is not a token id; give integers separated by commas or spaces, "
                              "e.g. \"1, 15043\"");
    if (value < 0 || value >= n_vocab)
      return out_of_range("token id " + std::string(item) +
                          " is out of range: the vocabulary has " + std::to_string(n_vocab) +
                          " tokens (ids 0.." + std::to_string(n_vocab - 1) + ")");
    ids.push_back(static_cast<TokenId>(value));
    pos = end;
  }
  if (ids.empty())
    return invalid_argument("no token ids given; e.g. --decode \"1, 15043\"");
  return ids;
}

} // namespace pshard
