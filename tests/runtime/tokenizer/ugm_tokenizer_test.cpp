// UgmTokenizer (SentencePiece Unigram) on small in-memory vocabularies: each test pins one
// rule — the highest-scoring segmentation, the unknown token and its runs, byte
// fallback, the normalizer's whitespace options, the charsmap — without a GGUF file.
// tests/tools/ugm/ugm_tokenizer_test.py checks the same against the SentencePiece library.
#include "runtime/tokenizer/precompiled_charsmap.h"
#include "runtime/tokenizer/ugm_tokenizer.h"
#include "tests/runtime/tokenizer/token_lookup.h"
#include "tests/runtime/tokenizer/unigram_vocab.h"

#include <cstring>
#include <gtest/gtest.h>

namespace pshard {
namespace {

using Ids = std::vector<TokenId>;
using testing_vocab::hand_built_charsmap;
using testing_vocab::id_of;

Vocabulary make_vocab(const std::vector<std::pair<std::string, float>>& pieces,
                      bool with_bytes = false) {
  return testing_vocab::unigram_vocab(pieces, with_bytes);
}

std::unique_ptr<UgmTokenizer> make(Vocabulary vocab) {
  auto tok = UgmTokenizer::create(std::move(vocab));
  EXPECT_TRUE(tok.ok()) << tok.status().to_string();
  return std::move(tok).value();
}

// "▁hello" can be one piece, or "▁he" + "llo", or letters.
std::unique_ptr<UgmTokenizer> hello_tokenizer(float whole_score) {
  return make(make_vocab({{"▁", -2},
                          {"h", -4},
                          {"e", -4},
                          {"l", -4},
                          {"o", -4},
                          {"▁he", -3},
                          {"llo", -3},
                          {"▁hello", whole_score},
                          {"w", -4},
                          {"▁w", -3},
                          {"orld", -3},
                          {"▁world", -5}}));
}

TEST(UgmTokenizer, TakesTheSegmentationWhoseScoresSumHighest) {
  // -5.5 for the whole word beats -3 + -3 = -6 ...
  auto tok = hello_tokenizer(-5.5f);
  EXPECT_EQ(tok->encode("hello", false), (Ids{id_of(*tok, "▁hello")}));
  // ... but not -6.5; nor does a greedy longest match win: "▁world" (-5) beats
  // "▁w" + "orld" (-6).
  tok = hello_tokenizer(-6.5f);
  EXPECT_EQ(tok->encode("hello world", false),
            (Ids{id_of(*tok, "▁he"), id_of(*tok, "llo"), id_of(*tok, "▁world")}));
}

TEST(UgmTokenizer, EqualScoresKeepTheFirstFound) {
  // "▁" + "ab" and "▁a" + "b" both sum to -4; the first found (the one ending at "ab"
  // from the earlier start) stays, as the SentencePiece library has it (checked with a
  // model of these pieces).
  auto tok = make(make_vocab({{"▁", -2}, {"▁a", -2}, {"ab", -2}, {"b", -2}, {"a", -5}}));
  EXPECT_EQ(tok->encode("ab", false), (Ids{id_of(*tok, "▁"), id_of(*tok, "ab")}));
}

TEST(UgmTokenizer, AddsTheSpecialsTheVocabularyAdds) {
  auto tok = hello_tokenizer(-1.0f);
  const TokenId hello = id_of(*tok, "▁hello");
  EXPECT_TRUE(tok->add_bos_by_default());
  EXPECT_EQ(tok->encode("hello", true), (Ids{0, hello, 2}));
  // T5: no BOS, EOS only — still "add the specials" by default.
  Vocabulary t5 = make_vocab({{"▁hello", -1}});
  t5.bos_id = kNoToken;
  t5.add_bos = false;
  auto t5_tok = make(std::move(t5));
  EXPECT_TRUE(t5_tok->add_bos_by_default());
  EXPECT_EQ(t5_tok->encode("hello", t5_tok->add_bos_by_default()), (Ids{4, 2}));
  // Control text is a token with parse_special, text without.
  EXPECT_EQ(tok->encode("</s>", false), (Ids{2}));
  EXPECT_NE(tok->encode("</s>", false, /*parse_special=*/false), (Ids{2}));
}

TEST(UgmTokenizer, RunsOfUnknownCharactersAreOneUnknownToken) {
  auto tok = hello_tokenizer(-1.0f);
  const TokenId hello = id_of(*tok, "▁hello");
  // "▁" then two characters no piece covers, then "▁hello": one <unk> for the run.
  EXPECT_EQ(tok->encode("\xE4\xB8\xAD\xE6\x96\x87 hello", false),
            (Ids{id_of(*tok, "▁"), 3, hello}));
  EXPECT_EQ(tok->decode(tok->encode("\xE4\xB8\xAD hello", false)), "\xEF\xBF\xBD hello");
}

TEST(UgmTokenizer, ByteFallbackSpellsUnknownRunsInBytes) {
  auto tok = make(make_vocab({{"▁", -2}, {"a", -2}}, /*with_bytes=*/true));
  const TokenId byte_e4 = id_of(*tok, "<0xE4>");
  const Ids ids = tok->encode("a\xE4\xB8\xAD", false);
  ASSERT_EQ(ids.size(), 5u);
  EXPECT_EQ(ids[0], id_of(*tok, "▁"));
  EXPECT_EQ(ids[1], id_of(*tok, "a"));
  EXPECT_EQ(ids[2], byte_e4);
  EXPECT_EQ(tok->decode(ids), "a\xE4\xB8\xAD");
}

TEST(UgmTokenizer, WhitespaceOptions) {
  // Extra whitespace removed (XLM-RoBERTa): leading, repeated and trailing spaces go.
  auto tok = hello_tokenizer(-1.0f);
  EXPECT_EQ(tok->encode("   hello    world  ", false),
            (Ids{id_of(*tok, "▁hello"), id_of(*tok, "▁world")}));
  EXPECT_TRUE(tok->encode("    ", false).empty());
  // Kept, and no dummy prefix: every space is a "▁".
  Vocabulary kept = make_vocab({{"▁", -2}, {"hello", -1}, {"▁hello", -1}});
  kept.remove_extra_whitespaces = false;
  kept.add_space_prefix = false;
  auto kept_tok = make(std::move(kept));
  const TokenId space = id_of(*kept_tok, "▁");
  EXPECT_EQ(kept_tok->encode("hello  hello ", false),
            (Ids{id_of(*kept_tok, "hello"), space, id_of(*kept_tok, "▁hello"), space}));
  EXPECT_EQ(kept_tok->decode(kept_tok->encode("hello  hello ", false)), "hello  hello ");
}

TEST(UgmTokenizer, UnusedPiecesNeverTakePart) {
  Vocabulary v = make_vocab({{"▁", -2}, {"a", -3}, {"b", -3}});
  v.tokens.push_back({"▁ab", 0.0f, TokenType::kUnused});
  auto tok = make(std::move(v));
  EXPECT_EQ(tok->encode("ab", false), (Ids{id_of(*tok, "▁"), id_of(*tok, "a"), id_of(*tok, "b")}));
}

TEST(UgmTokenizer, RefusesAVocabularyWithoutAnUnknownToken) {
  Vocabulary v = make_vocab({{"a", -1}});
  v.unk_id = kNoToken;
  auto tok = UgmTokenizer::create(std::move(v));
  ASSERT_FALSE(tok.ok());
  EXPECT_NE(tok.status().message().find("unknown_token_id"), std::string::npos);
}

TEST(PrecompiledCharsmap, FindsTheLongestRule) {
  auto map = PrecompiledCharsmap::parse(hand_built_charsmap());
  ASSERT_TRUE(map.ok()) << map.status().to_string();
  EXPECT_EQ(map->longest_match("AC").replacement, "a");
  EXPECT_EQ(map->longest_match("AC").consumed, 1u);
  EXPECT_EQ(map->longest_match("ABC").replacement, "ab");
  EXPECT_EQ(map->longest_match("ABC").consumed, 2u);
  EXPECT_EQ(map->longest_match("BA").consumed, 0u);
  EXPECT_EQ(map->longest_match("").consumed, 0u);

  // Through the tokenizer: "A" normalizes to "a".
  Vocabulary v = make_vocab({{"▁", -2}, {"▁a", -1}, {"b", -1}});
  v.precompiled_charsmap = hand_built_charsmap();
  auto tok = make(std::move(v));
  EXPECT_EQ(tok->encode("AB", false), (Ids{id_of(*tok, "▁a"), id_of(*tok, "b")}));
}

TEST(PrecompiledCharsmap, RefusesMalformedBlobs) {
  const std::string good = hand_built_charsmap();
  for (const std::string& bad : {good.substr(0, 3),               // no trie size
                                 good.substr(0, 4 + 66 * 4),      // no strings after the trie
                                 good.substr(0, good.size() - 1), // strings not ending in NUL
                                 std::string("\x03\0\0\0abcdefgh\0", 13)}) { // a trie of 3 bytes
    auto map = PrecompiledCharsmap::parse(bad);
    ASSERT_FALSE(map.ok()) << bad.size();
    EXPECT_NE(map.status().message().find("precompiled_charsmap"), std::string::npos);
  }
  // A trie pointing outside itself ends the search; nothing is read out of bounds.
  std::string wild = good;
  const uint32_t far = 0xFFFFu << 10;
  std::memcpy(wild.data() + 4, &far, 4);
  auto map = PrecompiledCharsmap::parse(wild);
  ASSERT_TRUE(map.ok());
  EXPECT_EQ(map->longest_match("AB").consumed, 0u);
}

} // namespace
} // namespace pshard
