// parse_gbnf: GBNF text -> Grammar (grammar.h). A recursive-descent reader that
// builds the flat rule table directly; groups, repetitions and non-ASCII classes
// become generated rules.
#include "runtime/grammar/grammar.h"
#include "runtime/grammar/utf8_ranges.h"
#include "runtime/tokenizer/utf8.h"

#include <algorithm>
#include <map>
#include <optional>

namespace pshard {
namespace {

constexpr int kMaxRepeat = 1000;
constexpr char32_t kMaxCodePoint = 0x10FFFF;

using CodeRange = std::pair<char32_t, char32_t>;

// A rule body while it is read: alternatives of elements.
using Sequence = std::vector<GrammarElement>;
using Alternatives = std::vector<Sequence>;

bool is_name_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
         c == '_';
}

class Parser {
public:
  explicit Parser(std::string_view text) : text_(text) {}

  Result<Grammar> parse() {
    skip_space();
    if (at_end())
      return invalid_format("the grammar is empty; it needs at least `root ::= ...`");
    while (!at_end()) {
      PSHARD_RETURN_IF_ERROR(parse_rule());
      skip_space();
    }
    return finish();
  }

private:
  // --- reading ---
  bool at_end() const { return pos_ >= text_.size(); }
  char peek(size_t ahead = 0) const {
    return pos_ + ahead < text_.size() ? text_[pos_ + ahead] : '\0';
  }
  void skip_space() {
    while (!at_end()) {
      const char c = peek();
      if (c == '#') {
        while (!at_end() && peek() != '\n')
          ++pos_;
      } else if (c == ' ' || c == '\t' || c == '\r' || c == '\n') {
        ++pos_;
      } else {
        break;
      }
    }
  }
  Status error_at(size_t at, const std::string& what) const {
    int line = 1, column = 1;
    for (size_t i = 0; i < at && i < text_.size(); ++i) {
      if (text_[i] == '\n') {
        ++line;
        column = 1;
      } else {
        ++column;
      }
    }
    return invalid_format("grammar line " + std::to_string(line) + ", column " +
                          std::to_string(column) + ": " + what);
  }
  Status error(const std::string& what) const { return error_at(pos_, what); }

  std::string read_name() {
    const size_t start = pos_;
    while (!at_end() && is_name_char(peek()))
      ++pos_;
    return std::string(text_.substr(start, pos_ - start));
  }
  // Whether `name ::=` starts here (the next rule), without moving.
  bool at_rule_start() const {
    size_t p = pos_;
    while (p < text_.size() && is_name_char(text_[p]))
      ++p;
    if (p == pos_)
      return false;
    while (p < text_.size() && (text_[p] == ' ' || text_[p] == '\t'))
      ++p;
    return text_.substr(p, 3) == "::=";
  }

  // --- rules ---
  int32_t rule_id(const std::string& name, size_t at) {
    auto [it, added] = ids_.emplace(name, static_cast<int32_t>(bodies_.size()));
    if (added) {
      bodies_.emplace_back();
      names_.push_back(name);
      defined_.push_back(false);
      first_use_.push_back(at);
      origin_.push_back(name);
    }
    return it->second;
  }
  int32_t new_rule(const std::string& base, Alternatives body) {
    // Not in ids_: a user's rule of the same name stays the user's.
    const auto id = static_cast<int32_t>(bodies_.size());
    bodies_.push_back(std::move(body));
    names_.push_back(base + "_" + std::to_string(++generated_));
    defined_.push_back(true);
    first_use_.push_back(pos_);
    origin_.push_back(current_);
    return id;
  }

  Status parse_rule() {
    const size_t start = pos_;
    const std::string name = read_name();
    if (name.empty())
      return error("expected a rule name (letters, digits, '-', '_') before `::=`");
    skip_space();
    if (text_.substr(pos_, 3) != "::=")
      return error("expected `::=` after the rule name `" + name + "`");
    pos_ += 3;
    const int32_t id = rule_id(name, start);
    if (defined_[id])
      return error_at(start, "the rule `" + name + "` is defined twice");
    defined_[id] = true;
    current_ = name;
    PSHARD_ASSIGN_OR_RETURN(Alternatives body, parse_alternatives(/*nested=*/false));
    bodies_[id] = std::move(body);
    return Status::ok_status();
  }

  Result<Alternatives> parse_alternatives(bool nested) {
    Alternatives alts;
    while (true) {
      PSHARD_ASSIGN_OR_RETURN(Sequence seq, parse_sequence(nested));
      alts.push_back(std::move(seq));
      skip_space();
      if (peek() != '|')
        return alts;
      ++pos_;
    }
  }

  Result<Sequence> parse_sequence(bool nested) {
    Sequence seq;
    while (true) {
      skip_space();
      const char c = peek();
      if (at_end() || c == '|' || (c == ')' && nested) || (!nested && at_rule_start()))
        return seq;
      const size_t term_start = pos_;
      PSHARD_ASSIGN_OR_RETURN(Sequence term, parse_term());
      PSHARD_RETURN_IF_ERROR(parse_postfix(term, term_start, seq));
    }
  }

  // One term: its elements (a literal is several; anything else is one).
  Result<Sequence> parse_term() {
    const char c = peek();
    if (c == '"') {
      ++pos_;
      return parse_literal();
    }
    if (c == '[') {
      ++pos_;
      PSHARD_ASSIGN_OR_RETURN(GrammarElement e, parse_class());
      return Sequence{e};
    }
    if (c == '.') {
      ++pos_;
      return Sequence{class_element({{0, kMaxCodePoint}})};
    }
    if (c == '(') {
      ++pos_;
      PSHARD_ASSIGN_OR_RETURN(Alternatives alts, parse_alternatives(/*nested=*/true));
      skip_space();
      if (peek() != ')')
        return error("expected `)` to close the group");
      ++pos_;
      if (alts.size() == 1)
        return std::move(alts.front());
      return Sequence{{GrammarElement::kRule, new_rule(current_, std::move(alts))}};
    }
    if (is_name_char(c)) {
      const size_t at = pos_;
      return Sequence{{GrammarElement::kRule, rule_id(read_name(), at)}};
    }
    if (c == ')')
      return error("unexpected `)` with no group open");
    return error(std::string("unexpected `") + c +
                 "`; expected a literal, a class, `.`, a rule name or `(`");
  }

  // A term followed by *, +, ?, {m}, {m,}, {m,n} (or none), appended to `seq`.
  Status parse_postfix(Sequence term, size_t term_start, Sequence& seq) {
    const char c = peek();
    int min = 1, max = 1; // max -1: unbounded
    if (c == '*') {
      min = 0, max = -1, ++pos_;
    } else if (c == '+') {
      min = 1, max = -1, ++pos_;
    } else if (c == '?') {
      min = 0, max = 1, ++pos_;
    } else if (c == '{') {
      ++pos_;
      PSHARD_RETURN_IF_ERROR(parse_count(min, max));
    }
    if (min == 1 && max == 1) {
      seq.insert(seq.end(), term.begin(), term.end());
      return Status::ok_status();
    }
    if (term.empty())
      return error_at(term_start, "a repetition of an empty term");
    const GrammarElement item =
        term.size() == 1 ? term.front()
                         : GrammarElement{GrammarElement::kRule, new_rule(current_, {term})};
    for (int i = 0; i < min; ++i)
      seq.push_back(item);
    if (max == -1) { // star ::= item star | (empty)
      const int32_t star = new_rule(current_, {});
      bodies_[star] = {{item, {GrammarElement::kRule, star}}, {}};
      seq.push_back({GrammarElement::kRule, star});
    } else if (max > min) { // opt_k ::= item opt_(k-1) | (empty), nested max - min deep
      int32_t tail = -1;
      for (int i = 0; i < max - min; ++i) {
        Sequence more{item};
        if (tail >= 0)
          more.push_back({GrammarElement::kRule, tail});
        tail = new_rule(current_, {more, {}});
      }
      seq.push_back({GrammarElement::kRule, tail});
    }
    return Status::ok_status();
  }

  Status parse_count(int& min, int& max) {
    auto number = [&]() -> std::optional<int> {
      skip_space();
      int v = 0;
      size_t digits = 0;
      while (peek() >= '0' && peek() <= '9') {
        v = std::min(v * 10 + (peek() - '0'), kMaxRepeat + 1);
        ++pos_, ++digits;
      }
      return digits ? std::optional<int>(v) : std::nullopt;
    };
    const auto lo = number();
    if (!lo)
      return error("expected a count after `{`");
    min = max = *lo;
    skip_space();
    if (peek() == ',') {
      ++pos_;
      const auto hi = number();
      max = hi ? *hi : -1;
      skip_space();
    }
    if (peek() != '}')
      return error("expected `}` to close the count");
    ++pos_;
    if (min > kMaxRepeat || max > kMaxRepeat)
      return error("a count above " + std::to_string(kMaxRepeat));
    if (max != -1 && max < min)
      return error("a count {m,n} with n < m");
    return Status::ok_status();
  }

  // --- literals and classes ---
  // One character of a literal or class, escapes resolved.
  Result<char32_t> read_char() {
    if (at_end())
      return error("the text ends inside a literal or class");
    if (peek() != '\\') {
      size_t n = 0;
      const char32_t cp = decode_utf8(text_, pos_, &n);
      if (n == 0)
        return error("malformed UTF-8 in the grammar");
      pos_ += n;
      return cp;
    }
    ++pos_;
    const char e = peek();
    ++pos_;
    switch (e) {
    case 'n':
      return U'\n';
    case 'r':
      return U'\r';
    case 't':
      return U'\t';
    case '\\':
    case '"':
    case '\'':
    case '[':
    case ']':
    case '-':
    case '^':
    case '/':
      return static_cast<char32_t>(e);
    case 'x':
      return read_hex(2);
    case 'u':
      return read_hex(4);
    case 'U':
      return read_hex(8);
    default:
      return error_at(pos_ - 2, std::string("unknown escape `\\") + e + "`");
    }
  }
  Result<char32_t> read_hex(int digits) {
    char32_t v = 0;
    for (int i = 0; i < digits; ++i) {
      const char c = peek();
      const int d = c >= '0' && c <= '9'   ? c - '0'
                    : c >= 'a' && c <= 'f' ? c - 'a' + 10
                    : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                           : -1;
      if (d < 0)
        return error("expected " + std::to_string(digits) + " hex digits after the escape");
      v = v * 16 + static_cast<char32_t>(d);
      ++pos_;
    }
    if (v > kMaxCodePoint || (v >= 0xD800 && v <= 0xDFFF))
      return error("the escape names no Unicode character (a surrogate or past U+10FFFF)");
    return v;
  }

  Result<Sequence> parse_literal() {
    Sequence seq;
    while (peek() != '"') {
      if (at_end())
        return error("the literal is not closed with `\"`");
      PSHARD_ASSIGN_OR_RETURN(char32_t cp, read_char());
      std::string bytes;
      append_utf8(cp, bytes);
      for (char b : bytes) {
        ByteSet set;
        set.add(static_cast<uint8_t>(b));
        seq.push_back(bytes_element(set));
      }
    }
    ++pos_;
    return seq;
  }

  Result<GrammarElement> parse_class() {
    const size_t start = pos_ - 1;
    const bool negated = peek() == '^';
    if (negated)
      ++pos_;
    std::vector<CodeRange> ranges;
    while (peek() != ']') {
      if (at_end())
        return error_at(start, "the class is not closed with `]`");
      PSHARD_ASSIGN_OR_RETURN(char32_t lo, read_char());
      char32_t hi = lo;
      if (peek() == '-' && peek(1) != ']') {
        ++pos_;
        PSHARD_ASSIGN_OR_RETURN(hi, read_char());
        if (hi < lo)
          return error("a class range whose end is below its start");
      }
      ranges.emplace_back(lo, hi);
    }
    ++pos_;
    if (negated)
      ranges = complement(ranges);
    if (ranges.empty())
      return error_at(start, "the class matches no character");
    return class_element(ranges);
  }

  static std::vector<CodeRange> complement(std::vector<CodeRange> ranges) {
    std::sort(ranges.begin(), ranges.end());
    std::vector<CodeRange> out;
    char32_t next = 0;
    for (auto [lo, hi] : ranges) {
      if (lo > next)
        out.emplace_back(next, lo - 1);
      next = std::max<char32_t>(next, hi + 1);
    }
    if (next <= kMaxCodePoint)
      out.emplace_back(next, kMaxCodePoint);
    return out;
  }

  // A class as one element: a byte set when it is all ASCII, else a rule whose
  // alternatives are the ASCII set and the UTF-8 byte-range sequences.
  GrammarElement class_element(const std::vector<CodeRange>& ranges) {
    ByteSet ascii;
    Alternatives alts;
    for (auto [lo, hi] : ranges) {
      for (const Utf8Sequence& seq : utf8_sequences(lo, hi)) {
        if (seq.size() == 1) {
          ascii.add_range(seq[0].first, seq[0].second);
          continue;
        }
        Sequence s;
        for (auto [a, b] : seq) {
          ByteSet set;
          set.add_range(a, b);
          s.push_back(bytes_element(set));
        }
        alts.push_back(std::move(s));
      }
    }
    const bool has_ascii = ascii != ByteSet{};
    if (alts.empty())
      return bytes_element(ascii);
    if (has_ascii)
      alts.insert(alts.begin(), Sequence{bytes_element(ascii)});
    return {GrammarElement::kRule, new_rule(current_ + "_char", std::move(alts))};
  }

  GrammarElement bytes_element(const ByteSet& set) {
    auto it = std::find(sets_.begin(), sets_.end(), set);
    if (it == sets_.end()) {
      sets_.push_back(set);
      it = sets_.end() - 1;
    }
    return {GrammarElement::kBytes, static_cast<int32_t>(it - sets_.begin())};
  }

  // --- checks and the flat form ---
  Result<Grammar> finish() {
    for (size_t r = 0; r < bodies_.size(); ++r)
      if (!defined_[r])
        return error_at(first_use_[r], "the rule `" + names_[r] + "` is used but not defined");
    const auto root = ids_.find("root");
    if (root == ids_.end())
      return invalid_format("the grammar has no `root` rule; generation starts there");
    PSHARD_RETURN_IF_ERROR(check_left_recursion());
    Grammar g;
    g.root = root->second;
    g.rule_names = names_;
    g.byte_sets = sets_;
    g.alternatives.resize(bodies_.size());
    for (size_t r = 0; r < bodies_.size(); ++r)
      for (const Sequence& seq : bodies_[r]) {
        g.alternatives[r].push_back(static_cast<int32_t>(g.elements.size()));
        g.elements.insert(g.elements.end(), seq.begin(), seq.end());
        g.elements.push_back({GrammarElement::kEnd, 0});
      }
    return g;
  }

  // A rule that reaches itself through a chain of leftmost (or after-nullable) rule
  // references would make the matcher expand forever.
  Status check_left_recursion() const {
    const size_t n = bodies_.size();
    std::vector<bool> nullable(n, false);
    for (bool changed = true; changed;) {
      changed = false;
      for (size_t r = 0; r < n; ++r)
        if (!nullable[r])
          for (const Sequence& seq : bodies_[r])
            if (std::all_of(seq.begin(), seq.end(), [&](const GrammarElement& e) {
                  return e.kind == GrammarElement::kRule && nullable[e.index];
                })) {
              nullable[r] = changed = true;
              break;
            }
    }
    std::vector<std::vector<int32_t>> left(n);
    for (size_t r = 0; r < n; ++r)
      for (const Sequence& seq : bodies_[r])
        for (const GrammarElement& e : seq) {
          if (e.kind != GrammarElement::kRule)
            break;
          left[r].push_back(e.index);
          if (!nullable[e.index])
            break;
        }
    // Depth-first search for a cycle: 0 unvisited, 1 on the path, 2 done.
    std::vector<int> mark(n, 0);
    std::vector<std::pair<int32_t, size_t>> path;
    for (size_t s = 0; s < n; ++s) {
      if (mark[s])
        continue;
      path.push_back({static_cast<int32_t>(s), 0});
      mark[s] = 1;
      while (!path.empty()) {
        auto& [r, i] = path.back();
        if (i == left[r].size()) {
          mark[r] = 2;
          path.pop_back();
          continue;
        }
        const int32_t next = left[r][i++];
        if (mark[next] == 1)
          return invalid_format("the rule `" + origin_[next] +
                                "` is left-recursive: it can reach itself before matching "
                                "any text (rewrite it as a repetition, e.g. `x ::= y (\",\" y)*`)");
        if (mark[next] == 0) {
          mark[next] = 1;
          path.push_back({next, 0});
        }
      }
    }
    return Status::ok_status();
  }

  std::string_view text_;
  size_t pos_ = 0;
  std::map<std::string, int32_t> ids_;
  std::vector<Alternatives> bodies_;
  std::vector<std::string> names_;
  std::vector<bool> defined_;
  std::vector<size_t> first_use_;
  std::vector<std::string> origin_; // the user's rule each rule is (or was generated for)
  std::vector<ByteSet> sets_;
  std::string current_;
  int generated_ = 0;
};

} // namespace

Result<Grammar> parse_gbnf(std::string_view text) { return Parser(text).parse(); }

} // namespace pshard
