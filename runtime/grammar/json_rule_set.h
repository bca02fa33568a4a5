// The rules of a grammar json_schema_grammar.cpp is writing, and how they are named.
// Private to runtime/grammar. Rules made for parts of the schema come first, in the
// order they were made (`root` first); after them the fixed shared rules (value, object,
// string, char, number, integer, date, ws, ...) that were used, and only those, so a
// schema for one string does not drag in the whole JSON grammar.
//
//   RuleSet rules;
//   rules.define("root", seq({literal("["), rules.use("ws"), literal("]")}));
//   rules.text() // -> root ::= "[" ws "]"
//                //    ws ::= | " " | "\n" [ \t]{0,20}
#pragma once

#include <map>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace pshard::json_grammar {

class RuleSet {
public:
  RuleSet() { reserve("root"); }

  // A name not taken yet, `base` or `base-2`, `base-3`, ...
  std::string reserve(const std::string& base);
  void define(const std::string& name, std::string body);
  // A rule for `body` named `base` (or base-2, ...), or the one with that name and body.
  std::string add(const std::string& base, std::string body);
  // The shared rule `name` (and those it uses) will be emitted.
  std::string use(const char* name);

  // The grammar: one `name ::= body` line a rule.
  std::string text() const;

private:
  bool taken(const std::string& name) const;

  std::vector<std::pair<std::string, std::string>> rules_;
  std::map<std::string, size_t> index_;
  std::set<std::string> used_;
};

// A rule name from schema text: letters and digits kept, runs of anything else one '-';
// "" when nothing is left.
std::string sanitize(std::string_view text);

// The name for a part `key` of the schema named `parent`: the root's parts are named by
// their key alone (`age`), others are prefixed (`person-age`).
std::string child_name(const std::string& parent, std::string_view key);

} // namespace pshard::json_grammar
