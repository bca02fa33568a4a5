// A JSON Schema's keywords as json_schema_grammar.cpp reads them: the checked value of
// a keyword, and the errors that name where in the schema (its JSON pointer) a keyword
// is malformed or not supported. Private to runtime/grammar; split out of the converter
// so that its number bounds and regex lowering report errors in the same words.
#pragma once

#include "runtime/core/status.h"

#include <cstdint>
#include <initializer_list>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace pshard::json_grammar {

// ordered_json keeps an object's keys in the text's order: properties are generated in
// the order the schema lists them.
using Json = nlohmann::ordered_json;

constexpr int kMaxNesting = 200; // schema levels (and regex groups) walked recursively

// ---------------------------------------------------------------------------------------
// Messages

// The JSON pointer to `key` inside the schema at `ptr`.
std::string at(const std::string& ptr, std::string_view key);
// "at /properties/age", or "at the schema's root" for "".
std::string where(const std::string& ptr);

Status bad_keyword(const std::string& ptr, std::string_view key, const std::string& what);
Status unsupported_keyword(const std::string& ptr, std::string_view key,
                           const std::string& why = "");

// ---------------------------------------------------------------------------------------
// Keywords

// s[key], or null when `s` is no object or lacks it.
const Json* member(const Json& s, const char* key);

// Keywords that only annotate (title, description, $defs, ...).
bool is_annotation(std::string_view key);

// Refuses keywords that constrain values and are not implemented, wherever they appear.
Status check_keywords(const Json& s, const std::string& ptr);

// Whether `s` has keywords other than annotations and those in `also`.
bool has_constraints_besides(const Json& s, std::initializer_list<std::string_view> also);

// The types `type` names, in its order.
Result<std::vector<std::string>> read_types(const Json& type, const std::string& ptr);

// A count keyword (minLength, maxItems, ...): a non-negative whole number.
Result<std::optional<int64_t>> read_count(const Json& s, const char* key, const std::string& ptr);

// Refuses a count above what GBNF repeats.
Status check_count(int64_t n, const std::string& ptr, const char* key);

} // namespace pshard::json_grammar
