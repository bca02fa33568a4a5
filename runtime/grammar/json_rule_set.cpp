// The rule set being written and the shared JSON rules (json_rule_set.h).
#include "runtime/grammar/json_rule_set.h"

namespace pshard::json_grammar {
namespace {

struct Primitive {
  const char* name;
  const char* body;
  std::vector<const char*> uses;
};

// Emitted in this order, those used only. `length-char` is `char` without \u escapes of
// surrogates: a surrogate pair is two `char`s but one character, which would let a
// string look longer than it is to minLength.
const std::vector<Primitive>& primitives() {
  static const std::vector<Primitive> p = {
      {"value",
       "object | array | string | number | boolean | null",
       {"object", "array", "string", "number", "boolean", "null"}},
      {"object",
       R"("{" ws ( string ws ":" ws value ws ( "," ws string ws ":" ws value ws )* )? "}")",
       {"ws", "string", "value"}},
      {"array", R"("[" ws ( value ws ( "," ws value ws )* )? "]")", {"ws", "value"}},
      {"string", R"("\"" char* "\"")", {"char"}},
      {"char", R"([^"\\\x7F\x00-\x1F] | "\\" ( ["\\/bfnrt] | "u" [0-9a-fA-F]{4} ))", {}},
      {"length-char",
       R"([^"\\\x7F\x00-\x1F] | "\\" ( ["\\/bfnrt] | "u" ( [0-9a-cA-Ce-fE-F] [0-9a-fA-F]{3} | [dD] [0-7] [0-9a-fA-F]{2} ) ))",
       {}},
      {"key-char", R"([^"\\\x7F\x00-\x1F])", {}},
      {"number", R"(integer ( "." [0-9]{1,16} )? ( [eE] [-+]? [0-9]{1,3} )?)", {"integer"}},
      {"integer", R"("-"? ( "0" | [1-9] [0-9]{0,15} ))", {}},
      {"boolean", R"("true" | "false")", {}},
      {"null", R"("null")", {}},
      {"date-string", R"("\"" date "\"")", {"date"}},
      {"time-string", R"("\"" time "\"")", {"time"}},
      {"date-time-string", R"("\"" date "T" time "\"")", {"date", "time"}},
      {"uuid-string",
       R"("\"" [0-9a-fA-F]{8} "-" [0-9a-fA-F]{4} "-" [0-9a-fA-F]{4} "-" [0-9a-fA-F]{4} "-" [0-9a-fA-F]{12} "\"")",
       {}},
      // RFC 3339 full-date: days per month; 29 February only in leap years.
      {"date",
       R"([0-9]{4} "-" ( ( "0" [13578] | "1" [02] ) "-" ( "0" [1-9] | [12] [0-9] | "3" [01] ) | ( "0" [469] | "11" ) "-" ( "0" [1-9] | [12] [0-9] | "30" ) | "02-" ( "0" [1-9] | "1" [0-9] | "2" [0-8] ) ) | leap-year "-02-29")",
       {"leap-year"}},
      {"leap-year",
       R"([0-9]{2} ( "0" [48] | [2468] [048] | [13579] [26] ) | ( "0" [048] | [2468] [048] | [13579] [26] ) "00")",
       {}},
      // RFC 3339 full-time, offset required (no leap second: validators check those
      // against the offset).
      {"time",
       R"(( [01] [0-9] | "2" [0-3] ) ":" [0-5] [0-9] ":" [0-5] [0-9] ( "." [0-9]{1,9} )? ( "Z" | [+-] ( [01] [0-9] | "2" [0-3] ) ":" [0-5] [0-9] ))",
       {}},
      {"ws", R"(| " " | "\n" [ \t]{0,20})", {}},
  };
  return p;
}

const Primitive* find_primitive(std::string_view name) {
  for (const Primitive& p : primitives())
    if (name == p.name)
      return &p;
  return nullptr;
}

std::string next_name(const std::string& base, const std::string& name) {
  const int n = name == base ? 1 : std::stoi(name.substr(base.size() + 1));
  return base + "-" + std::to_string(n + 1);
}

} // namespace

std::string RuleSet::reserve(const std::string& base) {
  std::string name = base;
  for (int n = 2; taken(name); ++n)
    name = base + "-" + std::to_string(n);
  index_[name] = rules_.size();
  rules_.emplace_back(name, "");
  return name;
}

void RuleSet::define(const std::string& name, std::string body) {
  rules_[index_.at(name)].second = std::move(body);
}

std::string RuleSet::add(const std::string& base, std::string body) {
  for (std::string name = base;; name = next_name(base, name)) {
    const auto it = index_.find(name);
    if (it == index_.end() && !find_primitive(name)) {
      index_[name] = rules_.size();
      rules_.emplace_back(name, std::move(body));
      return name;
    }
    if (it != index_.end() && rules_[it->second].second == body)
      return name;
  }
}

std::string RuleSet::use(const char* name) {
  if (used_.insert(name).second)
    for (const char* dep : find_primitive(name)->uses)
      use(dep);
  return name;
}

std::string RuleSet::text() const {
  std::string out;
  for (const auto& [name, body] : rules_)
    out += name + " ::= " + body + "\n";
  for (const Primitive& p : primitives())
    if (used_.count(p.name))
      out += std::string(p.name) + " ::= " + p.body + "\n";
  return out;
}

bool RuleSet::taken(const std::string& name) const {
  return index_.count(name) || find_primitive(name);
}

std::string sanitize(std::string_view text) {
  std::string out;
  for (char c : text) {
    const bool alnum = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
    if (alnum)
      out += c;
    else if (!out.empty() && out.back() != '-')
      out += '-';
  }
  while (!out.empty() && out.back() == '-')
    out.pop_back();
  return out;
}

std::string child_name(const std::string& parent, std::string_view key) {
  std::string k = sanitize(key);
  if (k.empty())
    k = "part";
  const bool letter_first = (k[0] >= 'a' && k[0] <= 'z') || (k[0] >= 'A' && k[0] <= 'Z');
  return parent == "root" && letter_first ? k : parent + "-" + k;
}

} // namespace pshard::json_grammar
