// A schema's `pattern` for json_schema_grammar.cpp: the ECMAScript regex subset that
// json_schema_grammar.h lists, parsed into a small syntax tree and lowered to GBNF over
// the JSON-escaped form of the string (a '"' in the text is matched as \" between the
// quotes). Private to runtime/grammar; kept apart from the converter because it is a
// parser of its own, with its own refusals (lookaround, backreferences, ...).
//
//   parse_regex("^[A-Z]{3}-\\d+$", "/pattern") // -> one branch, anchored at both ends
//   lower_regex(branch.re, "/pattern")          // -> [A-Z]{3} "-" [0-9]+
#pragma once

#include "runtime/core/status.h"
#include "runtime/grammar/gbnf_text.h"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace pshard::json_grammar {

struct Regex {
  enum Kind { kSet, kSeq, kAlt, kRepeat };
  Kind kind = kSeq;
  Ranges set;                 // kSet
  std::vector<Regex> kids;    // kSeq, kAlt; kRepeat has one
  int64_t min = 1;            // kRepeat
  std::optional<int64_t> max; // kRepeat; none: unbounded
};

// A top-level alternative of a pattern, with whether ^ and $ anchor it.
struct RegexBranch {
  Regex re;
  bool anchored_start = false, anchored_end = false;
};

// The top-level alternatives of `pattern`; errors name the pattern by `ptr`, its JSON
// pointer in the schema.
Result<std::vector<RegexBranch>> parse_regex(std::string_view pattern, const std::string& ptr);

// The GBNF for strings (between the quotes) that `re` matches.
Result<std::string> lower_regex(const Regex& re, const std::string& ptr);

} // namespace pshard::json_grammar
