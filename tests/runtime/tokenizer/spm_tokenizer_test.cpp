// SpmTokenizer on small in-memory vocabularies: each test pins one rule of the
// SentencePiece BPE algorithm (merge order, byte fallback, special tokens,
// space handling) without needing a GGUF file.
#include "runtime/tokenizer/spm_tokenizer.h"
#include "tests/runtime/tokenizer/byte_pieces.h"
#include "tests/runtime/tokenizer/token_lookup.h"

#include <algorithm>
#include <gtest/gtest.h>
#include <random>

namespace pshard {
namespace {

using Ids = std::vector<TokenId>;
using testing_vocab::id_of;

// <unk> <s> </s>, the 256 byte tokens, then `pieces` (text, score) as normal tokens.
Vocabulary make_vocab(const std::vector<std::pair<std::string, float>> &pieces,
                      bool with_bytes = true) {
  Vocabulary vocab;
  vocab.model = "llama";
  vocab.tokens.push_back({"<unk>", 0.0f, TokenType::kUnknown});
  vocab.tokens.push_back({"<s>", 0.0f, TokenType::kControl});
  vocab.tokens.push_back({"</s>", 0.0f, TokenType::kControl});
  vocab.unk_id = 0;
  vocab.bos_id = 1;
  vocab.eos_id = 2;
  if (with_bytes)
    testing_vocab::append_byte_pieces(vocab);
  for (const auto &[text, score] : pieces)
    vocab.tokens.push_back({text, score, TokenType::kNormal});
  return vocab;
}

std::unique_ptr<SpmTokenizer> make(Vocabulary vocab) {
  auto tok = SpmTokenizer::create(std::move(vocab));
  EXPECT_TRUE(tok.ok()) << tok.status().to_string();
  return std::move(tok).value();
}

// A vocabulary that can spell "hello world" in a few ways.
std::unique_ptr<SpmTokenizer> hello_tokenizer() {
  return make(make_vocab({{"▁", -1},
                          {"h", -2},
                          {"e", -2},
                          {"l", -2},
                          {"o", -2},
                          {"w", -2},
                          {"r", -2},
                          {"d", -2},
                          {"ll", -3},
                          {"▁h", -4},
                          {"▁he", -5},
                          {"llo", -6},
                          {"▁hello", -7},
                          {"▁w", -8},
                          {"or", -9},
                          {"▁wor", -10},
                          {"ld", -11},
                          {"▁world", -12}}));
}

TEST(SpmTokenizer, MergesIntoWholeWordsWithSpacePrefix) {
  auto tok = hello_tokenizer();
  EXPECT_EQ(tok->encode("hello world", false), (Ids{id_of(*tok, "▁hello"), id_of(*tok, "▁world")}));
}

TEST(SpmTokenizer, AddBosPrependsBos) {
  auto tok = hello_tokenizer();
  EXPECT_EQ(tok->encode("hello", true), (Ids{1, id_of(*tok, "▁hello")}));
  EXPECT_EQ(tok->encode("", true), (Ids{1}));
  EXPECT_EQ(tok->encode("", false), (Ids{}));
}

TEST(SpmTokenizer, AddEosFollowsMetadata) {
  Vocabulary vocab = make_vocab({{"▁", -1}, {"a", -1}, {"▁a", -1}});
  vocab.add_eos = true;
  auto tok = make(std::move(vocab));
  EXPECT_EQ(tok->encode("a", true), (Ids{1, id_of(*tok, "▁a"), 2}));
  EXPECT_EQ(tok->encode("a", false), (Ids{id_of(*tok, "▁a")}));
}

TEST(SpmTokenizer, HigherScoreMergesFirst) {
  // "abc": "bc" outscores "ab", so the result is a + bc, not ab + c.
  Vocabulary vocab = make_vocab({{"a", -1}, {"b", -1}, {"c", -1}, {"ab", -5}, {"bc", -2}});
  vocab.add_space_prefix = false;
  auto tok = make(std::move(vocab));
  EXPECT_EQ(tok->encode("abc", false), (Ids{id_of(*tok, "a"), id_of(*tok, "bc")}));
}

TEST(SpmTokenizer, EqualScoresMergeLeftmostFirst) {
  Vocabulary vocab = make_vocab({{"a", -1}, {"aa", -2}});
  vocab.add_space_prefix = false;
  auto tok = make(std::move(vocab));
  const TokenId a = id_of(*tok, "a");
  const TokenId aa = id_of(*tok, "aa");
  EXPECT_EQ(tok->encode("aaa", false), (Ids{aa, a}));
  EXPECT_EQ(tok->encode("aaaaa", false), (Ids{aa, aa, a}));
}

TEST(SpmTokenizer, UnknownCharactersFallBackToBytes) {
  auto tok = hello_tokenizer();
  // "é" is C3 A9 and not a piece.
  EXPECT_EQ(tok->encode("hé", false),
            (Ids{id_of(*tok, "▁h"), id_of(*tok, "<0xC3>"), id_of(*tok, "<0xA9>")}));
}

TEST(SpmTokenizer, WithoutByteTokensUnknownCharactersBecomeUnk) {
  Vocabulary vocab = make_vocab({{"▁", -1}, {"a", -1}}, /*with_bytes=*/false);
  auto tok = make(std::move(vocab));
  EXPECT_EQ(tok->encode("aéa", false),
            (Ids{id_of(*tok, "▁"), id_of(*tok, "a"), 0, id_of(*tok, "a")}));
}

TEST(SpmTokenizer, ControlTokensNeedParseSpecial) {
  auto tok = hello_tokenizer();
  const Ids parsed = tok->encode("hello</s>", false, /*parse_special=*/true);
  EXPECT_EQ(parsed, (Ids{id_of(*tok, "▁hello"), 2}));
  const Ids literal = tok->encode("hello</s>", false, /*parse_special=*/false);
  EXPECT_EQ(literal.size(), 5u); // ▁hello < / s > (the last four as bytes)
  EXPECT_EQ(literal[1], id_of(*tok, "<0x3C>"));
}

TEST(SpmTokenizer, TextAfterASpecialTokenGetsTheSpacePrefix) {
  auto tok = hello_tokenizer();
  EXPECT_EQ(tok->encode("<s>hello", false, true), (Ids{1, id_of(*tok, "▁hello")}));
}

TEST(SpmTokenizer, UserDefinedTokensAreMatchedWhole) {
  Vocabulary vocab = make_vocab({{"▁", -1}, {"a", -1}, {"▁a", -1}});
  vocab.tokens.push_back({"<|tool|>", 0.0f, TokenType::kUserDefined});
  auto tok = make(std::move(vocab));
  const TokenId tool = tok->n_vocab() - 1;
  EXPECT_EQ(tok->encode("a<|tool|>a", false), (Ids{id_of(*tok, "▁a"), tool, id_of(*tok, "▁a")}));
}

TEST(SpmTokenizer, TokenToPieceUnescapesAndDecodesBytes) {
  auto tok = hello_tokenizer();
  EXPECT_EQ(tok->token_to_piece(id_of(*tok, "▁hello")), " hello");
  EXPECT_EQ(tok->token_to_piece(id_of(*tok, "<0x0A>")), "\n");
  EXPECT_EQ(tok->token_to_piece(1), "");
  EXPECT_EQ(tok->token_to_piece(-1), "");
  EXPECT_EQ(tok->token_to_piece(tok->n_vocab()), "");
  EXPECT_EQ(tok->token_to_piece(0), "\xEF\xBF\xBD");
}

TEST(SpmTokenizer, DecodeDropsTheAddedLeadingSpaceOnly) {
  auto tok = hello_tokenizer();
  for (std::string text : {"hello world", " hello", "  hello  world ", "héllo\nworld", ""}) {
    EXPECT_EQ(tok->decode(tok->encode(text, true)), text) << text;
    EXPECT_EQ(tok->decode(tok->encode(text, false)), text) << text;
  }
}

TEST(SpmTokenizer, WithoutSpacePrefixNothingIsAddedOrDropped) {
  Vocabulary vocab = make_vocab({{"▁", -1}, {"a", -1}, {"▁a", -1}});
  vocab.add_space_prefix = false;
  auto tok = make(std::move(vocab));
  EXPECT_EQ(tok->encode("a a", false), (Ids{id_of(*tok, "a"), id_of(*tok, "▁a")}));
  EXPECT_EQ(tok->decode(tok->encode(" a", false)), " a");
}

TEST(SpmTokenizer, EndOfGeneration) {
  Vocabulary vocab = make_vocab({{"a", -1}});
  vocab.tokens.push_back({"<|end|>", 0.0f, TokenType::kControl});
  auto tok = make(std::move(vocab));
  EXPECT_TRUE(tok->is_end_of_generation(2));
  EXPECT_TRUE(tok->is_end_of_generation(tok->n_vocab() - 1));
  EXPECT_FALSE(tok->is_end_of_generation(1));
  EXPECT_FALSE(tok->is_end_of_generation(-1));
  EXPECT_FALSE(tok->is_end_of_generation(tok->n_vocab()));
}

TEST(SpmTokenizer, RejectsOutOfRangeSpecialIds) {
  Vocabulary vocab = make_vocab({{"a", -1}});
  vocab.bos_id = vocab.size();
  auto tok = SpmTokenizer::create(std::move(vocab));
  ASSERT_FALSE(tok.ok());
  EXPECT_EQ(tok.status().code(), StatusCode::kInvalidFormat);
  EXPECT_NE(tok.status().message().find("bos"), std::string::npos);
}

TEST(SpmTokenizer, RejectsAnEmptyVocabulary) {
  EXPECT_FALSE(SpmTokenizer::create(Vocabulary{}).ok());
}

TEST(SpmTokenizer, MalformedUtf8IsEncodedAsBytes) {
  auto tok = hello_tokenizer();
  const std::string text = "h\xC3"; // truncated two-byte sequence
  EXPECT_EQ(tok->encode(text, false), (Ids{id_of(*tok, "▁h"), id_of(*tok, "<0xC3>")}));
  EXPECT_EQ(tok->decode(tok->encode(text, false)), text);
}

// A vocabulary whose pieces hold a space marker only after other markers merges each word
// alone (one heap per word); one piece holding "x▁" anywhere sends every text through one
// heap. Both give the same ids wherever that piece cannot occur, and the piece is found
// across words where it can.
TEST(SpmTokenizer, WordByWordMergingEqualsWholeText) {
  const std::vector<std::pair<std::string, float>> pieces = {
      {"▁", -1},   {"a", -2},    {"b", -2},    {"c", -2},   {"▁▁", -3},  {"ab", -3},
      {"▁a", -4},  {"ba", -4},   {"▁▁▁", -5},  {"▁ab", -5}, {"abc", -6}, {"▁▁a", -6},
      {"cab", -7}, {"▁cab", -8}, {"▁abc", -9}, {"bab", -9}, {"▁b", -10}, {"▁▁ab", -11}};
  auto split = make(make_vocab(pieces));
  std::vector<std::pair<std::string, float>> joined = pieces;
  joined.push_back({"z▁", -0.4f}); // "z" is in no random text below
  joined.push_back({"z▁z", -0.5f});
  auto whole = make(make_vocab(joined));
  std::mt19937 rng(7);
  const char* parts[] = {"a", "b", "c", " ", "  ", "\xC3", "é"};
  for (int trial = 0; trial < 300; ++trial) {
    std::string text;
    for (int i = 0, n = static_cast<int>(rng() % 40); i < n; ++i)
      text += parts[rng() % std::size(parts)];
    ASSERT_EQ(split->encode(text, false), whole->encode(text, false)) << "'" << text << "'";
  }
  const Ids across = whole->encode("abz zab", false);
  EXPECT_NE(std::find(across.begin(), across.end(), id_of(*whole, "z▁z")), across.end());
}

} // namespace
} // namespace pshard
