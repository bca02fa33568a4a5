// GBNF parsing, UTF-8 byte ranges and the matcher: which texts a grammar takes
// whole, which prefixes it keeps alive, and the errors bad grammars get.
#include "runtime/grammar/grammar.h"
#include "runtime/grammar/grammar_matcher.h"
#include "runtime/grammar/utf8_ranges.h"
#include "runtime/tokenizer/utf8.h"

#include <gtest/gtest.h>

namespace pshard {
namespace {

std::shared_ptr<const Grammar> compile(std::string_view gbnf) {
  Result<Grammar> g = parse_gbnf(gbnf);
  EXPECT_TRUE(g.ok()) << g.status().to_string();
  return g.ok() ? std::make_shared<const Grammar>(std::move(g).value()) : nullptr;
}

// Whether the whole text is a sentence of the grammar.
bool matches(const std::shared_ptr<const Grammar>& g, std::string_view text) {
  GrammarMatcher m(g);
  return m.accept(text) && m.can_end();
}
// Whether the text can still be continued into a sentence (or is one).
bool prefix_ok(const std::shared_ptr<const Grammar>& g, std::string_view text) {
  GrammarMatcher m(g);
  return m.accept(text);
}

std::string error_of(std::string_view gbnf) {
  Result<Grammar> g = parse_gbnf(gbnf);
  EXPECT_FALSE(g.ok()) << gbnf;
  return g.ok() ? "" : g.status().message();
}

TEST(Utf8Ranges, EveryCodePointMatchesExactlyOneSequenceOfItsRange) {
  // Ranges chosen to cross every length boundary and the surrogates.
  const std::pair<char32_t, char32_t> ranges[] = {
      {0, 0x10FFFF},    {0x41, 0x5A},      {0x70, 0x900},  {0x7FF, 0x800},
      {0xD000, 0xE100}, {0xFFF0, 0x10010}, {0x3B1, 0x3C9}, {0x10000, 0x10FFFF}};
  for (auto [lo, hi] : ranges) {
    const auto seqs = utf8_sequences(lo, hi);
    for (char32_t cp = 0; cp <= 0x10FFFF; cp += (cp < 0x11000 ? 1 : 97)) {
      if (cp >= 0xD800 && cp <= 0xDFFF)
        continue;
      std::string bytes;
      append_utf8(cp, bytes);
      int hits = 0;
      for (const auto& seq : seqs) {
        bool all = seq.size() == bytes.size();
        for (size_t i = 0; all && i < seq.size(); ++i) {
          const auto b = static_cast<uint8_t>(bytes[i]);
          all = b >= seq[i].first && b <= seq[i].second;
        }
        hits += all;
      }
      ASSERT_EQ(hits, (cp >= lo && cp <= hi) ? 1 : 0)
          << "code point " << std::hex << uint32_t{cp} << " in [" << uint32_t{lo} << ", "
          << uint32_t{hi} << "]";
    }
  }
}

TEST(Utf8Ranges, NoSequenceTakesASurrogateOrAnOverlongForm) {
  for (const auto& seq : utf8_sequences(0, 0x10FFFF)) {
    if (seq.size() == 2) { // C0, C1 would be overlong
      EXPECT_GE(seq[0].first, 0xC2);
    }
    if (seq.size() == 3 && seq[0].first == 0xED) { // ED A0..BF are surrogates
      EXPECT_LE(seq[1].second, 0x9F);
    }
    if (seq.size() == 3 && seq[0].first == 0xE0) { // E0 80..9F would be overlong
      EXPECT_GE(seq[1].first, 0xA0);
    }
  }
}

TEST(GrammarMatcher, LiteralsAlternativesAndPrefixes) {
  auto g = compile(R"(root ::= "yes" | "no" | "maybe")");
  EXPECT_TRUE(matches(g, "yes"));
  EXPECT_TRUE(matches(g, "maybe"));
  EXPECT_FALSE(matches(g, "ye"));
  EXPECT_TRUE(prefix_ok(g, "ma"));
  EXPECT_FALSE(prefix_ok(g, "yess"));
  EXPECT_FALSE(prefix_ok(g, "x"));
  GrammarMatcher m(g);
  ASSERT_TRUE(m.accept("no"));
  EXPECT_TRUE(m.can_end());
  EXPECT_FALSE(m.can_continue());
}

TEST(GrammarMatcher, AFailedAcceptLeavesThePositionAsItWas) {
  auto g = compile(R"(root ::= "ab" "c"+)");
  GrammarMatcher m(g);
  ASSERT_TRUE(m.accept("ab"));
  EXPECT_FALSE(m.accept("cx"));
  EXPECT_TRUE(m.accept("c"));
  EXPECT_TRUE(m.can_end());
  EXPECT_TRUE(m.can_continue());
  m.reset();
  EXPECT_FALSE(m.can_end());
  EXPECT_TRUE(m.accept("abccc"));
}

TEST(GrammarMatcher, Repetitions) {
  auto g = compile(R"(
root ::= a b c d e
a ::= "a"*
b ::= "b"+
c ::= "c"?
d ::= "d"{2}
e ::= "e"{1,3} "f"{2,}
)");
  EXPECT_TRUE(matches(g, "bddeff"));
  EXPECT_TRUE(matches(g, "aaabbcddeeefffff"));
  EXPECT_FALSE(matches(g, "ddeff"));     // b+ needs one
  EXPECT_FALSE(matches(g, "bccddeff"));  // c? at most one
  EXPECT_FALSE(matches(g, "bdeff"));     // d{2}
  EXPECT_FALSE(matches(g, "bddeeeeff")); // e{1,3}
  EXPECT_FALSE(matches(g, "bddef"));     // f{2,}
}

TEST(GrammarMatcher, ClassesNegationAndAnyCharacter) {
  auto g = compile(R"(root ::= [a-cX] [^a-z] . "!")");
  EXPECT_TRUE(matches(g, "bQz!"));
  EXPECT_TRUE(matches(g, "X1é!"));
  EXPECT_TRUE(matches(g, "aÄ😀!"));
  EXPECT_FALSE(matches(g, "dQz!"));
  EXPECT_FALSE(matches(g, "bqz!"));
  // A negated class and `.` take any well-formed character, never a stray byte.
  EXPECT_FALSE(prefix_ok(g, "a\x80"));
  EXPECT_FALSE(prefix_ok(g, "aQ\xC0\x80"));     // overlong
  EXPECT_FALSE(prefix_ok(g, "aQ\xED\xA0\x80")); // a surrogate
  EXPECT_TRUE(prefix_ok(g, "aQ\xE2\x82"));      // half of a character is a live prefix
}

TEST(GrammarMatcher, EscapesInLiteralsAndClasses) {
  auto g = compile(R"(root ::= "\"\\\n\t" [\x41-\x43] "\u00e9" [\]\-] "\U0001F600")");
  EXPECT_TRUE(matches(g, "\"\\\n\tBé]😀"));
  EXPECT_TRUE(matches(g, "\"\\\n\tAé-😀"));
  EXPECT_FALSE(matches(g, "\"\\\n\tDé]😀"));
}

TEST(GrammarMatcher, GroupsCommentsAndRulesOverSeveralLines) {
  auto g = compile(R"(# a list of numbers
root ::= "[" ( num ( "," num )* )? "]"   # may be empty
num ::=
    "-"? [0-9]+
)");
  EXPECT_TRUE(matches(g, "[]"));
  EXPECT_TRUE(matches(g, "[1,-22,333]"));
  EXPECT_FALSE(matches(g, "[1,]"));
  EXPECT_FALSE(matches(g, "[--1]"));
}

TEST(GrammarMatcher, RecursionNestsAndLongStarsKeepTheStackShallow) {
  auto g = compile(R"(
root ::= value
value ::= "[" ( value ( "," value )* )? "]" | "x"
)");
  EXPECT_TRUE(matches(g, "[x,[x,[]],[[[x]]]]"));
  EXPECT_FALSE(matches(g, "[x,[x]"));
  // 20,000 repetitions of a star: the tail call keeps the state count small.
  auto star = compile(R"(root ::= "a"* "b")");
  GrammarMatcher m(star);
  for (int i = 0; i < 20000; ++i)
    ASSERT_TRUE(m.accept("a"));
  EXPECT_LE(m.n_states(), 3u);
  EXPECT_TRUE(m.accept("b"));
  EXPECT_TRUE(m.can_end());
}

TEST(GrammarMatcher, EmptyAlternativesAndNullableRules) {
  auto g = compile(R"(
root ::= opt opt "x" | ""
opt ::= "o" |
)");
  EXPECT_TRUE(matches(g, ""));
  EXPECT_TRUE(matches(g, "x"));
  EXPECT_TRUE(matches(g, "oox"));
  EXPECT_FALSE(matches(g, "ooox"));
}

TEST(GrammarMatcher, AmbiguousGrammarsKeepEveryReading) {
  // "ab" can be read two ways; both must survive until one dies.
  auto g = compile(R"(root ::= "a" "b" "c" | "a" [a-z] "d")");
  EXPECT_TRUE(matches(g, "abc"));
  EXPECT_TRUE(matches(g, "abd"));
  EXPECT_FALSE(matches(g, "abe"));
}

TEST(GrammarMatcher, StatesAreSharedAndTransitionsRemembered) {
  auto g = compile(R"(root ::= ("ab")* )");
  GrammarMatcher m(g);
  ASSERT_TRUE(m.accept("ab"));
  const auto after_ab = m.state();
  ASSERT_TRUE(m.accept("abab"));
  EXPECT_EQ(m.state(), after_ab); // the same set of stacks is the same state
  EXPECT_EQ(m.step(m.state(), 'a'), m.step(m.state(), 'a'));
  EXPECT_EQ(m.step(m.state(), 'b'), GrammarMatcher::kDead);
}

TEST(GrammarParser, ErrorsNameWhatAndWhere) {
  EXPECT_NE(error_of("").find("empty"), std::string::npos);
  EXPECT_NE(error_of("start ::= \"a\"").find("no `root` rule"), std::string::npos);
  EXPECT_NE(error_of("root ::= item").find("`item` is used but not defined"), std::string::npos);
  EXPECT_NE(error_of("root ::= \"a\"\nroot ::= \"b\"")
                .find("line 2, column 1: the rule `root` is defined twice"),
            std::string::npos);
  EXPECT_NE(error_of("root ::= \"abc").find("not closed"), std::string::npos);
  EXPECT_NE(error_of("root ::= [abc").find("not closed with `]`"), std::string::npos);
  EXPECT_NE(error_of("root ::= [z-a]").find("end is below its start"), std::string::npos);
  EXPECT_NE(error_of("root ::= (\"a\"").find("`)`"), std::string::npos);
  EXPECT_NE(error_of("root ::= \"a\"{3,2}").find("n < m"), std::string::npos);
  EXPECT_NE(error_of("root ::= \"a\"{5000}").find("above 1000"), std::string::npos);
  EXPECT_NE(error_of("root ::= \"\\q\"").find("unknown escape `\\q`"), std::string::npos);
  EXPECT_NE(error_of("root ::= \"\\uD800\"").find("surrogate"), std::string::npos);
  EXPECT_NE(error_of("root ::= [^\\x00-\\U0010FFFF]").find("matches no character"),
            std::string::npos);
  EXPECT_NE(error_of("root ::= @").find("line 1, column 10: unexpected `@`"), std::string::npos);
  EXPECT_NE(
      error_of("root ::= list\nlist ::= list \",\" \"x\" | \"x\"").find("`list` is left-recursive"),
      std::string::npos);
  EXPECT_NE(error_of("root ::= a\na ::= b? a \"x\"\nb ::= \"b\"").find("left-recursive"),
            std::string::npos);
}

TEST(GrammarParser, UserRulesNamedLikeGeneratedOnesStayTheUsers) {
  auto g = compile(R"(
root ::= ("x" | "y")+ root_1
root_1 ::= "!"
)");
  EXPECT_TRUE(matches(g, "xyx!"));
  EXPECT_FALSE(matches(g, "xyx"));
}

} // namespace
} // namespace pshard
