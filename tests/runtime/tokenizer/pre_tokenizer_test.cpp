// PreTokenizer and the pre-tokenizer table: how each expression list cuts text,
// the regex details that matter for exact token ids (lookahead at a piece's
// end, `$`, Unicode White_Space), invalid UTF-8, and bad patterns.
#include "runtime/tokenizer/pre_tokenizer.h"
#include "runtime/tokenizer/pre_tokenizer_patterns.h"

#include <fstream>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace pshard {
namespace {

using Pieces = std::vector<std::string>;

Pieces split_with(std::span<const std::string_view> patterns, std::string_view text) {
  auto pre = PreTokenizer::create(patterns);
  EXPECT_TRUE(pre.ok()) << pre.status().to_string();
  if (!pre.ok())
    return {};
  std::vector<std::string_view> views;
  pre->split(text, views);
  std::string joined;
  for (std::string_view v : views)
    joined += v;
  EXPECT_EQ(joined, text) << "the pieces must cover the text exactly";
  return Pieces(views.begin(), views.end());
}

Pieces split_as(std::string_view pre_name, std::string_view text) {
  std::string warning;
  const PreTokenizerSpec& spec = find_pre_tokenizer(pre_name, &warning);
  EXPECT_EQ(warning, "") << pre_name;
  return split_with(spec.patterns, text);
}

TEST(PreTokenizer, Gpt2KeepsOneSpaceForTheNextWord) {
  EXPECT_EQ(split_as("gpt-2", "Hello  world"), (Pieces{"Hello", " ", " world"}));
  EXPECT_EQ(split_as("gpt-2", "I've 123 ok!!"), (Pieces{"I", "'ve", " 123", " ok", "!!"}));
  EXPECT_EQ(split_as("gpt-2", "a\n\nb"), (Pieces{"a", "\n", "\n", "b"}));
  // At the end of the piece the lookahead sees its end: all spaces go together.
  EXPECT_EQ(split_as("gpt-2", "a   "), (Pieces{"a", "   "}));
}

TEST(PreTokenizer, Llama3GroupsDigitsInThreesAndNewlines) {
  EXPECT_EQ(split_as("llama-bpe", "1234567"), (Pieces{"123", "456", "7"}));
  EXPECT_EQ(split_as("llama-bpe", "Hello\n\nworld"), (Pieces{"Hello", "\n\n", "world"}));
  EXPECT_EQ(split_as("llama-bpe", "I'M ok"), (Pieces{"I", "'M", " ok"}));
  EXPECT_EQ(split_as("llama-bpe", "(x)"), (Pieces{"(x", ")"}));
  EXPECT_EQ(split_as("qwen2", "1234"), (Pieces{"1", "2", "3", "4"}));
}

// Qwen3.5 keeps a combining mark in its word, where Qwen2 starts a new piece with it.
TEST(PreTokenizer, Qwen35KeepsCombiningMarksInTheirWord) {
  EXPECT_EQ(split_as("qwen35", "nai\u0308ve caf\u0065\u0301!"),
            (Pieces{"nai\u0308ve", " cafe\u0301", "!"}));
  EXPECT_EQ(split_as("qwen2", "nai\u0308ve"), (Pieces{"nai", "\u0308ve"}));
  EXPECT_EQ(split_as("qwen35", "it's 42\n\n"), (Pieces{"it", "'s", " ", "4", "2", "\n\n"}));
  EXPECT_EQ(split_as("qwen35", "a \u0301\u0301+"), (Pieces{"a", " \u0301\u0301", "+"}));
}

TEST(PreTokenizer, TekkenSplitsWhereLowerTurnsUpper) {
  EXPECT_EQ(split_as("tekken", "HelloWorld"), (Pieces{"Hello", "World"}));
  EXPECT_EQ(split_as("tekken", "\u00C9coleNormale"), (Pieces{"\u00C9cole", "Normale"}));
  EXPECT_EQ(split_as("tekken", "a/b//\n"), (Pieces{"a", "/b", "//\n"}));
}

TEST(PreTokenizer, Gpt4oKeepsContractionsWithTheirWordAndDigitsInThrees) {
  EXPECT_EQ(split_as("gpt-4o", "I'M ok, don't"), (Pieces{"I'M", " ok", ",", " don't"}));
  EXPECT_EQ(split_as("gpt-4o", "HelloWorld 1234567"),
            (Pieces{"Hello", "World", " ", "123", "456", "7"}));
  EXPECT_EQ(split_as("tekken", "don't"), (Pieces{"don", "'t"})); // no contractions there
}

TEST(PreTokenizer, KimiK2CutsHanRunsOutOfWords) {
  // Han is its own run, never part of a word; kana, Hangul and Latin are words.
  EXPECT_EQ(split_as("kimi-k2", "\u4E2D\u6587abc \u65E5\u672C\u8A9E\u30C6\u30B9\u30C8"),
            (Pieces{"\u4E2D\u6587", "abc", " ", "\u65E5\u672C\u8A9E", "\u30C6\u30B9\u30C8"}));
  // Where lower case turns upper, a word ends (llama.cpp's own splitter keeps it whole).
  EXPECT_EQ(split_as("kimi-k2", "getUserName don'T"), (Pieces{"get", "User", "Name", " don'T"}));
  // U+3001 is Han only by Script_Extensions (PCRE2's bare \p{Han}); U+3005 and the radical
  // U+2E80 are Han by Script; U+31350 (Extension H) is Han from Unicode 15.
  EXPECT_EQ(split_as("kimi-k2", "\u4E00\u3001\u3005\u2E80\U00031350x/y"),
            (Pieces{"\u4E00", "\u3001", "\u3005\u2E80\U00031350", "x", "/y"}));
}

// Moonshot's expression itself, run by Python's `regex` module over llama.cpp's tokenizer
// texts and texts about Han, case changes and contractions (tests/tools/kimi_k2_pieces.py):
// pshard's PCRE2 form must cut every one the same way.
TEST(PreTokenizer, KimiK2CutsAsMoonshotsExpression) {
  std::ifstream in(std::string(PSHARD_TOKENIZER_TEST_DATA) + "/kimi_k2_pieces.jsonl");
  ASSERT_TRUE(in) << "tests/runtime/tokenizer/data/kimi_k2_pieces.jsonl is missing";
  int cases = 0;
  for (std::string line; std::getline(in, line);) {
    const nlohmann::json c = nlohmann::json::parse(line);
    const std::string text = c.at("text").get<std::string>();
    EXPECT_EQ(split_as("kimi-k2", text), c.at("pieces").get<Pieces>()) << "text: " << text;
    ++cases;
  }
  EXPECT_GE(cases, 60) << "the golden file holds too few texts to say much";
}

TEST(PreTokenizer, ExpressionsApplyInTurnToEachPiece) {
  // Falcon: punctuation runs first, then GPT-2's expression, then digit triples.
  EXPECT_EQ(split_as("falcon", "x=12345"), (Pieces{"x", "=", "123", "45"}));
  // DeepSeek Coder: each newline alone, letters, punctuation, then single digits.
  EXPECT_EQ(split_as("deepseek-coder", "ab\n12"), (Pieces{"ab", "\n", "1", "2"}));
}

TEST(PreTokenizer, InvalidUtf8IsKeptBetweenMatches) {
  EXPECT_EQ(split_as("gpt-2", "ab\xFFxy"), (Pieces{"ab", "\xFF", "xy"}));
  EXPECT_EQ(split_as("llama-bpe", "\xC3(x \xE2\x82"), (Pieces{"\xC3", "(x", " ", "\xE2\x82"}));
  EXPECT_EQ(split_as("qwen2", std::string("a\0b", 3)), (Pieces{"a", std::string("\0b", 2)}));
}

TEST(PreTokenizer, DollarMatchesOnlyAtTheVeryEnd) {
  const std::string_view pattern[] = {"b$"};
  EXPECT_EQ(split_with(pattern, "ab\n"), (Pieces{"ab\n"}));
  EXPECT_EQ(split_with(pattern, "ab"), (Pieces{"a", "b"}));
}

TEST(PreTokenizer, WhiteSpaceIsUnicodesWhiteSpaceProperty) {
  const std::string_view pattern[] = {R"(\s+)"};
  EXPECT_EQ(split_with(pattern, "a\u3000b"), (Pieces{"a", "\u3000", "b"}));
  EXPECT_EQ(split_with(pattern, "a\u0085b"), (Pieces{"a", "\u0085", "b"}));
  // U+180E MONGOLIAN VOWEL SEPARATOR is PCRE2's \s, not White_Space.
  EXPECT_EQ(split_with(pattern, "a\u180Eb"), (Pieces{"a\u180Eb"}));
  const std::string_view negated[] = {R"([^\s]+)"};
  EXPECT_EQ(split_with(negated, "a\u180Eb c"), (Pieces{"a\u180Eb", " ", "c"}));
}

TEST(PreTokenizer, WhiteSpaceRewriteKeepsOtherEscapesAndClasses) {
  const std::string rewritten = with_white_space_classes(R"(\s+(?!\S)|[^\s\p{L}]|\\s|[]\s])");
  EXPECT_EQ(rewritten.find("\\s"), rewritten.find("\\\\s") + 1) << rewritten;
  EXPECT_NE(rewritten.find("(?![^\\x{9}-\\x{D}"), std::string::npos) << rewritten;
  EXPECT_NE(rewritten.find("[^\\x{9}-\\x{D}"), std::string::npos) << rewritten;
  EXPECT_NE(rewritten.find("\\p{L}]"), std::string::npos) << rewritten;
  EXPECT_NE(rewritten.find("[]\\x{9}"), std::string::npos) << rewritten;
}

TEST(PreTokenizer, EveryKnownNameCompilesAndCoversItsInput) {
  const std::string text = "Hello, y'all! 1234 \u00FCber \u6211\u60F3 \xF0\x9F\xA6\x99\t\n  x";
  for (std::string_view name : known_pre_tokenizer_names()) {
    SCOPED_TRACE(std::string(name));
    const Pieces pieces = split_as(name, text);
    EXPECT_GT(pieces.size(), 5u);
  }
}

TEST(PreTokenizer, UnknownOrMissingNamesFallBackWithAWarning) {
  std::string warning;
  const PreTokenizerSpec& spec = find_pre_tokenizer("no-such-model", &warning);
  EXPECT_EQ(spec.name, "default");
  EXPECT_NE(warning.find("\"no-such-model\""), std::string::npos) << warning;
  warning.clear();
  EXPECT_EQ(find_pre_tokenizer("", &warning).name, "default");
  EXPECT_NE(warning.find("absent"), std::string::npos) << warning;
  warning.clear();
  EXPECT_EQ(find_pre_tokenizer("llama3", &warning).name, "llama-bpe");
  EXPECT_TRUE(find_pre_tokenizer("llama3", &warning).ignore_merges);
  EXPECT_FALSE(find_pre_tokenizer("qwen2", &warning).ignore_merges);
  EXPECT_EQ(warning, "");
}

TEST(PreTokenizer, ABadPatternIsAnErrorNamingIt) {
  const std::string_view pattern[] = {"(unclosed"};
  auto pre = PreTokenizer::create(pattern);
  ASSERT_FALSE(pre.ok());
  EXPECT_EQ(pre.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(pre.status().message().find("\"(unclosed\""), std::string::npos)
      << pre.status().message();
}

TEST(PreTokenizer, LongRunsDoNotExhaustTheMatcher) {
  // 200 000 spaces then a letter: \s+(?!\S) backtracks over the whole run.
  const std::string text = std::string(200000, ' ') + "x";
  const Pieces pieces = split_as("gpt-2", text);
  EXPECT_EQ(pieces, (Pieces{std::string(199999, ' '), " x"}));
}

} // namespace
} // namespace pshard
