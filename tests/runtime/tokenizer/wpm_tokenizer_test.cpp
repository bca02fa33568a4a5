// WpmTokenizer on a small in-memory vocabulary: greedy longest-match-first WordPiece,
// the unknown token for words it cannot spell, [CLS]/[SEP], added tokens, decoding,
// and the vocabularies it refuses.
#include "runtime/tokenizer/wpm_tokenizer.h"
#include "tests/runtime/tokenizer/token_lookup.h"
#include "tests/runtime/tokenizer/wordpiece_vocab.h"

#include <gtest/gtest.h>

namespace pshard {
namespace {

using Ids = std::vector<TokenId>;
using testing_vocab::id_of;

Vocabulary make_vocab() {
  return testing_vocab::wordpiece_vocab({"▁un", "▁una", "aff", "ffable", "able", "▁hello", "▁,",
                                         "▁!", "▁x", "▁\u4E16", "▁cafe", "s", "[unused0]"});
}

std::unique_ptr<WpmTokenizer> make(Vocabulary vocab = make_vocab()) {
  auto tok = WpmTokenizer::create(std::move(vocab));
  EXPECT_TRUE(tok.ok()) << tok.status().to_string();
  return std::move(tok).value();
}

TEST(WpmTokenizer, TakesTheLongestPieceFirst) {
  const auto tok = make();
  // "▁una" beats "▁un", then "ffable" is left: greedy, not the fewest pieces' search
  // ("▁un" "aff" "able" would also spell it).
  EXPECT_EQ(tok->encode("unaffable", false), (Ids{id_of(*tok, "▁una"), id_of(*tok, "ffable")}));
  EXPECT_EQ(tok->encode("Cafés", false), (Ids{id_of(*tok, "▁cafe"), id_of(*tok, "s")}));
}

TEST(WpmTokenizer, AWordItCannotSpellIsOneUnknownToken) {
  const auto tok = make();
  // "▁un" matches, then nothing covers "q": the whole word is [UNK], and the next word
  // starts afresh.
  EXPECT_EQ(tok->encode("unq x", false), (Ids{1, id_of(*tok, "▁x")}));
  // A piece from inside words never starts one.
  EXPECT_EQ(tok->encode("able", false), (Ids{1}));
  // Bracketed tokens are not pieces a word can reach: "[" is punctuation.
  EXPECT_EQ(tok->encode("[unused0]", false, /*parse_special=*/false), (Ids{1, 1, 1}));
}

TEST(WpmTokenizer, PunctuationAndIdeographsArePiecesOfTheirOwn) {
  const auto tok = make();
  EXPECT_EQ(tok->encode("hello,hello!", false), (Ids{id_of(*tok, "▁hello"), id_of(*tok, "▁,"),
                                                     id_of(*tok, "▁hello"), id_of(*tok, "▁!")}));
  EXPECT_EQ(tok->encode("x\u4E16x", false),
            (Ids{id_of(*tok, "▁x"), id_of(*tok, "▁\u4E16"), id_of(*tok, "▁x")}));
}

TEST(WpmTokenizer, AddBosFramesTheTextWithClsAndSep) {
  const auto tok = make();
  EXPECT_EQ(tok->encode("x", true), (Ids{2, id_of(*tok, "▁x"), 3}));
  EXPECT_EQ(tok->encode("", true), (Ids{2, 3}));
  Vocabulary no_sep = make_vocab();
  no_sep.add_eos = false;
  EXPECT_EQ(make(std::move(no_sep))->encode("x", true), (Ids{2, id_of(*tok, "▁x")}));
}

TEST(WpmTokenizer, ControlTokensAreParsedWhenAsked) {
  const auto tok = make();
  const TokenId x = id_of(*tok, "▁x");
  EXPECT_EQ(tok->encode("x[MASK]x", false), (Ids{x, 4, x}));
  EXPECT_EQ(tok->encode("x[MASK]x", false, /*parse_special=*/false), (Ids{x, 1, 1, 1, x}));
  // The text on both sides of an added token is words apart, even without spaces.
  EXPECT_EQ(tok->encode("un[SEP]able", false), (Ids{id_of(*tok, "▁un"), 3, 1}));
}

TEST(WpmTokenizer, DecodeSpacesWordsAndJoinsPieces) {
  const auto tok = make();
  EXPECT_EQ(tok->decode(tok->encode("Unaffable, hello CAFÉS!", true)), "unaffable , hello cafes !");
  EXPECT_EQ(tok->token_to_piece(id_of(*tok, "▁hello")), " hello");
  EXPECT_EQ(tok->token_to_piece(id_of(*tok, "ffable")), "ffable");
  EXPECT_EQ(tok->token_to_piece(2), "");
  EXPECT_EQ(tok->token_to_piece(1), " \xEF\xBF\xBD");
  EXPECT_EQ(tok->token_to_piece(-1), "");
  EXPECT_EQ(tok->token_to_piece(tok->n_vocab()), "");
  EXPECT_EQ(tok->decode(Ids{1, id_of(*tok, "▁x")}), "\xEF\xBF\xBD x");
}

TEST(WpmTokenizer, RefusesVocabulariesItCannotUse) {
  Vocabulary no_unknown = make_vocab();
  no_unknown.unk_id = kNoToken;
  auto tok = WpmTokenizer::create(std::move(no_unknown));
  ASSERT_FALSE(tok.ok());
  EXPECT_NE(tok.status().message().find("unknown_token_id"), std::string::npos)
      << tok.status().message();

  // BERT's own spelling ("##" inside words, no "▁"): converted some other way.
  Vocabulary hashes;
  hashes.model = "bert";
  hashes.tokens = {{"[UNK]", 0.0f, TokenType::kControl}, {"un"}, {"##able"}};
  hashes.unk_id = 0;
  tok = WpmTokenizer::create(std::move(hashes));
  ASSERT_FALSE(tok.ok());
  EXPECT_EQ(tok.status().code(), StatusCode::kInvalidFormat);
  EXPECT_NE(tok.status().message().find("re-convert"), std::string::npos) << tok.status().message();
}

} // namespace
} // namespace pshard
