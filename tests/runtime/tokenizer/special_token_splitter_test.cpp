// SpecialTokenSplitter: which added tokens are cut out of text, in which order,
// and what rstrip/lstrip take with them.
#include "runtime/tokenizer/special_token_splitter.h"

#include <gtest/gtest.h>

namespace pshard {
namespace {

// 0 "<s>" control, 1 "</s>" control, 2 "<unk>" unknown, 3 "<tool>" user-defined,
// 4 "ab" normal, 5 "<|a|>" control, 6 "x<|a" control (overlaps 5, longer).
Vocabulary make_vocab() {
  Vocabulary v;
  v.model = "gpt2";
  v.tokens = {{"<s>", 0, TokenType::kControl},   {"</s>", 0, TokenType::kControl},
              {"<unk>", 0, TokenType::kUnknown}, {"<tool>", 0, TokenType::kUserDefined},
              {"ab", 0, TokenType::kNormal},     {"<|a|>", 0, TokenType::kControl},
              {"x<|a", 0, TokenType::kControl}};
  return v;
}

// Fragments as strings: "#id" for tokens, the text otherwise.
std::vector<std::string> show(const std::vector<TextFragment>& fragments) {
  std::vector<std::string> out;
  for (const TextFragment& f : fragments) {
    if (f.token != kNoToken) {
      EXPECT_TRUE(f.text.empty());
      out.push_back("#" + std::to_string(f.token));
    } else {
      EXPECT_FALSE(f.text.empty());
      out.push_back(std::string(f.text));
    }
  }
  return out;
}

using Shown = std::vector<std::string>;

TEST(SpecialTokenSplitter, ControlTokensOnlyWithParseSpecialUserDefinedAlways) {
  const Vocabulary v = make_vocab();
  const SpecialTokenSplitter s(v);
  EXPECT_EQ(show(s.split("<s>hi<tool>ab</s>", true)), (Shown{"#0", "hi", "#3", "ab", "#1"}));
  EXPECT_EQ(show(s.split("<s>hi<tool>ab</s>", false)), (Shown{"<s>hi", "#3", "ab</s>"}));
  EXPECT_EQ(show(s.split("<unk>", true)), (Shown{"#2"}));
  EXPECT_EQ(show(s.split("<unk>", false)), (Shown{"<unk>"}));
}

TEST(SpecialTokenSplitter, EveryOccurrenceAndAdjacentTokens) {
  const Vocabulary v = make_vocab();
  const SpecialTokenSplitter s(v);
  EXPECT_EQ(show(s.split("<tool><tool> <tool>", false)), (Shown{"#3", "#3", " ", "#3"}));
  EXPECT_EQ(show(s.split("", true)), (Shown{}));
  EXPECT_EQ(show(s.split("plain", true)), (Shown{"plain"}));
}

TEST(SpecialTokenSplitter, TheLongerTokenWinsWhereTwoOverlap) {
  // "x<|a" (4 bytes) starts before "<|a|>" (5 bytes), but the longer is cut
  // out first, as llama.cpp does.
  const Vocabulary v = make_vocab();
  const SpecialTokenSplitter s(v);
  EXPECT_EQ(show(s.split("x<|a|>", true)), (Shown{"x", "#5"}));
  EXPECT_EQ(show(s.split("x<|a", true)), (Shown{"#6"}));
}

TEST(SpecialTokenSplitter, StripFlagsTakeTheAsciiWhitespaceBesideTheToken) {
  Vocabulary v = make_vocab();
  v.tokens[3].rstrip = true;
  v.tokens[1].lstrip = true;
  const SpecialTokenSplitter s(v);
  EXPECT_EQ(show(s.split("a<tool> \n\tb", false)), (Shown{"a", "#3", "b"}));
  EXPECT_EQ(show(s.split("a<tool>\n", false)), (Shown{"a", "#3"}));
  EXPECT_EQ(show(s.split("a \n</s> b", true)), (Shown{"a", "#1", " b"}));
  // Only ASCII whitespace: U+3000 stays.
  EXPECT_EQ(show(s.split("<tool>\u3000b", false)), (Shown{"#3", "\u3000b"}));
}

} // namespace
} // namespace pshard
