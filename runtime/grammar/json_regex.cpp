// Regex patterns parsed and lowered to GBNF (json_regex.h).
#include "runtime/grammar/json_regex.h"

#include "runtime/grammar/json_schema_keywords.h"

#include <algorithm>
#include <tuple>
#include <utility>

namespace pshard::json_grammar {
namespace {

constexpr size_t kMaxRewrite = 10000; // regex nodes, see without_empty()

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
  using Branch = RegexBranch;

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

} // namespace

Result<std::vector<RegexBranch>> parse_regex(std::string_view pattern, const std::string& ptr) {
  return RegexParser(pattern, ptr).parse();
}

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

} // namespace pshard::json_grammar
