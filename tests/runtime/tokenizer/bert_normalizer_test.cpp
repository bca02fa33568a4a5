// split_bert_words and BertChar: each test pins one of BERT's rules for preparing text
// (accents, case, CJK ideographs, punctuation, whitespace, control characters) on
// characters whose treatment the Unicode data fixes.
#include "runtime/tokenizer/bert_char_table.h"
#include "runtime/tokenizer/bert_normalizer.h"

#include <gtest/gtest.h>

namespace pshard {
namespace {

using Words = std::vector<std::string>;

Words words_of(std::string_view text) {
  Words words;
  split_bert_words(text, words);
  return words;
}

TEST(BertNormalizer, StripsAccentsAndLowercases) {
  EXPECT_EQ(words_of("F\u00FChrer Caf\u00E9 NA\u00CFVE"), (Words{"fuhrer", "cafe", "naive"}));
  // Vietnamese "ử" is u with a horn and a hook above: both marks go.
  EXPECT_EQ(words_of("C\u1EEDa Vi\u1EC7t"), (Words{"cua", "viet"}));
  // A mark typed on its own goes too, with the variation selector after an emoji.
  EXPECT_EQ(words_of("e\u0301te \u2705\uFE0F"), (Words{"ete", "\u2705"}));
  // Greek and Cyrillic capitals; a capital sigma is σ even at the end of a word (each
  // character is lowercased alone, as Hugging Face's normalizer does).
  EXPECT_EQ(words_of("\u039F\u0394\u039F\u03A3 \u0411\u042A\u041B"),
            (Words{"\u03BF\u03B4\u03BF\u03C3", "\u0431\u044A\u043B"}));
  // Dotted capital I decomposes to I + a dot above, which goes.
  EXPECT_EQ(words_of("\u0130stanbul"), (Words{"istanbul"}));
}

TEST(BertNormalizer, KeepsCompatibilityFormsAndSpacingMarks) {
  // NFD, not NFKD: ½, the ﬁ ligature and fullwidth letters stay; a spacing mark (Mc) of
  // Devanagari stays in its word.
  EXPECT_EQ(words_of("\u00BD \uFB01 \uFF21"), (Words{"\u00BD", "\uFB01", "\uFF41"}));
  EXPECT_EQ(words_of("\u0915\u093E"), (Words{"\u0915\u093E"}));
}

TEST(BertNormalizer, HangulSyllablesBecomeJamo) {
  EXPECT_EQ(words_of("\uD55C\uAD6D"), (Words{"\u1112\u1161\u11AB\u1100\u116E\u11A8"}));
  EXPECT_EQ(words_of("\uAC00"), (Words{"\u1100\u1161"})); // no trailing consonant
}

TEST(BertNormalizer, CjkIdeographsAreWordsOfTheirOwn) {
  EXPECT_EQ(words_of("\u6211\u60F3\u5728apple\u5DE5\u4F5C1314"),
            (Words{"\u6211", "\u60F3", "\u5728", "apple", "\u5DE5", "\u4F5C", "1314"}));
  // A compatibility ideograph becomes its unified one; Extension B is isolated too.
  EXPECT_EQ(words_of("a\uF900b\U00020000c"), (Words{"a", "\u8C48", "b", "\U00020000", "c"}));
  // Kana and Hangul are written with spaces between words: not isolated.
  EXPECT_EQ(words_of("\u3053\u3093\u306B\u3061\u306F"), (Words{"\u3053\u3093\u306B\u3061\u306F"}));
}

TEST(BertNormalizer, PunctuationIsAWordOfItsOwn) {
  EXPECT_EQ(words_of("Hello, y'all!!"), (Words{"hello", ",", "y", "'", "all", "!", "!"}));
  // Every ASCII symbol counts, though $ + < = > ^ ` | ~ are not Unicode punctuation...
  EXPECT_EQ(words_of("a$b+c<d=e>f^g`h|i~j"),
            (Words{"a", "$", "b", "+", "c", "<", "d", "=", "e", ">", "f", "^", "g", "`", "h", "|",
                   "i", "~", "j"}));
  // ...and beyond ASCII only punctuation does: dashes, guillemets, CJK brackets yes;
  // the euro sign and the fullwidth tilde (symbols) no.
  EXPECT_EQ(words_of("x\u2014y\u00ABz\u00BB\u3010w\u3011"),
            (Words{"x", "\u2014", "y", "\u00AB", "z", "\u00BB", "\u3010", "w", "\u3011"}));
  EXPECT_EQ(words_of("5\u20AC 7\uFF5E"), (Words{"5\u20AC", "7\uFF5E"}));
  // Greek varia is a modifier symbol whose NFD is the grave accent: punctuation.
  EXPECT_EQ(words_of("a\u1FEFb"), (Words{"a", "`", "b"}));
}

TEST(BertNormalizer, WhitespaceSeparatesWords) {
  EXPECT_EQ(words_of("  a\tb\nc\r\nd\u00A0e\u3000f\u2028g  "),
            (Words{"a", "b", "c", "d", "e", "f", "g"}));
  EXPECT_TRUE(words_of(" \t\n\u2003 ").empty());
  EXPECT_TRUE(words_of("").empty());
}

TEST(BertNormalizer, ControlAndFormatCharactersVanish) {
  // Dropped without splitting the word: a C0 control, vertical tab and form feed (BERT
  // calls them controls, not spaces), NUL, a zero-width space and joiner (format),
  // private use and U+FFFD.
  EXPECT_EQ(words_of(std::string("a\x01") + "b\x0B" + "c\x0C" + "d" + std::string(1, '\0') +
                     "e\u200Bf\u200Dg\uE000h\uFFFDi"),
            (Words{"abcdefghi"}));
  // Malformed UTF-8 is dropped the same way.
  EXPECT_EQ(words_of("ab\xFF\xC3("), (Words{"ab", "("}));
  EXPECT_EQ(words_of("\xE2\x82"), Words{});
}

TEST(BertChar, KindsAndForms) {
  EXPECT_EQ(BertChar::of(U'A').kind(), BertCharKind::kWord);
  EXPECT_EQ(BertChar::of(U'\u3000').kind(), BertCharKind::kSpace);
  EXPECT_EQ(BertChar::of(U'\u300C').kind(), BertCharKind::kIsolated);
  EXPECT_EQ(BertChar::of(U'\u0301').kind(), BertCharKind::kDropped);
  EXPECT_EQ(BertChar::of(0x110000).kind(), BertCharKind::kDropped);
  EXPECT_EQ(BertChar::of(0xFFFFFFFF).kind(), BertCharKind::kDropped);
  std::string out;
  BertChar::of(U'\u00C5').append_to(out); // Å
  BertChar::of(U'\u212B').append_to(out); // ANGSTROM SIGN: NFD is A + ring
  BertChar::of(U'\u0301').append_to(out); // nothing
  EXPECT_EQ(out, "aa");
  EXPECT_NE(std::string(BertChar::unicode_version()), "");
}

} // namespace
} // namespace pshard
