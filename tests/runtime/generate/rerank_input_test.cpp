// The tokens a reranker scores for a query and a document (runtime/generate/rerank_input.h):
// a decoder's prompt filled; an encoder's pair framed as its tokenizer frames two texts,
// each text alone with its control-token text left as text; and the refusals.
#include "runtime/generate/rerank_input.h"
#include "runtime/tokenizer/ugm_tokenizer.h"
#include "runtime/tokenizer/wpm_tokenizer.h"
#include "tests/runtime/tokenizer/unigram_vocab.h"
#include "tests/runtime/tokenizer/wordpiece_vocab.h"

#include <gtest/gtest.h>

namespace pshard {
namespace {

using Ids = std::vector<TokenId>;

std::unique_ptr<Tokenizer> wordpiece() {
  auto tok = WpmTokenizer::create(
      testing_vocab::wordpiece_vocab({"\xE2\x96\x81who", "\xE2\x96\x81tom", "\xE2\x96\x81[", "sep",
                                      "\xE2\x96\x81]", "\xE2\x96\x81sep", "\xE2\x96\x81?"}));
  EXPECT_TRUE(tok.ok());
  return std::move(tok).value();
}

std::unique_ptr<Tokenizer> unigram() {
  auto tok = UgmTokenizer::create(testing_vocab::unigram_vocab(
      {{"\xE2\x96\x81who", -1}, {"\xE2\x96\x81tom", -1}, {"\xE2\x96\x81", -2}, {"<", -3},
       {"/", -3}, {"s", -3}, {">", -3}, {"?", -2}}));
  EXPECT_TRUE(tok.ok());
  return std::move(tok).value();
}

TEST(RerankInput, AWordPieceEncoderFramesTheTwoAsBertDoes) {
  auto tok = wordpiece();
  const RerankFormat format{nullptr, /*encoder=*/true, /*n_token_types=*/2,
                            /*pair_separator=*/3};
  auto ids = rerank_input(*tok, format, "who?", "tom");
  ASSERT_TRUE(ids.ok()) << ids.status().to_string();
  // [CLS] who ? [SEP] tom [SEP]
  EXPECT_EQ(*ids, (Ids{2, 5, 11, 3, 6, 3}));
  // "[SEP]" written in the query is text, not a separator that would end it early.
  auto text = rerank_input(*tok, format, "[SEP]", "tom");
  ASSERT_TRUE(text.ok());
  EXPECT_EQ(std::count(text->begin(), text->end(), 3), 2);
}

TEST(RerankInput, AnXlmRobertaEncoderFramesTheTwoAsRobertaDoes) {
  auto tok = unigram();
  auto ids = rerank_input(*tok, {nullptr, true, 1, kNoToken}, "who", "tom");
  ASSERT_TRUE(ids.ok()) << ids.status().to_string();
  // <s> ▁who </s></s> ▁tom </s>
  EXPECT_EQ(*ids, (Ids{0, 4, 2, 2, 5, 2}));
  auto text = rerank_input(*tok, {nullptr, true, 1, kNoToken}, "</s>", "tom");
  ASSERT_TRUE(text.ok());
  EXPECT_EQ(std::count(text->begin(), text->end(), 2), 3) << "only the framing's </s>";
}

TEST(RerankInput, ADecodersPromptIsFilledOnce) {
  EXPECT_EQ(fill_rerank_prompt("Q: {query} D: {document}", "a {document}", "b"),
            "Q: a {document} D: b");
  auto tok = unigram();
  const std::string prompt = "{query}</s>{document}";
  auto ids = rerank_input(*tok, {&prompt, false, 0, kNoToken}, "who", "tom");
  ASSERT_TRUE(ids.ok());
  EXPECT_EQ(*ids, tok->encode("who</s>tom", tok->add_bos_by_default(), true));
}

TEST(RerankInput, WhatCannotFrameAPairIsRefusedByName) {
  auto tok = wordpiece();
  auto decoder = rerank_input(*tok, {nullptr, false, 0, kNoToken}, "a", "b");
  ASSERT_FALSE(decoder.ok());
  EXPECT_NE(decoder.status().message().find("tokenizer.chat_template.rerank"), std::string::npos);
  // Two token types, but no separator after which the model reads type 1.
  auto untyped = rerank_input(*tok, {nullptr, true, 2, kNoToken}, "a", "b");
  ASSERT_FALSE(untyped.ok());
  EXPECT_NE(untyped.status().message().find("2 token types"), std::string::npos)
      << untyped.status().message();
}

} // namespace
} // namespace pshard
