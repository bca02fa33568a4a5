// Grammar: a context-free grammar over bytes, read from GBNF text, that constrains
// what a model may generate (grammar_matcher.h walks it, token_grammar.h turns it
// into allowed tokens).
//
// GBNF (the notation llama.cpp's users write grammars in) as read here:
//
//   root   ::= object                  # the start rule is always `root`
//   object ::= "{" ws ( pair ( "," ws pair )* )? "}"
//   pair   ::= string ":" ws value
//   string ::= "\"" ( [^"\\] | "\\" ["\\/bfnrt] )* "\""
//   digit  ::= [0-9]
//   ws     ::= [ \t\n]{0,20}
//
// - A rule is `name ::= body`; names are letters, digits, '-' and '_'. A body runs
//   until the next `name ::=` (so it may span lines); `#` starts a comment.
// - Terms: "literal", [class], [^negated class], `.` (any one character), a rule
//   name, ( group ). Alternatives with `|`; an empty alternative matches nothing.
// - Postfix: `*`, `+`, `?`, `{m}`, `{m,}`, `{m,n}` (counts up to 1000).
// - Escapes in literals and classes: \n \r \t \\ \" \' \[ \] \- \^ \/ \xHH \uHHHH
//   \UHHHHHHHH. Literals and classes are Unicode code points, matched as their UTF-8
//   bytes (a class or `.` never matches a surrogate or a malformed byte).
// - Refused with kInvalidFormat naming line and column: a syntax error, an undefined
//   rule, a missing `root`, a rule defined twice, left recursion (a rule that can
//   reach itself before matching a byte), an empty class, a range whose end is below
//   its start.
//
// Compiled form: each rule is a list of alternatives, each a sequence of elements
// ending with kEnd, all in one flat array so a position in the grammar is one index.
// An element is a set of bytes (one byte of input), a reference to a rule, or kEnd.
// Repetitions and non-ASCII classes become rules of their own.
#pragma once

#include "runtime/core/status.h"

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace pshard {

// 256 bits: which byte values a terminal accepts.
struct ByteSet {
  std::array<uint64_t, 4> bits{};
  bool has(uint8_t b) const { return (bits[b >> 6] >> (b & 63)) & 1u; }
  void add(uint8_t b) { bits[b >> 6] |= uint64_t{1} << (b & 63); }
  void add_range(uint8_t lo, uint8_t hi) {
    for (int b = lo; b <= hi; ++b)
      add(static_cast<uint8_t>(b));
  }
  bool operator==(const ByteSet&) const = default;
};

struct GrammarElement {
  enum Kind : uint8_t { kEnd, kBytes, kRule };
  Kind kind = kEnd;
  int32_t index = 0; // kBytes: into Grammar::byte_sets; kRule: the rule
};

struct Grammar {
  // Flat: every alternative's elements then a kEnd.
  std::vector<GrammarElement> elements;
  // Per rule, the positions in `elements` where its alternatives start.
  std::vector<std::vector<int32_t>> alternatives;
  std::vector<std::string> rule_names; // generated rules are named "<rule>_<n>"
  std::vector<ByteSet> byte_sets;
  int32_t root = 0;
};

// Parses and compiles GBNF text (the format above).
Result<Grammar> parse_gbnf(std::string_view text);

} // namespace pshard
