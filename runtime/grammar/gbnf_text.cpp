// The GBNF text layer (gbnf_text.h): escaping, expression shapes, code point sets.
#include "runtime/grammar/gbnf_text.h"

#include "runtime/tokenizer/utf8.h"

#include <algorithm>
#include <map>

namespace pshard::json_grammar {
namespace {

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

std::string postfix(int64_t min, std::optional<int64_t> max) {
  if (!max)
    return min == 0 ? "*" : min == 1 ? "+" : "{" + std::to_string(min) + ",}";
  if (min == 0 && *max == 1)
    return "?";
  if (min == *max)
    return "{" + std::to_string(min) + "}";
  return "{" + std::to_string(min) + "," + std::to_string(*max) + "}";
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

} // namespace

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

std::string literal(std::string_view utf8) {
  std::string out = "\"";
  for (char32_t cp : code_points(utf8))
    out += gbnf_char(cp, false);
  return out + "\"";
}

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

bool is_term(std::string_view e) {
  const Shape s = shape_of(e);
  return s.terms == 1 && !s.alternation && !s.postfix;
}
std::string paren(const std::string& e) { return is_term(e) ? e : "( " + e + " )"; }
std::string in_seq(const std::string& e) { return shape_of(e).alternation ? "( " + e + " )" : e; }
std::string group(const std::vector<std::string>& alts) {
  return alts.size() == 1 ? in_seq(alts[0]) : "( " + join(alts, " | ") + " )";
}

std::string repeat(const std::string& term, int64_t min, std::optional<int64_t> max) {
  if (max && *max == 0)
    return "";
  if (max && min == 1 && *max == 1)
    return term;
  return paren(term) + postfix(min, max);
}

// ---------------------------------------------------------------------------------------
// Sets of code points

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

const Ranges& json_escaped() {
  static const Ranges r = {{0x00, 0x1F}, {'"', '"'}, {'\\', '\\'}, {0x7F, 0x7F}};
  return r;
}

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

// ---------------------------------------------------------------------------------------
// Characters inside JSON strings

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

} // namespace pshard::json_grammar
