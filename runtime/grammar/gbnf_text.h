// GBNF source text for json_schema_grammar.cpp: literals and classes escaped to ASCII,
// sequences, groups and repetitions that keep an expression's meaning where it is
// placed, sets of code points, and how a character is written inside a JSON string.
// Private to runtime/grammar: it is the text layer the schema converter, its number
// ranges and its regex lowering share, so they agree on one spelling of every term
// (json_schema_to_gbnf's output must not depend on which of them wrote a piece).
//
//   literal("a\"é")                     // -> "a\"\u00E9"
//   repeat(literal("ab"), 0, 3)         // -> "ab"{0,3}
//   group({"a", "b c"})                 // -> ( a | b c )
//   class_text({{'0', '9'}, {'a', 'f'}}) // -> [0-9a-f]
#pragma once

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace pshard::json_grammar {

constexpr int64_t kMaxCount = 1000; // GBNF's largest repetition count
constexpr char32_t kMaxCodePoint = 0x10FFFF;

std::u32string code_points(std::string_view utf8);

// A GBNF literal matching exactly the bytes of `utf8`.
std::string literal(std::string_view utf8);

// The non-empty parts joined by spaces: a GBNF sequence.
std::string seq(std::initializer_list<std::string> parts);

std::string join(const std::vector<std::string>& parts, std::string_view sep);

// Whether `e` is one term that can take a postfix as it is.
bool is_term(std::string_view e);
// `e` as one term.
std::string paren(const std::string& e);
// `e` safe to place in a sequence.
std::string in_seq(const std::string& e);
// Alternatives as one expression safe to place in a sequence.
std::string group(const std::vector<std::string>& alts);

// `term` repeated min..max times (max none: unbounded); "" for exactly zero.
std::string repeat(const std::string& term, int64_t min, std::optional<int64_t> max);

// ---------------------------------------------------------------------------------------
// Sets of code points

using Ranges = std::vector<std::pair<char32_t, char32_t>>; // sorted, disjoint, inclusive

Ranges normalized(Ranges r);
Ranges complement(const Ranges& r);
Ranges intersect(const Ranges& a, const Ranges& b);
Ranges subtract(const Ranges& a, const Ranges& b);
Ranges single(char32_t cp);
bool is_single(const Ranges& r);

// Characters JSON strings must escape, plus DEL, which the generated strings write as
// \u007F like the shared `char` rule does.
const Ranges& json_escaped();

// A GBNF class of `r` (surrogates left out: they are no characters); "" if empty.
std::string class_text(const Ranges& r);

// ---------------------------------------------------------------------------------------
// Characters inside JSON strings

// The JSON-string form of one code point as the model writes it: JSON's short escapes
// where it has them, \u00XX for other control characters and DEL, else the character.
std::string json_char(char32_t cp);

// Alternatives matching one character of `r` as written inside a JSON string: the
// characters written as they are, then `\` and the escapes of the others (short ones
// as one class, \u00XX grouped by their first hex digit).
std::vector<std::string> encoded_set(const Ranges& r);

} // namespace pshard::json_grammar
