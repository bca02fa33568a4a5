// json_schema_to_gbnf: the schema is walked once, top-down. Each schema becomes a GBNF
// expression; the ones that are not a single term (objects, alternatives, bounded
// strings, ...) become rules named after where they sit, and each $ref target becomes a
// rule named after its last pointer segment, created before its body so recursion finds
// it. Shared pieces (string, number, ws, ...) are fixed rules emitted only when used.
#include "runtime/grammar/json_schema_grammar.h"

#include "runtime/tokenizer/utf8.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <utility>
#include <vector>

namespace pshard {
namespace {

// ordered_json keeps an object's keys in the text's order: properties are generated in
// the order the schema lists them.
using Json = nlohmann::ordered_json;

constexpr int kMaxNesting = 200;         // schema levels (and regex groups) walked recursively
constexpr size_t kMaxJsonDepth = 1000;   // see nesting_depth()
constexpr int64_t kMaxCount = 1000;      // GBNF's largest repetition count
constexpr int kIntDigits = 16;           // integer digits a number may have
constexpr int kMaxMergeSteps = 1000;     // $ref / allOf expansions while merging one allOf
constexpr size_t kMaxExtraKeyName = 256; // see not_names()
constexpr size_t kMaxRewrite = 10000;    // regex nodes, see without_empty()
constexpr char32_t kMaxCodePoint = 0x10FFFF;

// ---------------------------------------------------------------------------------------
// GBNF text

bool is_name_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
         c == '_';
}

std::string hex_digits(uint32_t v, int width) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string s(static_cast<size_t>(width), '0');
  for (int i = width - 1; i >= 0; --i, v >>= 4)
    s[static_cast<size_t>(i)] = kHex[v & 15];
  return s;
}

// One code point as GBNF source inside a literal ("...") or a class ([...]); ASCII
// only, so the emitted grammar prints anywhere.
std::string gbnf_char(char32_t cp, bool in_class) {
  switch (cp) {
  case '\n':
    return "\\n";
  case '\r':
    return "\\r";
  case '\t':
    return "\\t";
  case '\\':
    return "\\\\";
  case '"':
    return in_class ? "\"" : "\\\"";
  case '[':
  case ']':
  case '-':
  case '^':
    if (in_class)
      return std::string("\\") + static_cast<char>(cp);
    break;
  default:
    break;
  }
  if (cp < 0x20 || cp == 0x7F)
    return "\\x" + hex_digits(cp, 2);
  if (cp < 0x80)
    return std::string(1, static_cast<char>(cp));
  if (cp <= 0xFFFF)
    return "\\u" + hex_digits(cp, 4);
  return "\\U" + hex_digits(cp, 8);
}

std::u32string code_points(std::string_view utf8) {
  std::u32string out;
  for (size_t pos = 0; pos < utf8.size();) {
    size_t n = 0;
    const char32_t cp = decode_utf8(utf8, pos, &n);
    if (n == 0) { // the JSON parser checked the UTF-8; a stray byte cannot get here
      out.push_back(0xFFFD);
      ++pos;
      continue;
    }
    out.push_back(cp);
    pos += n;
  }
  return out;
}

// A GBNF literal matching exactly the bytes of `utf8`.
std::string literal(std::string_view utf8) {
  std::string out = "\"";
  for (char32_t cp : code_points(utf8))
    out += gbnf_char(cp, false);
  return out + "\"";
}

// The non-empty parts joined by spaces: a GBNF sequence.
std::string seq(std::initializer_list<std::string> parts) {
  std::string out;
  for (const std::string& p : parts) {
    if (p.empty())
      continue;
    if (!out.empty())
      out += ' ';
    out += p;
  }
  return out;
}

std::string join(const std::vector<std::string>& parts, std::string_view sep) {
  std::string out;
  for (size_t i = 0; i < parts.size(); ++i) {
    if (i)
      out += sep;
    out += parts[i];
  }
  return out;
}

// The top-level shape of a GBNF expression: how many terms, whether it is an
// alternation, whether a term carries a postfix.
struct Shape {
  int terms = 0;
  bool alternation = false;
  bool postfix = false;
};

Shape shape_of(std::string_view e) {
  Shape s;
  int depth = 0;
  for (size_t i = 0; i < e.size();) {
    const char c = e[i];
    if (c == '"' || c == '[') { // skip the literal or class, whose text may hold ( | )
      const char close = c == '"' ? '"' : ']';
      for (++i; i < e.size() && e[i] != close; ++i)
        if (e[i] == '\\')
          ++i;
      ++i;
      s.terms += depth == 0;
      continue;
    }
    if (c == '(') {
      s.terms += depth == 0;
      ++depth, ++i;
      continue;
    }
    if (c == ')') {
      --depth, ++i;
      continue;
    }
    if (depth == 0) {
      if (c == '|') {
        s.alternation = true;
      } else if (c == '*' || c == '+' || c == '?') {
        s.postfix = true;
      } else if (c == '{') {
        s.postfix = true;
        while (i < e.size() && e[i] != '}')
          ++i;
      } else if (is_name_char(c)) {
        ++s.terms;
        while (i < e.size() && is_name_char(e[i]))
          ++i;
        continue;
      }
    }
    ++i;
  }
  return s;
}

// Whether `e` is one term that can take a postfix as it is.
bool is_term(std::string_view e) {
  const Shape s = shape_of(e);
  return s.terms == 1 && !s.alternation && !s.postfix;
}
// `e` as one term.
std::string paren(const std::string& e) { return is_term(e) ? e : "( " + e + " )"; }
// `e` safe to place in a sequence.
std::string in_seq(const std::string& e) { return shape_of(e).alternation ? "( " + e + " )" : e; }
// Alternatives as one expression safe to place in a sequence.
std::string group(const std::vector<std::string>& alts) {
  return alts.size() == 1 ? in_seq(alts[0]) : "( " + join(alts, " | ") + " )";
}

std::string postfix(int64_t min, std::optional<int64_t> max) {
  if (!max)
    return min == 0 ? "*" : min == 1 ? "+" : "{" + std::to_string(min) + ",}";
  if (min == 0 && *max == 1)
    return "?";
  if (min == *max)
    return "{" + std::to_string(min) + "}";
  return "{" + std::to_string(min) + "," + std::to_string(*max) + "}";
}

// `term` repeated min..max times (max none: unbounded); "" for exactly zero.
std::string repeat(const std::string& term, int64_t min, std::optional<int64_t> max) {
  if (max && *max == 0)
    return "";
  if (max && min == 1 && *max == 1)
    return term;
  return paren(term) + postfix(min, max);
}

// ---------------------------------------------------------------------------------------
// Sets of code points

using Ranges = std::vector<std::pair<char32_t, char32_t>>; // sorted, disjoint, inclusive

Ranges normalized(Ranges r) {
  std::sort(r.begin(), r.end());
  Ranges out;
  for (auto [lo, hi] : r) {
    if (!out.empty() && lo <= out.back().second + 1)
      out.back().second = std::max(out.back().second, hi);
    else
      out.emplace_back(lo, hi);
  }
  return out;
}

Ranges complement(const Ranges& r) {
  Ranges out;
  char32_t next = 0;
  for (auto [lo, hi] : r) {
    if (lo > next)
      out.emplace_back(next, lo - 1);
    next = hi + 1;
  }
  if (next <= kMaxCodePoint)
    out.emplace_back(next, kMaxCodePoint);
  return out;
}

Ranges intersect(const Ranges& a, const Ranges& b) {
  Ranges out;
  for (auto [alo, ahi] : a)
    for (auto [blo, bhi] : b) {
      const char32_t lo = std::max(alo, blo), hi = std::min(ahi, bhi);
      if (lo <= hi)
        out.emplace_back(lo, hi);
    }
  return normalized(out);
}

Ranges subtract(const Ranges& a, const Ranges& b) { return intersect(a, complement(b)); }

Ranges single(char32_t cp) { return {{cp, cp}}; }

bool is_single(const Ranges& r) { return r.size() == 1 && r[0].first == r[0].second; }

// Characters JSON strings must escape, plus DEL, which the generated strings write as
// \u007F like the shared `char` rule does.
const Ranges& json_escaped() {
  static const Ranges r = {{0x00, 0x1F}, {'"', '"'}, {'\\', '\\'}, {0x7F, 0x7F}};
  return r;
}

// A GBNF class of `r` (surrogates left out: they are no characters); "" if empty.
std::string class_text(const Ranges& r) {
  const Ranges chars = subtract(r, {{0xD800, 0xDFFF}});
  if (chars.empty())
    return "";
  std::string out = "[";
  for (auto [lo, hi] : chars) {
    out += gbnf_char(lo, true);
    if (hi == lo)
      continue;
    if (hi != lo + 1)
      out += '-';
    out += gbnf_char(hi, true);
  }
  return out + "]";
}

// The JSON-string form of one code point as the model writes it: JSON's short escapes
// where it has them, \u00XX for other control characters and DEL, else the character.
std::string json_char(char32_t cp) {
  switch (cp) {
  case '"':
    return "\\\"";
  case '\\':
    return "\\\\";
  case '\b':
    return "\\b";
  case '\f':
    return "\\f";
  case '\n':
    return "\\n";
  case '\r':
    return "\\r";
  case '\t':
    return "\\t";
  default:
    break;
  }
  if (cp < 0x20 || cp == 0x7F)
    return "\\u00" + hex_digits(cp, 2);
  std::string s;
  append_utf8(cp, s);
  return s;
}

// Characters as one GBNF term: a literal for one, else a class.
std::string chars_term(const std::string& chars) {
  if (chars.size() == 1)
    return literal(chars);
  Ranges r;
  for (char c : chars)
    r.emplace_back(static_cast<unsigned char>(c), static_cast<unsigned char>(c));
  return class_text(normalized(r));
}

// Alternatives matching one character of `r` as written inside a JSON string: the
// characters written as they are, then `\` and the escapes of the others (short ones
// as one class, \u00XX grouped by their first hex digit).
std::vector<std::string> encoded_set(const Ranges& r) {
  std::vector<std::string> alts;
  if (std::string raw = class_text(subtract(r, json_escaped())); !raw.empty())
    alts.push_back(raw);
  std::string short_escapes;
  std::map<char, std::string> hex_by_first; // \u00XY: X -> the Ys
  for (auto [lo, hi] : intersect(r, json_escaped()))
    for (char32_t cp = lo; cp <= hi; ++cp) {
      const std::string e = json_char(cp);
      if (e.size() == 2)
        short_escapes += e[1];
      else
        hex_by_first[e[4]] += e[5];
    }
  std::vector<std::string> after_backslash;
  if (!short_escapes.empty())
    after_backslash.push_back(chars_term(short_escapes));
  std::vector<std::string> hex;
  for (const auto& [first, seconds] : hex_by_first)
    hex.push_back(seconds.size() == 1 ? literal(std::string(1, first) + seconds)
                                      : seq({literal(std::string(1, first)), chars_term(seconds)}));
  if (!hex.empty())
    after_backslash.push_back(seq({literal("u00"), group(hex)}));
  if (!after_backslash.empty())
    alts.push_back(seq({literal("\\"), group(after_backslash)}));
  return alts;
}

// ---------------------------------------------------------------------------------------
// Shared rules

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

// The rules of the grammar being written: named ones in the order they were made (root
// first), then the shared ones used.
class RuleSet {
public:
  RuleSet() { reserve("root"); }

  // A name not taken yet, `base` or `base-2`, `base-3`, ...
  std::string reserve(const std::string& base) {
    std::string name = base;
    for (int n = 2; taken(name); ++n)
      name = base + "-" + std::to_string(n);
    index_[name] = rules_.size();
    rules_.emplace_back(name, "");
    return name;
  }
  void define(const std::string& name, std::string body) {
    rules_[index_.at(name)].second = std::move(body);
  }
  // A rule for `body` named `base` (or base-2, ...), or the one with that name and body.
  std::string add(const std::string& base, std::string body) {
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
  // The shared rule `name` (and those it uses) will be emitted.
  std::string use(const char* name) {
    if (used_.insert(name).second)
      for (const char* dep : find_primitive(name)->uses)
        use(dep);
    return name;
  }

  std::string text() const {
    std::string out;
    for (const auto& [name, body] : rules_)
      out += name + " ::= " + body + "\n";
    for (const Primitive& p : primitives())
      if (used_.count(p.name))
        out += std::string(p.name) + " ::= " + p.body + "\n";
    return out;
  }

private:
  bool taken(const std::string& name) const { return index_.count(name) || find_primitive(name); }
  static std::string next_name(const std::string& base, const std::string& name) {
    const int n = name == base ? 1 : std::stoi(name.substr(base.size() + 1));
    return base + "-" + std::to_string(n + 1);
  }

  std::vector<std::pair<std::string, std::string>> rules_;
  std::map<std::string, size_t> index_;
  std::set<std::string> used_;
};

// A rule name from schema text: letters and digits kept, runs of anything else one '-';
// "" when nothing is left.
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

// The name for a part `key` of the schema named `parent`: the root's parts are named by
// their key alone (`age`), others are prefixed (`person-age`).
std::string child_name(const std::string& parent, std::string_view key) {
  std::string k = sanitize(key);
  if (k.empty())
    k = "part";
  const bool letter_first = (k[0] >= 'a' && k[0] <= 'z') || (k[0] >= 'A' && k[0] <= 'Z');
  return parent == "root" && letter_first ? k : parent + "-" + k;
}

// ---------------------------------------------------------------------------------------
// Messages

std::string pointer_token(std::string_view key) {
  std::string out;
  for (char c : key)
    out += c == '~' ? "~0" : c == '/' ? "~1" : std::string(1, c);
  return out;
}
std::string at(const std::string& ptr, std::string_view key) {
  return ptr + "/" + pointer_token(key);
}
std::string where(const std::string& ptr) {
  return ptr.empty() ? "at the schema's root" : "at " + ptr;
}

Status bad_keyword(const std::string& ptr, std::string_view key, const std::string& what) {
  return invalid_argument("'" + std::string(key) + "' " + where(at(ptr, key)) + " " + what);
}
Status unsupported_keyword(const std::string& ptr, std::string_view key,
                           const std::string& why = "") {
  return unsupported("the keyword '" + std::string(key) + "' " + where(at(ptr, key)) +
                     " is not supported" + (why.empty() ? "" : " (" + why + ")"));
}

// ---------------------------------------------------------------------------------------
// Keywords

const Json* member(const Json& s, const char* key) {
  if (!s.is_object())
    return nullptr;
  const auto it = s.find(key);
  return it == s.end() ? nullptr : &*it;
}

bool is_annotation(std::string_view key) {
  static const std::set<std::string_view> k = {
      "title",         "description", "default",        "examples",        "$schema",
      "$id",           "$anchor",     "$dynamicAnchor", "$vocabulary",     "$comment",
      "deprecated",    "readOnly",    "writeOnly",      "contentEncoding", "contentMediaType",
      "contentSchema", "$defs",       "definitions"};
  return k.count(key) > 0;
}

// Keywords that constrain values and are not implemented: refused wherever they appear.
bool is_refused(std::string_view key) {
  static const std::set<std::string_view> k = {"multipleOf",
                                               "not",
                                               "if",
                                               "then",
                                               "else",
                                               "patternProperties",
                                               "propertyNames",
                                               "dependentRequired",
                                               "dependentSchemas",
                                               "dependencies",
                                               "minProperties",
                                               "maxProperties",
                                               "unevaluatedProperties",
                                               "unevaluatedItems",
                                               "contains",
                                               "minContains",
                                               "maxContains",
                                               "$dynamicRef",
                                               "$recursiveRef"};
  return k.count(key) > 0;
}

Status check_keywords(const Json& s, const std::string& ptr) {
  for (auto it = s.begin(); it != s.end(); ++it) {
    const std::string& key = it.key();
    if (key == "uniqueItems") {
      if (!it->is_boolean())
        return bad_keyword(ptr, key, "must be true or false");
      if (it->get<bool>())
        return unsupported_keyword(ptr, key, "a grammar cannot keep items distinct");
    } else if (is_refused(key)) {
      return unsupported_keyword(ptr, key);
    }
  }
  return Status::ok_status();
}

// Whether `s` has keywords other than annotations and those in `also`.
bool has_constraints_besides(const Json& s, std::initializer_list<std::string_view> also) {
  for (auto it = s.begin(); it != s.end(); ++it)
    if (!is_annotation(it.key()) && std::find(also.begin(), also.end(), it.key()) == also.end())
      return true;
  return false;
}

const std::set<std::string>& type_names() {
  static const std::set<std::string> t = {"string", "number", "integer", "boolean",
                                          "null",   "object", "array"};
  return t;
}

// The types `type` names, in its order.
Result<std::vector<std::string>> read_types(const Json& type, const std::string& ptr) {
  std::vector<std::string> out;
  auto add = [&](const Json& t) -> Status {
    if (!t.is_string())
      return bad_keyword(ptr, "type", "must be a type name or an array of them");
    const std::string name = t.get<std::string>();
    if (!type_names().count(name))
      return bad_keyword(ptr, "type",
                         "names an unknown type '" + name +
                             "' (string, number, integer, boolean, null, object, array)");
    if (std::find(out.begin(), out.end(), name) == out.end())
      out.push_back(name);
    return Status::ok_status();
  };
  if (type.is_array()) {
    for (const Json& t : type)
      PSHARD_RETURN_IF_ERROR(add(t));
    if (out.empty())
      return bad_keyword(ptr, "type", "is an empty array: no value has no type");
  } else {
    PSHARD_RETURN_IF_ERROR(add(type));
  }
  return out;
}

// A count keyword (minLength, maxItems, ...): a non-negative whole number.
Result<std::optional<int64_t>> read_count(const Json& s, const char* key, const std::string& ptr) {
  const Json* v = member(s, key);
  if (!v)
    return std::optional<int64_t>();
  if (v->is_number_unsigned())
    return std::optional<int64_t>(
        static_cast<int64_t>(std::min<uint64_t>(v->get<uint64_t>(), INT64_MAX)));
  if (v->is_number_integer() && v->get<int64_t>() >= 0)
    return std::optional<int64_t>(v->get<int64_t>());
  if (v->is_number_float()) {
    const double d = v->get<double>();
    if (d >= 0 && std::floor(d) == d)
      return std::optional<int64_t>(d >= 9e18 ? INT64_MAX : static_cast<int64_t>(d));
  }
  return bad_keyword(ptr, key, "must be a non-negative whole number");
}

Status check_count(int64_t n, const std::string& ptr, const char* key) {
  if (n > kMaxCount)
    return unsupported_keyword(ptr, key, "counts above " + std::to_string(kMaxCount));
  return Status::ok_status();
}

// ---------------------------------------------------------------------------------------
// Integer and number ranges as digit patterns

uint64_t pow10(int n) {
  uint64_t v = 1;
  while (n-- > 0)
    v *= 10;
  return v;
}
int digit_count(uint64_t v) { return static_cast<int>(std::to_string(v).size()); }

std::string digit_class(char lo, char hi) {
  return lo == hi ? literal(std::string(1, lo)) : std::string("[") + lo + "-" + hi + "]";
}
std::string any_digits(int64_t min, int64_t max) {
  if (max == 0)
    return "";
  return repeat("[0-9]", min, max);
}

// Alternatives matching the decimal strings from `lo` to `hi` (as long as each other),
// after the fixed digits `prefix`; disjoint, so the grammar stays unambiguous.
void same_length_range(std::string lo, std::string hi, std::string prefix,
                       std::vector<std::string>& alts) {
  size_t i = 0;
  while (i < lo.size() && lo[i] == hi[i])
    ++i;
  prefix += lo.substr(0, i);
  lo.erase(0, i);
  hi.erase(0, i);
  const std::string head = prefix.empty() ? "" : literal(prefix);
  if (lo.empty()) {
    alts.push_back(head);
    return;
  }
  const size_t rest = lo.size() - 1;
  const bool lo_zeros = lo.find_first_not_of('0', 1) == std::string::npos;
  const bool hi_nines = hi.find_first_not_of('9', 1) == std::string::npos;
  char first = lo[0], last = hi[0];
  if (!lo_zeros) { // lo..l99: its own tail
    same_length_range(lo, std::string(1, lo[0]) + std::string(rest, '9'), prefix, alts);
    ++first;
  }
  if (!hi_nines)
    --last;
  if (first <= last)
    alts.push_back(seq({head, digit_class(first, last),
                        any_digits(static_cast<int64_t>(rest), static_cast<int64_t>(rest))}));
  if (!hi_nines) // h00..hi
    same_length_range(std::string(1, hi[0]) + std::string(rest, '0'), hi, prefix, alts);
}

// Alternatives matching the naturals in [lo, hi] written without leading zeros (hi none:
// up to kIntDigits digits, or lo's length if longer). lo <= hi < 10^18.
std::vector<std::string> natural_range(uint64_t lo, std::optional<uint64_t> hi) {
  std::vector<std::string> alts;
  const int max_len = hi ? digit_count(*hi) : std::max(kIntDigits, digit_count(lo));
  if (lo == 0) {
    alts.push_back(literal("0"));
    if (hi && *hi == 0)
      return alts;
    lo = 1;
  }
  for (int len = digit_count(lo); len <= max_len; ++len) {
    const uint64_t first = pow10(len - 1), last = pow10(len) - 1;
    const uint64_t a = std::max(lo, first), b = hi ? std::min(*hi, last) : last;
    if (a > b)
      continue;
    if (a == first && b == last) { // whole lengths len..len2: [1-9] [0-9]{len-1,len2-1}
      int len2 = len;
      while (len2 < max_len && (!hi || *hi >= pow10(len2 + 1) - 1))
        ++len2;
      alts.push_back(seq({"[1-9]", any_digits(len - 1, len2 - 1)}));
      len = len2;
      continue;
    }
    same_length_range(std::to_string(a), std::to_string(b), "", alts);
  }
  return alts;
}

struct Bound {
  int64_t value = 0;
  bool exclusive = false;
};

// Alternatives matching decimals `I` or `I.F` (F up to 16 digits) whose value is above
// `lower` and below `upper` (none: unbounded), 0 <= lower.value. Integer parts in
// [lower+1 or lower, upper-1] take any fraction, upper itself only zeros, and an
// exclusive lower bound itself only a fraction that is not zero (its first non-zero digit
// among the first 8, so that it stays within 16 digits).
std::vector<std::string> decimal_range(Bound lower, std::optional<Bound> upper) {
  std::vector<std::string> alts;
  const int64_t ilo = lower.exclusive ? lower.value + 1 : lower.value;
  const std::optional<int64_t> ihi =
      upper ? std::optional<int64_t>(upper->value - 1) : std::optional<int64_t>();
  if (!ihi || ilo <= *ihi) {
    const auto ints =
        natural_range(static_cast<uint64_t>(ilo),
                      ihi ? std::optional<uint64_t>(static_cast<uint64_t>(*ihi)) : std::nullopt);
    alts.push_back(seq({group(ints), R"(( "." [0-9]{1,16} )?)"}));
  }
  if (upper && !upper->exclusive &&
      (lower.exclusive ? upper->value > lower.value : upper->value >= lower.value))
    alts.push_back(seq({literal(std::to_string(upper->value)), R"(( "." "0"{1,16} )?)"}));
  if (lower.exclusive && (!upper || upper->value > lower.value))
    alts.push_back(seq({literal(std::to_string(lower.value)), R"("." "0"{0,7} [1-9] [0-9]{0,8})"}));
  return alts;
}

// Reads minimum / exclusiveMinimum (or the maximums) as whole-number bounds.
class BoundReader {
public:
  BoundReader(const Json& s, const std::string& ptr, bool integer)
      : s_(s), ptr_(ptr), integer_(integer) {}

  // The tightest bound on one side; none when there is none or it lies past what
  // kIntDigits digits can reach anyway.
  Result<std::optional<Bound>> read(bool lower) {
    const char* plain = lower ? "minimum" : "maximum";
    const char* excl = lower ? "exclusiveMinimum" : "exclusiveMaximum";
    std::optional<Bound> best;
    const Json* p = member(s_, plain);
    const Json* e = member(s_, excl);
    if (p && !p->is_number())
      return bad_keyword(ptr_, plain, "must be a number");
    if (e && !e->is_number() && !e->is_boolean())
      return bad_keyword(ptr_, excl, "must be a number (or, in draft 4, a boolean)");
    const bool draft4_exclusive = e && e->is_boolean() && e->get<bool>();
    if (e && e->is_boolean() && !p && draft4_exclusive)
      return bad_keyword(ptr_, excl, std::string("is true without '") + plain + "'");
    if (p)
      PSHARD_RETURN_IF_ERROR(tighten(best, *p, draft4_exclusive, lower, plain));
    if (e && e->is_number())
      PSHARD_RETURN_IF_ERROR(tighten(best, *e, true, lower, excl));
    return best;
  }

private:
  Status tighten(std::optional<Bound>& best, const Json& v, bool exclusive, bool lower,
                 const char* key) {
    // long double holds every int64 and every double exactly.
    long double x = v.is_number_unsigned()  ? static_cast<long double>(v.get<uint64_t>())
                    : v.is_number_integer() ? static_cast<long double>(v.get<int64_t>())
                                            : static_cast<long double>(v.get<double>());
    if (!std::isfinite(x))
      return bad_keyword(ptr_, key, "must be finite");
    Bound b;
    if (integer_) { // the nearest integer inside, inclusive
      x = lower ? (exclusive ? std::floor(x) + 1 : std::ceil(x))
                : (exclusive ? std::ceil(x) - 1 : std::floor(x));
      exclusive = false;
    } else if (std::floor(x) != x) {
      return unsupported_keyword(ptr_, key, "a number's bounds must be whole numbers");
    }
    const long double reach = static_cast<long double>(pow10(kIntDigits));
    if (lower ? x <= -reach : x >= reach)
      return Status::ok_status(); // looser than the digit limit: no bound
    if (lower ? x >= reach : x <= -reach)
      return unsupported_keyword(ptr_, key, "it needs numbers longer than 16 digits");
    b.value = static_cast<int64_t>(x);
    b.exclusive = exclusive;
    const bool tighter = !best || (lower ? b.value > best->value : b.value < best->value) ||
                         (b.value == best->value && b.exclusive);
    if (tighter)
      best = b;
    return Status::ok_status();
  }

  const Json& s_;
  const std::string& ptr_;
  bool integer_;
};

// Integers in [lo, hi] (none: unbounded).
std::vector<std::string> integer_range(std::optional<int64_t> lo, std::optional<int64_t> hi) {
  std::vector<std::string> alts;
  if (!hi || *hi >= 0) {
    const uint64_t from = lo && *lo > 0 ? static_cast<uint64_t>(*lo) : 0;
    auto nat = natural_range(from, hi ? std::optional<uint64_t>(*hi) : std::nullopt);
    alts.insert(alts.end(), nat.begin(), nat.end());
  }
  if (!lo || *lo < 0) { // magnitudes of the negatives
    const uint64_t from = hi && *hi < 0 ? static_cast<uint64_t>(-*hi) : 1;
    auto nat = natural_range(from, lo ? std::optional<uint64_t>(-*lo) : std::nullopt);
    alts.push_back(seq({literal("-"), group(nat)}));
  }
  return alts;
}

// Decimals (no exponent) between the bounds; at least one bound is given.
std::vector<std::string> number_range(std::optional<Bound> lower, std::optional<Bound> upper) {
  std::vector<std::string> alts;
  const bool has_nonnegative =
      !upper || upper->value > 0 || (upper->value == 0 && !upper->exclusive);
  if (has_nonnegative) {
    const Bound from = lower && lower->value >= 0 ? *lower : Bound{0, false};
    auto d = decimal_range(from, upper);
    alts.insert(alts.end(), d.begin(), d.end());
  }
  if (!lower || lower->value < 0) { // magnitudes of the negatives, above zero
    const Bound from =
        upper && upper->value < 0 ? Bound{-upper->value, upper->exclusive} : Bound{0, true};
    std::optional<Bound> to;
    if (lower)
      to = Bound{-lower->value, lower->exclusive};
    auto d = decimal_range(from, to);
    if (!d.empty())
      alts.push_back(seq({literal("-"), group(d)}));
  }
  return alts;
}

// ---------------------------------------------------------------------------------------
// Regular expressions (ECMAScript syntax, the subset in the header) -> GBNF over the
// JSON-escaped form of the string

struct Regex {
  enum Kind { kSet, kSeq, kAlt, kRepeat };
  Kind kind = kSeq;
  Ranges set;                 // kSet
  std::vector<Regex> kids;    // kSeq, kAlt; kRepeat has one
  int64_t min = 1;            // kRepeat
  std::optional<int64_t> max; // kRepeat; none: unbounded
};

Regex regex_of(Regex::Kind kind) {
  Regex r;
  r.kind = kind;
  return r;
}

bool nullable(const Regex& r) {
  switch (r.kind) {
  case Regex::kSet:
    return false;
  case Regex::kSeq:
    return std::all_of(r.kids.begin(), r.kids.end(), nullable);
  case Regex::kAlt:
    return std::any_of(r.kids.begin(), r.kids.end(), nullable);
  case Regex::kRepeat:
    return r.min == 0 || nullable(r.kids[0]);
  }
  return false;
}

size_t regex_size(const Regex& r) {
  size_t n = 1;
  for (const Regex& kid : r.kids)
    n += regex_size(kid);
  return n;
}

// `r` without the empty string (none when nothing else is left), for repeating a part
// that can match empty: x{0,n} = (x without "")  {0,n} as languages, and GBNF (like any
// top-down matcher) cannot repeat a part that matches empty. Called on nullable parts;
// `budget` bounds how large the rewrite may grow.
std::optional<Regex> without_empty(const Regex& r, size_t& budget) {
  if (budget == 0)
    return std::nullopt;
  --budget;
  switch (r.kind) {
  case Regex::kSet:
    return r;
  case Regex::kAlt: {
    Regex out = regex_of(Regex::kAlt);
    for (const Regex& kid : r.kids)
      if (auto k = nullable(kid) ? without_empty(kid, budget) : std::optional<Regex>(kid))
        out.kids.push_back(std::move(*k));
    if (out.kids.empty())
      return std::nullopt;
    return out.kids.size() == 1 ? std::optional<Regex>(std::move(out.kids[0])) : out;
  }
  case Regex::kSeq: { // all parts nullable: the first non-empty one is part i
    if (!nullable(r))
      return r;
    Regex out = regex_of(Regex::kAlt);
    for (size_t i = 0; i < r.kids.size(); ++i) {
      auto first = without_empty(r.kids[i], budget);
      if (!first)
        continue;
      Regex alt = regex_of(Regex::kSeq);
      alt.kids.push_back(std::move(*first));
      alt.kids.insert(alt.kids.end(), r.kids.begin() + static_cast<long>(i) + 1, r.kids.end());
      for (size_t k = i + 1; k < r.kids.size(); ++k)
        budget = budget > regex_size(r.kids[k]) ? budget - regex_size(r.kids[k]) : 0;
      out.kids.push_back(std::move(alt));
    }
    if (out.kids.empty())
      return std::nullopt;
    return out.kids.size() == 1 ? std::optional<Regex>(std::move(out.kids[0])) : out;
  }
  case Regex::kRepeat: {
    if (r.max && *r.max == 0)
      return std::nullopt;
    auto item =
        nullable(r.kids[0]) ? without_empty(r.kids[0], budget) : std::optional<Regex>(r.kids[0]);
    if (!item)
      return std::nullopt;
    Regex out = regex_of(Regex::kRepeat);
    out.min = 1;
    out.max = r.max;
    out.kids.push_back(std::move(*item));
    return out;
  }
  }
  return std::nullopt;
}

// ECMAScript's \s (WhiteSpace and LineTerminator).
Ranges ecmascript_space() {
  return normalized({{'\t', '\r'},
                     {' ', ' '},
                     {0xA0, 0xA0},
                     {0x1680, 0x1680},
                     {0x2000, 0x200A},
                     {0x2028, 0x2029},
                     {0x202F, 0x202F},
                     {0x205F, 0x205F},
                     {0x3000, 0x3000},
                     {0xFEFF, 0xFEFF}});
}

// \d \w \s and their complements. Patterns are ECMAScript's, but validators written in
// other languages differ on \s (Python's also has \x1C-\x1F and U+0085, not U+FEFF), so
// \s takes only what both call space and \S nothing that either does.
Ranges regex_class_of(char32_t letter) {
  switch (letter) {
  case 'd':
    return {{'0', '9'}};
  case 'D':
    return complement({{'0', '9'}});
  case 'w':
    return normalized({{'0', '9'}, {'A', 'Z'}, {'_', '_'}, {'a', 'z'}});
  case 'W':
    return complement(regex_class_of('w'));
  case 's':
    return subtract(ecmascript_space(), {{0xFEFF, 0xFEFF}});
  default: { // 'S'
    Ranges any_space = ecmascript_space();
    any_space.insert(any_space.end(), {{0x1C, 0x1F}, {0x85, 0x85}});
    return complement(normalized(any_space));
  }
  }
}

class RegexParser {
public:
  struct Branch {
    Regex re;
    bool anchored_start = false, anchored_end = false;
  };

  RegexParser(std::string_view pattern, std::string ptr)
      : p_(code_points(pattern)), ptr_(std::move(ptr)) {}

  // The top-level alternatives, each with whether ^ and $ anchor it.
  Result<std::vector<Branch>> parse() {
    std::vector<Branch> branches;
    while (true) {
      Branch b;
      PSHARD_RETURN_IF_ERROR(parse_sequence(b.re, 0, &b));
      branches.push_back(std::move(b));
      if (at_end())
        return branches;
      if (peek() != '|')
        return bad("an unmatched ')'");
      ++pos_;
    }
  }

private:
  bool at_end() const { return pos_ >= p_.size(); }
  char32_t peek(size_t ahead = 0) const { return pos_ + ahead < p_.size() ? p_[pos_ + ahead] : 0; }
  Status bad(const std::string& what) const {
    return invalid_argument("the pattern " + where(ptr_) + " is malformed: " + what +
                            " (at character " + std::to_string(pos_) + ")");
  }
  Status refuse(const std::string& what) const {
    return unsupported("the pattern " + where(ptr_) + " uses " + what + ", which is not supported");
  }

  Status parse_alternation(Regex& out, int depth) {
    Regex alt = regex_of(Regex::kAlt);
    while (true) {
      Regex s;
      PSHARD_RETURN_IF_ERROR(parse_sequence(s, depth, nullptr));
      alt.kids.push_back(std::move(s));
      if (peek() != '|' || at_end())
        break;
      ++pos_;
    }
    out = alt.kids.size() == 1 ? std::move(alt.kids[0]) : std::move(alt);
    return Status::ok_status();
  }

  // Atoms with their quantifiers up to `|`, `)` or the end; `top` is the top-level
  // branch, where ^ may start and $ may end it.
  Status parse_sequence(Regex& out, int depth, Branch* top) {
    out = regex_of(Regex::kSeq);
    while (!at_end() && peek() != '|' && peek() != ')') {
      const char32_t c = peek();
      if (c == '^') {
        if (!top || !out.kids.empty() || top->anchored_start)
          return refuse("'^' other than at the start of the pattern or of a top-level '|' branch");
        top->anchored_start = true;
        ++pos_;
        continue;
      }
      if (c == '$') {
        if (!top || !(pos_ + 1 == p_.size() || p_[pos_ + 1] == '|'))
          return refuse("'$' other than at the end of the pattern or of a top-level '|' branch");
        top->anchored_end = true;
        ++pos_;
        continue;
      }
      if (c == '*' || c == '+' || c == '?' || (c == '{' && peek_count()))
        return bad("a quantifier with nothing to repeat");
      Regex atom;
      PSHARD_RETURN_IF_ERROR(parse_atom(atom, depth));
      PSHARD_RETURN_IF_ERROR(parse_quantifier(atom));
      out.kids.push_back(std::move(atom));
    }
    return Status::ok_status();
  }

  Status parse_atom(Regex& out, int depth) {
    const char32_t c = peek();
    ++pos_;
    if (c == '(')
      return parse_group(out, depth);
    out = regex_of(Regex::kSet);
    if (c == '[')
      return parse_class(out.set);
    if (c == '.') { // any character but line terminators
      out.set = complement(normalized({{'\n', '\n'}, {'\r', '\r'}, {0x2028, 0x2029}}));
      return Status::ok_status();
    }
    if (c == '\\')
      return parse_escape(out.set, /*in_class=*/false);
    out.set = single(c); // '{', '}' and ']' alone are characters, as in ECMAScript
    return Status::ok_status();
  }

  Status parse_group(Regex& out, int depth) {
    if (depth >= kMaxNesting)
      return refuse("groups nested deeper than " + std::to_string(kMaxNesting));
    if (peek() == '?') {
      const char32_t k = peek(1);
      if (k == ':') {
        pos_ += 2;
      } else if (k == '=' || k == '!' || (k == '<' && (peek(2) == '=' || peek(2) == '!'))) {
        return refuse("lookaround ('(?=', '(?!', '(?<=', '(?<!')");
      } else if (k == '<') { // a named group: its name does not change what matches
        pos_ += 2;
        while (!at_end() && peek() != '>')
          ++pos_;
        if (at_end())
          return bad("a group name without '>'");
        ++pos_;
      } else {
        return refuse("the group syntax '(?" + std::string(1, static_cast<char>(k)) +
                      "' (inline flags or modifiers)");
      }
    }
    PSHARD_RETURN_IF_ERROR(parse_alternation(out, depth + 1));
    if (peek() != ')' || at_end())
      return bad("a '(' without ')'");
    ++pos_;
    return Status::ok_status();
  }

  // {m}, {m,}, {m,n} at pos_: its bounds, with pos_ past it; none (pos_ unchanged) when
  // the '{' starts no count and is a plain character.
  std::optional<std::pair<int64_t, std::optional<int64_t>>> read_count() {
    size_t p = pos_ + 1;
    auto number = [&]() -> std::optional<int64_t> {
      int64_t v = 0;
      const size_t start = p;
      for (; p < p_.size() && p_[p] >= '0' && p_[p] <= '9'; ++p)
        v = std::min<int64_t>(v * 10 + (p_[p] - '0'), 1'000'000'000);
      return p > start ? std::optional<int64_t>(v) : std::nullopt;
    };
    const auto min = number();
    if (!min)
      return std::nullopt;
    std::optional<int64_t> max = min;
    if (p < p_.size() && p_[p] == ',') {
      ++p;
      max = number();
    }
    if (p >= p_.size() || p_[p] != '}')
      return std::nullopt;
    pos_ = p + 1;
    return std::make_pair(*min, max);
  }
  bool peek_count() {
    const size_t keep = pos_;
    const bool is = read_count().has_value();
    pos_ = keep;
    return is;
  }

  Status parse_quantifier(Regex& atom) {
    int64_t min = 1;
    std::optional<int64_t> max = 1;
    const char32_t c = peek();
    if (at_end()) {
      return Status::ok_status();
    } else if (c == '*' || c == '+' || c == '?') {
      ++pos_;
      min = c == '+' ? 1 : 0;
      max = c == '?' ? std::optional<int64_t>(1) : std::nullopt;
    } else if (c == '{') {
      const auto count = read_count();
      if (!count)
        return Status::ok_status();
      std::tie(min, max) = *count;
    } else {
      return Status::ok_status();
    }
    if (peek() == '?' && !at_end())
      ++pos_; // lazy: the same strings match
    if (!at_end() &&
        (peek() == '*' || peek() == '+' || peek() == '?' || (peek() == '{' && peek_count())))
      return peek() == '+' ? refuse("a possessive quantifier") : bad("a quantifier repeated");
    if (max && *max < min)
      return bad("a count {m,n} with n below m");
    if (min > kMaxCount || (max && *max > kMaxCount))
      return refuse("a count above " + std::to_string(kMaxCount));
    if (min == 1 && max && *max == 1)
      return Status::ok_status();
    if (nullable(atom) && (!max || *max > 1)) { // (x?)* = x*: repeat x without ""
      size_t budget = kMaxRewrite;
      auto item = without_empty(atom, budget);
      if (budget == 0)
        return refuse("a repeated part that can match the empty string, too large to rewrite");
      if (!item) { // only "" to repeat
        atom = regex_of(Regex::kSeq);
        return Status::ok_status();
      }
      atom = std::move(*item);
      min = 0;
    }
    Regex rep = regex_of(Regex::kRepeat);
    rep.min = min;
    rep.max = max;
    rep.kids.push_back(std::move(atom));
    atom = std::move(rep);
    return Status::ok_status();
  }

  Result<char32_t> read_hex(int digits) {
    char32_t v = 0;
    for (int i = 0; i < digits; ++i, ++pos_) {
      const char32_t c = peek();
      const int d = at_end()               ? -1
                    : c >= '0' && c <= '9' ? static_cast<int>(c - '0')
                    : c >= 'a' && c <= 'f' ? static_cast<int>(c - 'a' + 10)
                    : c >= 'A' && c <= 'F' ? static_cast<int>(c - 'A' + 10)
                                           : -1;
      if (d < 0)
        return bad("expected " + std::to_string(digits) + " hex digits");
      v = v * 16 + static_cast<char32_t>(d);
    }
    return v;
  }

  // \uHHHH, a surrogate pair of them, or \u{H...}; pos_ after the 'u'.
  Result<char32_t> read_unicode_escape() {
    if (peek() == '{') {
      ++pos_;
      char32_t v = 0;
      int n = 0;
      for (; !at_end() && peek() != '}'; ++n) {
        PSHARD_ASSIGN_OR_RETURN(char32_t d, read_hex(1));
        v = std::min<char32_t>(v * 16 + d, kMaxCodePoint + 1);
      }
      if (at_end() || n == 0 || v > kMaxCodePoint)
        return bad("a malformed \\u{...} escape");
      ++pos_;
      return v;
    }
    PSHARD_ASSIGN_OR_RETURN(char32_t v, read_hex(4));
    if (v >= 0xD800 && v <= 0xDBFF && peek() == '\\' && peek(1) == 'u') {
      const size_t keep = pos_;
      pos_ += 2;
      auto low = read_hex(4);
      if (low.ok() && *low >= 0xDC00 && *low <= 0xDFFF)
        return 0x10000 + ((v - 0xD800) << 10) + (*low - 0xDC00);
      pos_ = keep;
    }
    if (v >= 0xD800 && v <= 0xDFFF)
      return refuse("a lone surrogate escape");
    return v;
  }

  // The characters an escape stands for; pos_ after the backslash.
  Status parse_escape(Ranges& set, bool in_class) {
    if (at_end())
      return bad("the pattern ends with '\\'");
    const char32_t c = peek();
    ++pos_;
    switch (c) {
    case 'd':
    case 'D':
    case 'w':
    case 'W':
    case 's':
    case 'S':
      set = regex_class_of(c);
      return Status::ok_status();
    case 'n':
      set = single('\n');
      return Status::ok_status();
    case 'r':
      set = single('\r');
      return Status::ok_status();
    case 't':
      set = single('\t');
      return Status::ok_status();
    case 'f':
      set = single('\f');
      return Status::ok_status();
    case 'v':
      set = single('\v');
      return Status::ok_status();
    case 'b':
      if (in_class) {
        set = single('\b');
        return Status::ok_status();
      }
      return refuse("a word boundary '\\b'");
    case 'B':
      return refuse("a word boundary '\\B'");
    case '0':
      if (peek() >= '0' && peek() <= '9' && !at_end())
        return refuse("an octal escape");
      set = single(0);
      return Status::ok_status();
    case 'k':
      return refuse("a named backreference '\\k'");
    case 'p':
    case 'P':
      return refuse("a Unicode property escape '\\p{...}'");
    case 'c':
      return refuse("a control escape '\\c'");
    case 'x': {
      PSHARD_ASSIGN_OR_RETURN(char32_t v, read_hex(2));
      set = single(v);
      return Status::ok_status();
    }
    case 'u': {
      PSHARD_ASSIGN_OR_RETURN(char32_t v, read_unicode_escape());
      set = single(v);
      return Status::ok_status();
    }
    default:
      break;
    }
    if (c >= '1' && c <= '9')
      return refuse("a backreference '\\" + std::string(1, static_cast<char>(c)) + "'");
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'))
      return refuse("the escape '\\" + std::string(1, static_cast<char>(c)) + "'");
    set = single(c); // an escaped punctuation character stands for itself
    return Status::ok_status();
  }

  // One class member: a character (single) or a class escape; pos_ moves past it.
  Status parse_class_atom(Ranges& set) {
    const char32_t c = peek();
    ++pos_;
    if (c == '\\')
      return parse_escape(set, /*in_class=*/true);
    set = single(c);
    return Status::ok_status();
  }

  // pos_ after '['.
  Status parse_class(Ranges& out) {
    const bool negated = peek() == '^' && !at_end();
    if (negated)
      ++pos_;
    Ranges r;
    while (true) {
      if (at_end())
        return bad("a '[' without ']'");
      if (peek() == ']') {
        ++pos_;
        break;
      }
      Ranges a;
      PSHARD_RETURN_IF_ERROR(parse_class_atom(a));
      if (peek() == '-' && pos_ + 1 < p_.size() && p_[pos_ + 1] != ']') {
        ++pos_;
        Ranges b;
        PSHARD_RETURN_IF_ERROR(parse_class_atom(b));
        if (is_single(a) && is_single(b)) {
          if (b[0].first < a[0].first)
            return bad("a class range whose end is below its start");
          r.emplace_back(a[0].first, b[0].first);
          continue;
        }
        r.emplace_back('-', '-'); // [\d-z]: '-' next to a class escape is a character
        r.insert(r.end(), b.begin(), b.end());
      }
      r.insert(r.end(), a.begin(), a.end());
    }
    r = normalized(r);
    out = negated ? complement(r) : r;
    return Status::ok_status();
  }

  std::u32string p_;
  size_t pos_ = 0;
  std::string ptr_;
};

// The GBNF for strings (between the quotes) that `re` matches.
Result<std::string> lower_regex(const Regex& re, const std::string& ptr) {
  switch (re.kind) {
  case Regex::kSet: {
    const auto alts = encoded_set(re.set);
    if (alts.empty())
      return unsupported("the pattern " + where(ptr) + " has a class that matches no character");
    return join(alts, " | ");
  }
  case Regex::kSeq: {
    std::vector<std::string> parts;
    std::string run; // characters in a row, one literal
    for (const Regex& kid : re.kids) {
      if (kid.kind == Regex::kSet && is_single(kid.set)) {
        run += json_char(kid.set[0].first);
        continue;
      }
      if (!run.empty())
        parts.push_back(literal(run));
      run.clear();
      PSHARD_ASSIGN_OR_RETURN(std::string k, lower_regex(kid, ptr));
      if (!k.empty())
        parts.push_back(in_seq(k));
    }
    if (!run.empty())
      parts.push_back(literal(run));
    return join(parts, " ");
  }
  case Regex::kAlt: {
    std::vector<std::string> alts;
    for (const Regex& kid : re.kids) {
      PSHARD_ASSIGN_OR_RETURN(std::string k, lower_regex(kid, ptr));
      alts.push_back(k);
    }
    return join(alts, " | ");
  }
  case Regex::kRepeat: {
    PSHARD_ASSIGN_OR_RETURN(std::string k, lower_regex(re.kids[0], ptr));
    return k.empty() ? "" : repeat(k, re.min, re.max);
  }
  }
  return std::string();
}

// ---------------------------------------------------------------------------------------
// Extra object keys that are not listed names

struct NameTrie {
  bool end = false;
  std::map<char32_t, NameTrie> kids;
};

// Key characters (unescaped, key-char) in a row that do not spell a name from this node
// on: end here unless a name ends here, or a character no name continues with and then
// anything, or a name's next character and the same again one node down.
std::string not_names(const NameTrie& node) {
  Ranges taken = json_escaped();
  for (const auto& [cp, kid] : node.kids)
    taken.emplace_back(cp, cp);
  std::vector<std::string> alts;
  if (std::string other = class_text(complement(normalized(taken))); !other.empty())
    alts.push_back(other + " key-char*");
  for (const auto& [cp, kid] : node.kids)
    alts.push_back(seq({literal(json_char(cp)), not_names(kid)}));
  const std::string g = "( " + join(alts, " | ") + " )";
  return node.end ? g : g + "?";
}

// ---------------------------------------------------------------------------------------
// The walk

class Converter {
public:
  explicit Converter(const Json& doc) : doc_(doc) {}

  Result<std::string> run() {
    ref_rules_[""] = "root"; // "$ref": "#"
    PSHARD_ASSIGN_OR_RETURN(std::string root, body(doc_, "", "root", 0));
    rules_.define("root", root);
    return rules_.text();
  }

private:
  // A schema's GBNF as one term: itself when it is one, else a rule named `name`.
  Result<std::string> term(const Json& s, const std::string& ptr, const std::string& name,
                           int depth) {
    PSHARD_ASSIGN_OR_RETURN(std::string b, body(s, ptr, name, depth));
    return is_term(b) ? b : rules_.add(name, b);
  }

  // A schema's GBNF expression; `name` names the rules made for its parts.
  Result<std::string> body(const Json& s, const std::string& ptr, const std::string& name,
                           int depth) {
    if (depth > kMaxNesting)
      return unsupported("the schema is nested deeper than " + std::to_string(kMaxNesting) +
                         " levels " + where(ptr));
    if (s.is_boolean()) {
      if (s.get<bool>())
        return rules_.use("value");
      return invalid_argument("the schema " + where(ptr) + " is false: no value satisfies it");
    }
    if (!s.is_object())
      return invalid_argument("the schema " + where(ptr) + " must be an object or a boolean, not " +
                              s.type_name());
    PSHARD_RETURN_IF_ERROR(check_keywords(s, ptr));
    if (member(s, "$ref"))
      return ref_body(s, ptr, name, depth);
    if (member(s, "allOf"))
      return all_of_body(s, ptr, name, depth);
    if (member(s, "anyOf") || member(s, "oneOf"))
      return any_of_body(s, ptr, name, depth);
    if (member(s, "enum") || member(s, "const"))
      return enum_body(s, ptr);
    return typed_body(s, ptr, name, depth);
  }

  // --- $ref ---

  Result<std::string> ref_body(const Json& s, const std::string& ptr, const std::string& name,
                               int depth) {
    const Json& ref = *member(s, "$ref");
    if (!ref.is_string())
      return bad_keyword(ptr, "$ref", "must be a string");
    if (has_constraints_besides(s, {"$ref"})) { // $ref next to constraints: both hold
      PSHARD_ASSIGN_OR_RETURN(Json merged, merge({&s}, ptr));
      return body(merged, ptr, name, depth + 1);
    }
    return ref_rule(ref.get<std::string>(), at(ptr, "$ref"), depth);
  }

  // The JSON pointer a local $ref names, percent-decoded.
  static Result<std::string> ref_pointer(const std::string& ref, const std::string& ptr) {
    if (ref.empty() || ref[0] != '#')
      return unsupported("the $ref '" + ref + "' " + where(ptr) +
                         " is not local; only references into this schema (#...) are supported");
    std::string p;
    for (size_t i = 1; i < ref.size(); ++i) {
      auto hex = [&](char c) {
        return c >= '0' && c <= '9'   ? c - '0'
               : c >= 'a' && c <= 'f' ? c - 'a' + 10
               : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                      : -1;
      };
      if (ref[i] == '%' && i + 2 < ref.size() && hex(ref[i + 1]) >= 0 && hex(ref[i + 2]) >= 0) {
        p += static_cast<char>(hex(ref[i + 1]) * 16 + hex(ref[i + 2]));
        i += 2;
      } else {
        p += ref[i];
      }
    }
    if (!p.empty() && p[0] != '/')
      return unsupported("the $ref '" + ref + "' " + where(ptr) +
                         " names an anchor; only JSON pointers (#/$defs/NAME) are supported");
    return p;
  }

  Result<const Json*> resolve(const std::string& ref, const std::string& ptr) {
    PSHARD_ASSIGN_OR_RETURN(std::string p, ref_pointer(ref, ptr));
    const Json* node = &doc_;
    size_t i = 0;
    while (i < p.size()) {
      const size_t next = std::min(p.find('/', i + 1), p.size());
      std::string token;
      for (size_t k = i + 1; k < next; ++k) {
        if (p[k] == '~' && k + 1 < next && (p[k + 1] == '0' || p[k + 1] == '1')) {
          token += p[k + 1] == '0' ? '~' : '/';
          ++k;
        } else {
          token += p[k];
        }
      }
      i = next;
      const Json* found = nullptr;
      if (node->is_object()) {
        found = member(*node, token.c_str());
      } else if (node->is_array() && !token.empty() &&
                 token.find_first_not_of("0123456789") == std::string::npos && token.size() < 10 &&
                 std::stoul(token) < node->size()) {
        found = &(*node)[std::stoul(token)];
      }
      if (!found)
        return invalid_argument("the $ref '" + ref + "' " + where(ptr) +
                                " leads nowhere: the schema has no '" + token + "' there");
      node = found;
    }
    return node;
  }

  // The rule for a $ref's target, made the first time it is named.
  Result<std::string> ref_rule(const std::string& ref, const std::string& ptr, int depth) {
    PSHARD_ASSIGN_OR_RETURN(std::string pointer, ref_pointer(ref, ptr));
    if (const auto it = ref_rules_.find(pointer); it != ref_rules_.end())
      return it->second;
    PSHARD_ASSIGN_OR_RETURN(const Json* target, resolve(ref, ptr));
    std::string base = sanitize(pointer.substr(pointer.rfind('/') + 1));
    if (base.empty() || !((base[0] >= 'a' && base[0] <= 'z') || (base[0] >= 'A' && base[0] <= 'Z')))
      base = "ref" + (base.empty() ? "" : "-" + base);
    const std::string name = rules_.reserve(base);
    ref_rules_[pointer] = name;
    PSHARD_ASSIGN_OR_RETURN(std::string b, body(*target, pointer, name, depth + 1));
    rules_.define(name, b);
    return name;
  }

  // --- allOf and merging ---

  Result<std::string> all_of_body(const Json& s, const std::string& ptr, const std::string& name,
                                  int depth) {
    PSHARD_ASSIGN_OR_RETURN(Json merged, merge({&s}, ptr));
    if (merged.is_boolean() && !merged.get<bool>())
      return invalid_argument("the allOf " + where(at(ptr, "allOf")) +
                              " asks for types no value has at once");
    return body(merged, ptr, name, depth + 1);
  }

  struct Merging {
    Json out = Json::object();
    // Per part with additionalProperties: its own property names and the value.
    std::vector<std::pair<std::set<std::string>, Json>> closed;
    int steps = 0;
  };

  // One schema that holds exactly where all of `parts` hold (false where none can),
  // with $ref and allOf at their tops expanded in order. Keywords combine as JSON Schema
  // combines them: each constrains alone, so their union is the conjunction; only types,
  // properties and required need joining, and a keyword two parts give differently is
  // refused.
  Result<Json> merge(std::initializer_list<const Json*> parts, const std::string& ptr) {
    Merging m;
    for (const Json* part : parts) {
      PSHARD_ASSIGN_OR_RETURN(bool satisfiable, merge_part(*part, m, ptr));
      if (!satisfiable)
        return Json(false);
    }
    // additionalProperties holds against its own schema's properties: a part that closes
    // the object cannot be joined with one that lists more.
    if (const Json* props = member(m.out, "properties"))
      for (const auto& [own, extra] : m.closed)
        for (auto it = props->begin(); it != props->end(); ++it)
          if (!own.count(it.key()))
            return unsupported("the allOf " + where(ptr) +
                               " joins a schema with additionalProperties to one that lists "
                               "the other property '" +
                               it.key() + "'");
    return std::move(m.out);
  }

  Result<bool> merge_part(const Json& s, Merging& m, const std::string& ptr) {
    if (++m.steps > kMaxMergeSteps)
      return unsupported("the allOf / $ref " + where(ptr) +
                         " expands without end (a recursive $ref inside allOf?)");
    if (s.is_boolean())
      return s.get<bool>();
    if (!s.is_object())
      return invalid_argument("a schema inside the allOf " + where(ptr) +
                              " is not an object or a boolean");
    PSHARD_RETURN_IF_ERROR(check_keywords(s, ptr));
    if (const Json* ref = member(s, "$ref")) {
      if (!ref->is_string())
        return bad_keyword(ptr, "$ref", "must be a string");
      PSHARD_ASSIGN_OR_RETURN(const Json* target, resolve(ref->get<std::string>(), ptr));
      PSHARD_ASSIGN_OR_RETURN(bool satisfiable, merge_part(*target, m, ptr));
      if (!satisfiable)
        return false;
    }
    if (const Json* all = member(s, "allOf")) {
      if (!all->is_array() || all->empty())
        return bad_keyword(ptr, "allOf", "must be a non-empty array of schemas");
      for (const Json& part : *all) {
        PSHARD_ASSIGN_OR_RETURN(bool satisfiable, merge_part(part, m, ptr));
        if (!satisfiable)
          return false;
      }
    }
    return merge_into(m, s, ptr);
  }

  // The keywords of `s` itself into m.out.
  Result<bool> merge_into(Merging& m, const Json& s, const std::string& ptr) {
    Json& out = m.out;
    for (auto it = s.begin(); it != s.end(); ++it) {
      const std::string& key = it.key();
      const Json& v = it.value();
      if (is_annotation(key) || key == "$ref" || key == "allOf")
        continue;
      if (key == "type") {
        PSHARD_ASSIGN_OR_RETURN(bool any, merge_types(out, v, ptr));
        if (!any)
          return false;
      } else if (key == "properties") {
        if (!v.is_object())
          return bad_keyword(ptr, key, "must be an object");
        Json& props = out["properties"];
        if (props.is_null())
          props = Json::object();
        for (auto p = v.begin(); p != v.end(); ++p) {
          Json* old = props.contains(p.key()) ? &props[p.key()] : nullptr;
          if (!old)
            props[p.key()] = p.value();
          else if (*old != p.value())
            *old = Json{{"allOf", Json::array({*old, p.value()})}};
        }
      } else if (key == "required") {
        if (!v.is_array())
          return bad_keyword(ptr, key, "must be an array of property names");
        Json& req = out["required"];
        if (req.is_null())
          req = Json::array();
        for (const Json& r : v)
          if (std::find(req.begin(), req.end(), r) == req.end())
            req.push_back(r);
      } else if (out.contains(key) && out[key] != v) {
        return unsupported("the allOf " + where(ptr) + " joins schemas that give '" + key +
                           "' differently");
      } else {
        if (key == "additionalProperties" && v != Json(true) && v != Json::object()) {
          std::set<std::string> own;
          if (const Json* props = member(s, "properties"); props && props->is_object())
            for (auto p = props->begin(); p != props->end(); ++p)
              own.insert(p.key());
          m.closed.emplace_back(std::move(own), v);
        }
        out[key] = v;
      }
    }
    return true;
  }

  // out.type := out.type ∩ t; false when nothing is left.
  Result<bool> merge_types(Json& out, const Json& t, const std::string& ptr) {
    PSHARD_ASSIGN_OR_RETURN(std::vector<std::string> add, read_types(t, ptr));
    if (!out.contains("type")) {
      out["type"] = t;
      return true;
    }
    PSHARD_ASSIGN_OR_RETURN(std::vector<std::string> have, read_types(out["type"], ptr));
    auto has = [](const std::vector<std::string>& v, const char* n) {
      return std::find(v.begin(), v.end(), n) != v.end();
    };
    Json both = Json::array();
    for (const std::string& h : have) {
      if (has(add, h.c_str()))
        both.push_back(h);
      else if ((h == "integer" && has(add, "number")) || (h == "number" && has(add, "integer")))
        both.push_back("integer");
    }
    out["type"] = both;
    return !both.empty();
  }

  // --- anyOf / oneOf ---

  Result<std::string> any_of_body(const Json& s, const std::string& ptr, const std::string& name,
                                  int depth) {
    if (member(s, "anyOf") && member(s, "oneOf"))
      return unsupported("anyOf together with oneOf " + where(ptr) + " is not supported");
    const char* key = member(s, "anyOf") ? "anyOf" : "oneOf";
    const Json& branches = *member(s, key);
    if (!branches.is_array() || branches.empty())
      return bad_keyword(ptr, key, "must be a non-empty array of schemas");
    // Sibling constraints hold in every branch: A and (B or C) = (A and B) or (A and C).
    Json siblings = s;
    siblings.erase(key);
    const bool distribute = has_constraints_besides(siblings, {});
    std::vector<std::string> alts;
    for (size_t i = 0; i < branches.size(); ++i) {
      const std::string bptr = at(at(ptr, key), std::to_string(i));
      const std::string bname = child_name(name, std::to_string(i));
      std::string alt;
      if (distribute) {
        PSHARD_ASSIGN_OR_RETURN(Json merged, merge({&siblings, &branches[i]}, bptr));
        if (merged.is_boolean() && !merged.get<bool>())
          continue; // this branch contradicts the siblings
        PSHARD_ASSIGN_OR_RETURN(alt, body(merged, bptr, bname, depth + 1));
      } else {
        PSHARD_ASSIGN_OR_RETURN(alt, body(branches[i], bptr, bname, depth + 1));
      }
      if (std::find(alts.begin(), alts.end(), alt) == alts.end())
        alts.push_back(alt);
    }
    if (alts.empty())
      return invalid_argument("no branch of the " + std::string(key) + " " + where(ptr) +
                              " agrees with the keywords next to it");
    return join(alts, " | ");
  }

  // --- enum / const ---

  static bool value_has_type(const Json& v, const std::string& type) {
    if (type == "integer")
      return v.is_number_integer() ||
             (v.is_number_float() && std::floor(v.get<double>()) == v.get<double>());
    if (type == "number")
      return v.is_number();
    if (type == "string")
      return v.is_string();
    if (type == "boolean")
      return v.is_boolean();
    if (type == "null")
      return v.is_null();
    if (type == "object")
      return v.is_object();
    return v.is_array();
  }

  Result<std::string> enum_body(const Json& s, const std::string& ptr) {
    for (auto it = s.begin(); it != s.end(); ++it)
      if (!is_annotation(it.key()) && it.key() != "enum" && it.key() != "const" &&
          it.key() != "type")
        return unsupported("the keyword '" + it.key() + "' " + where(at(ptr, it.key())) +
                           " next to enum / const is not supported");
    std::vector<Json> values;
    const Json* en = member(s, "enum");
    const Json* co = member(s, "const");
    if (en && !en->is_array())
      return bad_keyword(ptr, "enum", "must be an array");
    if (en)
      values.assign(en->begin(), en->end());
    if (co)
      values = en && std::find(en->begin(), en->end(), *co) == en->end() ? std::vector<Json>{}
                                                                         : std::vector<Json>{*co};
    if (const Json* type = member(s, "type")) {
      PSHARD_ASSIGN_OR_RETURN(std::vector<std::string> types, read_types(*type, ptr));
      std::erase_if(values, [&](const Json& v) {
        return std::none_of(types.begin(), types.end(),
                            [&](const std::string& t) { return value_has_type(v, t); });
      });
    }
    if (values.empty())
      return invalid_argument("no value satisfies the enum / const " + where(ptr));
    std::vector<std::string> alts;
    for (const Json& v : values) {
      const std::string text = v.dump(-1, ' ', false, Json::error_handler_t::replace);
      if (v.is_number_float() && !std::isfinite(v.get<double>()))
        return unsupported("the enum / const " + where(ptr) +
                           " holds a number too large for a double");
      const std::string lit = literal(text);
      if (std::find(alts.begin(), alts.end(), lit) == alts.end())
        alts.push_back(lit);
    }
    return join(alts, " | ");
  }

  // --- types ---

  // Without `type`: the types whose keywords the schema uses; none means any value.
  static std::vector<std::string> inferred_types(const Json& s) {
    std::vector<std::string> types;
    auto any = [&](std::initializer_list<const char*> keys) {
      return std::any_of(keys.begin(), keys.end(), [&](const char* k) { return member(s, k); });
    };
    if (any({"properties", "required", "additionalProperties"}))
      types.push_back("object");
    if (any({"items", "prefixItems", "additionalItems", "minItems", "maxItems"}))
      types.push_back("array");
    if (any({"minLength", "maxLength", "pattern", "format"}))
      types.push_back("string");
    if (any({"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"}))
      types.push_back("number");
    return types;
  }

  Result<std::string> typed_body(const Json& s, const std::string& ptr, const std::string& name,
                                 int depth) {
    std::vector<std::string> types;
    if (const Json* type = member(s, "type")) {
      PSHARD_ASSIGN_OR_RETURN(types, read_types(*type, ptr));
    } else {
      types = inferred_types(s);
    }
    if (types.empty())
      return rules_.use("value");
    const bool number = std::find(types.begin(), types.end(), "number") != types.end();
    std::vector<std::string> alts;
    for (const std::string& t : types) {
      if (t == "integer" && number)
        continue; // number has them
      PSHARD_ASSIGN_OR_RETURN(std::string b, type_body(t, s, ptr, name, depth));
      alts.push_back(b);
    }
    return join(alts, " | ");
  }

  Result<std::string> type_body(const std::string& t, const Json& s, const std::string& ptr,
                                const std::string& name, int depth) {
    if (t == "string")
      return string_body(s, ptr);
    if (t == "number" || t == "integer")
      return number_body(s, ptr, t == "integer");
    if (t == "object")
      return object_body(s, ptr, name, depth);
    if (t == "array")
      return array_body(s, ptr, name, depth);
    return rules_.use(t == "null" ? "null" : "boolean");
  }

  // --- strings ---

  Result<std::string> string_body(const Json& s, const std::string& ptr) {
    const Json* pattern = member(s, "pattern");
    const Json* format = member(s, "format");
    PSHARD_ASSIGN_OR_RETURN(std::optional<int64_t> min, read_count(s, "minLength", ptr));
    PSHARD_ASSIGN_OR_RETURN(std::optional<int64_t> max, read_count(s, "maxLength", ptr));
    const int kinds = (pattern != nullptr) + (format != nullptr) + (min || max);
    if (kinds > 1)
      return unsupported("the string schema " + where(ptr) +
                         " combines pattern, format and minLength / maxLength; at most one of "
                         "them is supported");
    if (pattern)
      return pattern_body(*pattern, at(ptr, "pattern"));
    if (format)
      return format_body(*format, ptr);
    if (!min && !max)
      return rules_.use("string");
    const int64_t lo = min.value_or(0);
    if (max && *max < lo)
      return invalid_argument("no string satisfies minLength " + std::to_string(lo) +
                              " > maxLength " + std::to_string(*max) + " " + where(ptr));
    PSHARD_RETURN_IF_ERROR(check_count(lo, ptr, "minLength"));
    if (max)
      PSHARD_RETURN_IF_ERROR(check_count(*max, ptr, "maxLength"));
    const std::string q = literal("\"");
    if (max && *max == 0)
      return literal("\"\"");
    return seq({q, repeat(rules_.use("length-char"), lo, max), q});
  }

  Result<std::string> format_body(const Json& format, const std::string& ptr) {
    if (!format.is_string())
      return bad_keyword(ptr, "format", "must be a string");
    const std::string f = format.get<std::string>();
    if (f == "date")
      return rules_.use("date-string");
    if (f == "time")
      return rules_.use("time-string");
    if (f == "date-time")
      return rules_.use("date-time-string");
    if (f == "uuid")
      return rules_.use("uuid-string");
    return unsupported("the format '" + f + "' " + where(at(ptr, "format")) +
                       " is not supported (date, time, date-time and uuid are)");
  }

  Result<std::string> pattern_body(const Json& pattern, const std::string& ptr) {
    if (!pattern.is_string())
      return invalid_argument("the pattern " + where(ptr) + " must be a string");
    RegexParser parser(pattern.get<std::string>(), ptr);
    PSHARD_ASSIGN_OR_RETURN(std::vector<RegexParser::Branch> branches, parser.parse());
    std::vector<std::string> alts;
    for (const RegexParser::Branch& b : branches) {
      PSHARD_ASSIGN_OR_RETURN(std::string core, lower_regex(b.re, ptr));
      // Unanchored, a pattern matches anywhere in the string: any text may come around.
      const std::string any = rules_.use("char") + std::string("*");
      if (core.empty() && !(b.anchored_start && b.anchored_end)) {
        alts.push_back(any);
        continue;
      }
      alts.push_back(seq({b.anchored_start ? "" : any, in_seq(core), b.anchored_end ? "" : any}));
    }
    const std::string q = literal("\"");
    return seq({q, group(alts), q});
  }

  // --- numbers ---

  Result<std::string> number_body(const Json& s, const std::string& ptr, bool integer) {
    BoundReader reader(s, ptr, integer);
    PSHARD_ASSIGN_OR_RETURN(std::optional<Bound> lower, reader.read(/*lower=*/true));
    PSHARD_ASSIGN_OR_RETURN(std::optional<Bound> upper, reader.read(/*lower=*/false));
    if (!lower && !upper)
      return rules_.use(integer ? "integer" : "number");
    const bool empty = lower && upper &&
                       (lower->value > upper->value ||
                        (lower->value == upper->value && (lower->exclusive || upper->exclusive)));
    if (empty)
      return invalid_argument(std::string("no ") + (integer ? "integer" : "number") +
                              " lies between the minimum and the maximum " + where(ptr));
    std::vector<std::string> alts;
    if (integer)
      alts = integer_range(lower ? std::optional<int64_t>(lower->value) : std::nullopt,
                           upper ? std::optional<int64_t>(upper->value) : std::nullopt);
    else
      alts = number_range(lower, upper);
    return join(alts, " | ");
  }

  // --- objects ---

  Result<std::string> object_body(const Json& s, const std::string& ptr, const std::string& name,
                                  int depth) {
    const Json* props = member(s, "properties");
    const Json* required = member(s, "required");
    const Json* extra = member(s, "additionalProperties");
    if (props && !props->is_object())
      return bad_keyword(ptr, "properties", "must be an object");
    if (extra && !extra->is_boolean() && !extra->is_object())
      return bad_keyword(ptr, "additionalProperties", "must be a boolean or a schema");
    std::set<std::string> needed;
    if (required) {
      if (!required->is_array())
        return bad_keyword(ptr, "required", "must be an array of property names");
      for (const Json& r : *required) {
        if (!r.is_string())
          return bad_keyword(ptr, "required", "must be an array of property names");
        if (!props || !props->contains(r.get<std::string>()))
          return unsupported("the required property '" + r.get<std::string>() + "' " +
                             where(at(ptr, "required")) + " is not in properties; list it there");
        needed.insert(r.get<std::string>());
      }
    }
    const bool listed = props && !props->empty();
    // The schema for extra keys' values; none: no extra keys.
    std::optional<std::string> extra_value;
    if (!extra ? !listed : extra->is_boolean() ? extra->get<bool>() : true) {
      if (!extra || extra->is_boolean()) {
        extra_value = rules_.use("value");
      } else {
        PSHARD_ASSIGN_OR_RETURN(extra_value, term(*extra, at(ptr, "additionalProperties"),
                                                  child_name(name, "additional"), depth + 1));
      }
    }
    if (!listed) {
      if (extra_value && *extra_value == "value")
        return rules_.use("object");
      if (!extra_value)
        return seq({literal("{"), rules_.use("ws"), literal("}")});
    }
    std::vector<std::string> kvs;
    std::vector<bool> req;
    if (listed)
      for (auto it = props->begin(); it != props->end(); ++it) {
        if (it.value().is_boolean() && !it.value().get<bool>()) { // the key must not appear
          if (needed.count(it.key()))
            return invalid_argument("the property '" + it.key() + "' " +
                                    where(at(ptr, "required")) +
                                    " is required but its schema is false");
          continue;
        }
        PSHARD_ASSIGN_OR_RETURN(std::string v, term(it.value(), at(at(ptr, "properties"), it.key()),
                                                    child_name(name, it.key()), depth + 1));
        const std::string key =
            literal(Json(it.key()).dump(-1, ' ', false, Json::error_handler_t::replace));
        kvs.push_back(seq({key, "ws", literal(":"), "ws", v, "ws"}));
        req.push_back(needed.count(it.key()) > 0);
      }
    rules_.use("ws");
    std::string extra_kv;
    if (extra_value) {
      PSHARD_ASSIGN_OR_RETURN(std::string key, extra_key(props, ptr, name));
      extra_kv = rules_.add(child_name(name, "additional-kv"),
                            seq({key, "ws", literal(":"), "ws", *extra_value, "ws"}));
    }
    return seq({literal("{"), "ws", members(kvs, req, extra_kv, name), literal("}")});
  }

  // The keys of extra properties: any string when none are listed, else strings of
  // unescaped characters that are none of the listed names (a listed name must take
  // its own schema, and appear once).
  Result<std::string> extra_key(const Json* props, const std::string& ptr,
                                const std::string& name) {
    if (!props || props->empty())
      return rules_.use("string");
    NameTrie trie;
    for (auto it = props->begin(); it != props->end(); ++it) {
      const std::u32string cps = code_points(it.key());
      if (cps.size() > kMaxExtraKeyName)
        return unsupported("the property name at " + at(at(ptr, "properties"), it.key()) +
                           " is longer than " + std::to_string(kMaxExtraKeyName) +
                           " characters, too long to keep out of additionalProperties");
      NameTrie* node = &trie;
      bool plain = true; // names needing escapes cannot collide with unescaped keys
      for (char32_t cp : cps)
        plain = plain && intersect(single(cp), json_escaped()).empty();
      if (!plain)
        continue;
      for (char32_t cp : cps)
        node = &node->kids[cp];
      node->end = true;
    }
    rules_.use("key-char");
    const std::string q = literal("\"");
    return rules_.add(child_name(name, "additional-key"), seq({q, not_names(trie), q}));
  }

  // The members between the braces: listed properties in order (required ones always,
  // optional ones maybe), commas only between those present, then extra ones. The
  // first member present is an optional one before the first required one, or that one;
  // each such start is followed by the rest in order. With many optional starts, the
  // rests are shared rules (`NAME-tail-I`), so the text grows linearly, not squared.
  std::string members(const std::vector<std::string>& kvs, const std::vector<bool>& req,
                      const std::string& extra_kv, const std::string& name) {
    constexpr size_t kInlineStarts = 4;
    const std::string comma = seq({literal(","), "ws"});
    const std::string extras = extra_kv.empty() ? "" : "( " + seq({comma, extra_kv}) + " )*";
    const size_t first_required =
        static_cast<size_t>(std::find(req.begin(), req.end(), true) - req.begin());
    const size_t starts = std::min(first_required + 1, kvs.size());
    auto piece = [&](size_t i) {
      const std::string m = seq({comma, kvs[i]});
      return req[i] ? m : "( " + m + " )?";
    };
    // rest[i]: the listed members from i on (and the extras), after a member.
    std::vector<std::string> rest(kvs.size() + 1);
    rest[kvs.size()] = extras;
    const bool shared = starts > kInlineStarts;
    for (size_t i = kvs.size(); i-- > 1;) {
      rest[i] = seq({piece(i), rest[i + 1]});
      if (shared && i < kvs.size() - 1) // a tail of one member is short enough as it is
        rest[i] = rules_.add(child_name(name, "tail-" + std::to_string(i)), rest[i]);
    }
    std::vector<std::string> alts;
    for (size_t i = 0; i < starts; ++i)
      alts.push_back(seq({kvs[i], rest[i + 1]}));
    const bool any_required = first_required < kvs.size();
    if (!extra_kv.empty() && !any_required)
      alts.push_back(seq({extra_kv, extras}));
    if (alts.empty())
      return "";
    const std::string g = group(alts);
    return any_required ? g : paren(g) + "?";
  }

  // --- arrays ---

  // An items schema's term; none for `false` (no such items).
  Result<std::optional<std::string>> items_term(const Json& s, const std::string& ptr,
                                                const std::string& name, int depth) {
    if (s.is_boolean() && !s.get<bool>())
      return std::optional<std::string>();
    PSHARD_ASSIGN_OR_RETURN(std::string t, term(s, ptr, name, depth + 1));
    return std::optional<std::string>(t);
  }

  Result<std::string> array_body(const Json& s, const std::string& ptr, const std::string& name,
                                 int depth) {
    const Json* items = member(s, "items");
    const Json* prefix = member(s, "prefixItems");
    const Json* additional = member(s, "additionalItems");
    std::vector<std::string> tuple;            // the leading items' terms
    std::optional<std::string> rest = "value"; // marked used below if it is
    const Json* tuple_schemas = prefix ? prefix : items && items->is_array() ? items : nullptr;
    const char* tuple_key = prefix ? "prefixItems" : "items";
    if (tuple_schemas) {
      if (!tuple_schemas->is_array())
        return bad_keyword(ptr, tuple_key, "must be an array of schemas");
      if (prefix && items && items->is_array())
        return bad_keyword(ptr, "items", "must be a schema when prefixItems is given");
      for (size_t i = 0; i < tuple_schemas->size(); ++i) {
        const std::string iptr = at(at(ptr, tuple_key), std::to_string(i));
        PSHARD_ASSIGN_OR_RETURN(auto t,
                                items_term((*tuple_schemas)[i], iptr,
                                           child_name(name, "item-" + std::to_string(i)), depth));
        if (!t)
          break; // `false` here: no array reaches this item
        tuple.push_back(*t);
      }
      // The items after the tuple: none unless the schema allows them.
      const Json* more = prefix ? items : additional;
      const char* more_key = prefix ? "items" : "additionalItems";
      rest.reset();
      if (more && tuple.size() == tuple_schemas->size()) {
        if (!more->is_boolean() && !more->is_object())
          return bad_keyword(ptr, more_key, "must be a schema");
        PSHARD_ASSIGN_OR_RETURN(
            rest, items_term(*more, at(ptr, more_key), child_name(name, "item"), depth));
      }
    } else if (items) {
      if (!items->is_boolean() && !items->is_object())
        return bad_keyword(ptr, "items", "must be a schema");
      PSHARD_ASSIGN_OR_RETURN(
          rest, items_term(*items, at(ptr, "items"), child_name(name, "item"), depth));
    }
    PSHARD_ASSIGN_OR_RETURN(std::optional<int64_t> min_items, read_count(s, "minItems", ptr));
    PSHARD_ASSIGN_OR_RETURN(std::optional<int64_t> max_items, read_count(s, "maxItems", ptr));
    const auto k = static_cast<int64_t>(tuple.size());
    const int64_t min = min_items.value_or(0);
    std::optional<int64_t> max = max_items;
    if (!rest)
      max = std::min(max.value_or(k), k);
    if (max && min > *max)
      return invalid_argument("no array satisfies minItems " + std::to_string(min) +
                              " with at most " + std::to_string(*max) + " items " + where(ptr));
    PSHARD_RETURN_IF_ERROR(check_count(min, ptr, "minItems"));
    if (max)
      PSHARD_RETURN_IF_ERROR(check_count(*max, ptr, "maxItems"));
    rules_.use("ws");
    if (rest && *rest == "value" && (!max || *max > k))
      rules_.use("value");
    const std::string inner = array_items(tuple, rest, min, max, 0);
    return seq({literal("["), "ws", inner, literal("]")});
  }

  // Items from index i on, when the ones before it are present; counts within GBNF's.
  static std::string array_items(const std::vector<std::string>& tuple,
                                 const std::optional<std::string>& rest, int64_t min,
                                 std::optional<int64_t> max, int64_t i) {
    const std::string comma = seq({literal(","), "ws"});
    const auto k = static_cast<int64_t>(tuple.size());
    if (max && i >= *max)
      return "";
    if (i < k) {
      const std::string here = seq({i == 0 ? "" : comma, tuple[static_cast<size_t>(i)], "ws"});
      const std::string s = seq({here, array_items(tuple, rest, min, max, i + 1)});
      return i < min ? s : "( " + s + " )?";
    }
    // The rest: all alike, so one repetition; the first item overall has no comma.
    const int64_t need = std::max<int64_t>(0, min - k);
    const std::optional<int64_t> room = max ? std::optional<int64_t>(*max - k) : std::nullopt;
    const std::string more = "( " + seq({comma, *rest, "ws"}) + " )";
    if (k > 0)
      return repeat(more, need, room);
    const std::string first = seq({*rest, "ws"});
    const std::optional<int64_t> after = room ? std::optional<int64_t>(*room - 1) : std::nullopt;
    if (need >= 1)
      return seq({first, repeat(more, need - 1, after)});
    return "( " + seq({first, repeat(more, 0, after)}) + " )?";
  }

  const Json& doc_;
  RuleSet rules_;
  std::map<std::string, std::string> ref_rules_; // JSON pointer -> its rule
};

// Why text is not JSON, from the parser's SAX interface (which reports instead of
// throwing): "parse error at line 1, column 12: syntax error ...".
class JsonErrorFinder : public nlohmann::json_sax<Json> {
public:
  std::string message = "the schema is not valid JSON";

  bool null() override { return true; }
  bool boolean(bool) override { return true; }
  bool number_integer(number_integer_t) override { return true; }
  bool number_unsigned(number_unsigned_t) override { return true; }
  bool number_float(number_float_t, const string_t&) override { return true; }
  bool string(string_t&) override { return true; }
  bool binary(binary_t&) override { return true; }
  bool start_object(std::size_t) override { return true; }
  bool key(string_t&) override { return true; }
  bool end_object() override { return true; }
  bool start_array(std::size_t) override { return true; }
  bool end_array() override { return true; }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception& e) override {
    std::string what = e.what();
    if (const size_t end = what.find("] ");
        what.rfind("[json.exception", 0) == 0 && end != std::string::npos)
      what.erase(0, end + 2);
    message = "the schema is not valid JSON: " + what;
    return false;
  }
};

// The deepest nesting of arrays and objects in `j`, walked without recursion: copying,
// comparing and printing JSON values recurse, so deeper text is refused before them.
size_t nesting_depth(const Json& j) {
  size_t deepest = 0;
  std::vector<std::pair<const Json*, size_t>> stack{{&j, 1}};
  while (!stack.empty()) {
    const auto [v, depth] = stack.back();
    stack.pop_back();
    if (!v->is_structured())
      continue;
    deepest = std::max(deepest, depth);
    for (const Json& kid : *v)
      stack.emplace_back(&kid, depth + 1);
  }
  return deepest;
}

} // namespace

Result<std::string> json_schema_to_gbnf(std::string_view schema_json) {
  const Json doc = Json::parse(schema_json.begin(), schema_json.end(), nullptr,
                               /*allow_exceptions=*/false);
  if (doc.is_discarded()) {
    JsonErrorFinder finder;
    static_cast<void>(Json::sax_parse(schema_json.begin(), schema_json.end(), &finder));
    return invalid_argument(finder.message);
  }
  if (nesting_depth(doc) > kMaxJsonDepth)
    return unsupported("the schema's JSON is nested deeper than " + std::to_string(kMaxJsonDepth) +
                       " levels");
  return Converter(doc).run();
}

std::string json_object_gbnf() {
  RuleSet rules;
  rules.define("root", rules.use("object"));
  return rules.text();
}

} // namespace pshard
