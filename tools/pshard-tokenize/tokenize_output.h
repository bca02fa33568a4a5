// pshard-tokenize's outputs and its id-list parser (kept out of main.cpp, which
// pays CLI11's compile time).
//
//   write_token_lines(std::cout, tok, ids);   //  15043 -> ' Hello'
//   write_id_list(std::cout, ids);            // [1, 15043]
//   PSHARD_ASSIGN_OR_RETURN(auto ids, parse_token_ids("1, 15043", tok.n_vocab()));
#pragma once

#include "runtime/core/status.h"
#include "runtime/tokenizer/tokenizer.h"

#include <ostream>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace pshard {

// What to show for one token: its text for control and unknown tokens (which
// decode to nothing), else the bytes it decodes to.
std::string shown_piece(const Tokenizer& tok, TokenId id);

// `bytes` with each byte that is not part of a whole UTF-8 character written as
// \xHH, so a token holding part of a character still prints legibly.
std::string escape_partial_utf8(std::string_view bytes);

// llama-tokenize's default: one line per token, "%6d -> 'piece'".
void write_token_lines(std::ostream& out, const Tokenizer& tok, std::span<const TokenId> ids);
// "[1, 2, 3]" and a newline.
void write_id_list(std::ostream& out, std::span<const TokenId> ids);
// {"count": N, "ids": [...], "tokens": [{"id", "piece", and "bytes" when the
// piece is part of a character}]}.
void write_tokens_json(std::ostream& out, const Tokenizer& tok, std::span<const TokenId> ids);
// {"ids": [...], "text": "..."} for --decode.
void write_decoded_json(std::ostream& out, std::span<const TokenId> ids, std::string_view text);

// Ids separated by commas and/or spaces, optionally in [...] ("[1, 2, 3]" as
// --ids prints it). Each must be an integer in [0, n_vocab).
Result<std::vector<TokenId>> parse_token_ids(std::string_view text, int32_t n_vocab);

} // namespace pshard
