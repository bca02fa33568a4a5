// BpeTokenizer on small in-memory byte-level vocabularies: each test pins one
// rule (merge order, ties, merges whose result is not a token, ignore_merges,
// added tokens, BOS/EOS, lossless bytes, streaming, warnings, bad metadata).
#include "runtime/tokenizer/bpe_tokenizer.h"
#include "runtime/tokenizer/utf8.h"
#include "tests/runtime/tokenizer/byte_level_vocab.h"

#include <gtest/gtest.h>

namespace pshard {
namespace {

using Ids = std::vector<TokenId>;
using testing_vocab::byte_level;

// Ids 0..255: the byte-level character of each byte, in byte order (so the
// token of byte b is b); then `extra`; `merges` written as raw "left right".
Vocabulary byte_vocab(std::vector<std::pair<std::string, std::string>> merges,
                      std::vector<TokenData> extra = {}, std::string pre = "gpt-2") {
  Vocabulary v;
  v.model = "gpt2";
  v.pre = std::move(pre);
  v.add_bos = false;
  v.add_space_prefix = false;
  v.tokens = testing_vocab::byte_level_alphabet();
  for (TokenData& t : extra) {
    if (t.type == TokenType::kNormal)
      t.text = byte_level(t.text);
    v.tokens.push_back(std::move(t));
  }
  for (const auto& [left, right] : merges)
    v.merges.push_back(byte_level(left) + " " + byte_level(right));
  return v;
}

std::unique_ptr<BpeTokenizer> make(Vocabulary v) {
  auto tok = BpeTokenizer::create(std::move(v));
  EXPECT_TRUE(tok.ok()) << tok.status().to_string();
  return tok.ok() ? std::move(tok).value() : nullptr;
}

TEST(BpeTokenizer, TheLowestRankMergesFirst) {
  auto bc_first = make(byte_vocab({{"b", "c"}, {"a", "b"}}, {{"bc"}, {"ab"}}));
  ASSERT_NE(bc_first, nullptr);
  EXPECT_EQ(bc_first->encode("abc", false), (Ids{'a', 256}));
  auto ab_first = make(byte_vocab({{"a", "b"}, {"b", "c"}}, {{"bc"}, {"ab"}}));
  ASSERT_NE(ab_first, nullptr);
  EXPECT_EQ(ab_first->encode("abc", false), (Ids{257, 'c'}));
}

TEST(BpeTokenizer, EqualRanksMergeLeftmostFirstAndResultsMergeOn) {
  auto tok = make(byte_vocab({{"a", "a"}, {"aa", "aa"}}, {{"aa"}, {"aaaa"}}));
  ASSERT_NE(tok, nullptr);
  EXPECT_EQ(tok->encode("aaa", false), (Ids{256, 'a'}));
  EXPECT_EQ(tok->encode("aaaaa", false), (Ids{257, 'a'}));
}

TEST(BpeTokenizer, AMergeTheVocabularyLacksFallsBackToItsBytes) {
  auto tok = make(byte_vocab({{"a", "b"}}));
  ASSERT_NE(tok, nullptr);
  EXPECT_EQ(tok->encode("ab", false), (Ids{'a', 'b'}));
}

TEST(BpeTokenizer, PiecesAreMergedSeparately) {
  // GPT-2 cuts "a b" into "a", " b": the space merges with b, never with a.
  auto tok = make(byte_vocab({{" ", "b"}, {"a", " "}}, {{" b"}, {"a "}}));
  ASSERT_NE(tok, nullptr);
  EXPECT_EQ(tok->encode("a b", false), (Ids{'a', 256}));
}

TEST(BpeTokenizer, IgnoreMergesTakesAWholeTokenAsItIs) {
  // "abc" is a token but no merge builds it; Llama 3's pre-tokenizer takes it
  // whole, GPT-2's does not.
  auto llama3 = make(byte_vocab({{"x", "y"}}, {{"abc"}}, "llama-bpe"));
  auto gpt2 = make(byte_vocab({{"x", "y"}}, {{"abc"}}, "gpt-2"));
  ASSERT_NE(llama3, nullptr);
  ASSERT_NE(gpt2, nullptr);
  EXPECT_EQ(llama3->encode("abc", false), (Ids{256}));
  EXPECT_EQ(gpt2->encode("abc", false), (Ids{'a', 'b', 'c'}));
}

// Kimi K2: a whole token is taken as it is (tiktoken's rule), but only within a piece — the
// expression cuts "getUser" into "get" and "User" and keeps Han runs apart from Latin, so a
// token spanning the cut is never used.
TEST(BpeTokenizer, KimiTakesWholeTokensOnlyWithinItsPieces) {
  const std::string han = "\u4e2d\u6587"; // 中文
  auto tok = make(byte_vocab({{"x", "y"}},
                             {{"getUser"}, {"get"}, {"User"}, {han}, {han + "ab"}}, "kimi-k2"));
  ASSERT_NE(tok, nullptr);
  EXPECT_EQ(tok->encode("getUser", false), (Ids{257, 258}));
  EXPECT_EQ(tok->encode(han + "ab", false), (Ids{259, 'a', 'b'}));
  EXPECT_FALSE(tok->add_bos_by_default());
}

TEST(BpeTokenizer, AddedTokensAndTheirPieces) {
  auto tok = make(byte_vocab(
      {{"x", "y"}}, {{"<|end|>", 0, TokenType::kControl}, {"<x>", 0, TokenType::kUserDefined}}));
  ASSERT_NE(tok, nullptr);
  EXPECT_EQ(tok->encode("a<|end|>", false), (Ids{'a', 256}));
  EXPECT_EQ(tok->encode("a<|end|>", false, /*parse_special=*/false).size(), 8u);
  EXPECT_EQ(tok->encode("<x> <x>", false, false), (Ids{257, ' ', 257}));
  EXPECT_EQ(tok->token_to_piece(256), "");
  EXPECT_EQ(tok->token_to_piece(257), "<x>");
  EXPECT_EQ(tok->token_to_piece(' '), " ");
  EXPECT_EQ(tok->token_to_piece(-1), "");
  EXPECT_EQ(tok->token_to_piece(258), "");
  EXPECT_EQ(tok->decode(Ids{'a', 256, 257, 'b'}), "a<x>b");
  EXPECT_TRUE(tok->is_end_of_generation(256)); // "<|end|>" ends a turn
  EXPECT_FALSE(tok->is_end_of_generation(257));
}

TEST(BpeTokenizer, BosAndEosFollowTheMetadata) {
  Vocabulary v =
      byte_vocab({{"x", "y"}}, {{"<s>", 0, TokenType::kControl}, {"</s>", 0, TokenType::kControl}});
  v.bos_id = 256;
  v.eos_id = 257;
  v.add_eos = true;
  auto tok = make(std::move(v));
  ASSERT_NE(tok, nullptr);
  EXPECT_EQ(tok->encode("a", true), (Ids{256, 'a', 257}));
  EXPECT_EQ(tok->encode("a", false), (Ids{'a'}));
  EXPECT_EQ(tok->decode(tok->encode("a", true)), "a");
  EXPECT_TRUE(tok->is_end_of_generation(257));
}

TEST(BpeTokenizer, AnyBytesRoundTrip) {
  auto tok = make(byte_vocab({{"a", "b"}, {" ", "a"}, {"\xC3", "\xA9"}},
                             {{"ab"}, {" a"}, {"\xC3\xA9"}}, "llama-bpe"));
  ASSERT_NE(tok, nullptr);
  uint32_t state = 12345;
  for (int round = 0; round < 200; ++round) {
    std::string text;
    const int length = static_cast<int>(state % 64);
    for (int i = 0; i < length; ++i) {
      state = state * 1664525u + 1013904223u;
      text.push_back(static_cast<char>(state >> 24));
    }
    EXPECT_EQ(tok->decode(tok->encode(text, false, false)), text);
  }
}

TEST(BpeTokenizer, ACharacterSplitAcrossTokensStreamsWhole) {
  auto tok = make(byte_vocab({{"x", "y"}}));
  ASSERT_NE(tok, nullptr);
  const std::string llama = "\xF0\x9F\xA6\x99"; // U+1F999, one piece of four byte tokens
  const Ids ids = tok->encode("a" + llama, false);
  ASSERT_EQ(ids.size(), 5u);
  Utf8StreamBuffer stream;
  std::vector<std::string> shown;
  for (TokenId id : ids)
    shown.push_back(stream.push(tok->token_to_piece(id)));
  EXPECT_EQ(shown, (std::vector<std::string>{"a", "", "", "", llama}));
  EXPECT_EQ(stream.pending(), 0u);
  EXPECT_EQ(tok->decode(ids), "a" + llama);
}

TEST(BpeTokenizer, AnUnknownPreTokenizerWarnsAndUsesTheDefault) {
  auto tok = make(byte_vocab({{"x", "y"}}, {}, "my-new-model"));
  ASSERT_NE(tok, nullptr);
  ASSERT_EQ(tok->warnings().size(), 1u);
  EXPECT_NE(tok->warnings()[0].find("\"my-new-model\""), std::string::npos) << tok->warnings()[0];
  EXPECT_EQ(tok->pre_tokenizer().name, "default");
  EXPECT_EQ(tok->decode(tok->encode("still works 123", false)), "still works 123");
}

TEST(BpeTokenizer, MissingByteTokensWarnAndBecomeUnknown) {
  Vocabulary v = byte_vocab({{"x", "y"}}, {{"<unk>", 0, TokenType::kUnknown}});
  v.tokens[0xFF].text = "not-a-byte";
  v.unk_id = 256;
  auto tok = make(std::move(v));
  ASSERT_NE(tok, nullptr);
  ASSERT_EQ(tok->warnings().size(), 1u);
  EXPECT_NE(tok->warnings()[0].find("0xFF"), std::string::npos) << tok->warnings()[0];
  EXPECT_EQ(tok->encode("a\xFF", false), (Ids{'a', 256}));
}

TEST(BpeTokenizer, MissingOrMalformedMergesAreErrors) {
  auto none = BpeTokenizer::create(byte_vocab({}));
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.status().code(), StatusCode::kInvalidFormat);
  EXPECT_NE(none.status().message().find("tokenizer.ggml.merges"), std::string::npos);

  Vocabulary v = byte_vocab({{"a", "b"}});
  v.merges.push_back("nospace");
  auto bad = BpeTokenizer::create(std::move(v));
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidFormat);
  EXPECT_NE(bad.status().message().find("tokenizer.ggml.merges[1] = \"nospace\""),
            std::string::npos)
      << bad.status().message();
}

TEST(BpeMerges, PartsSplitAtTheFirstSpaceAfterTheFirstByte) {
  // "  x" is " " + "x": a part may be a (raw) space itself.
  Vocabulary v;
  v.tokens = {{" "}, {"x"}, {" x"}};
  v.merges = {"  x", "x x"};
  BpeMerges merges;
  ASSERT_TRUE(merges.build(v).ok());
  const BpeMerges::Merge* m = merges.find(merges.symbol(" "), merges.symbol("x"));
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(m->rank, 0);
  EXPECT_EQ(merges.token(m->result), 2);
  // "xx" is no token: a symbol of its own past the vocabulary.
  const BpeMerges::Merge* xx = merges.find(1, 1);
  ASSERT_NE(xx, nullptr);
  EXPECT_EQ(merges.token(xx->result), kNoToken);
  EXPECT_EQ(merges.text(xx->result), "xx");
  EXPECT_EQ(merges.find(2, 1), nullptr);
}

} // namespace
} // namespace pshard
