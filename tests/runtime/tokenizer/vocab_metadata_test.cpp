// load_vocabulary / Tokenizer::from_gguf on small GGUF files written here:
// defaults for absent keys and a clear error for each kind of bad metadata.
#include "runtime/gguf/gguf_file.h"
#include "runtime/gguf/gguf_writer.h"
#include "runtime/tokenizer/tokenizer.h"
#include "runtime/tokenizer/vocabulary.h"
#include "tests/runtime/tokenizer/byte_level_vocab.h"

#include <filesystem>
#include <gtest/gtest.h>

namespace pshard {
namespace {

using gguf::Array;
using gguf::Value;
using gguf::ValueType;

Value strings(const std::vector<std::string> &items) {
  Array array{ValueType::kString, {}};
  for (const auto &s : items)
    array.items.push_back(Value{s});
  return Value{array};
}

Value floats(const std::vector<float> &items) {
  Array array{ValueType::kFloat32, {}};
  for (float f : items)
    array.items.push_back(Value{f});
  return Value{array};
}

Value ints(const std::vector<int32_t> &items) {
  Array array{ValueType::kInt32, {}};
  for (int32_t i : items)
    array.items.push_back(Value{i});
  return Value{array};
}

// A valid SPM vocabulary that spells "▁hi" (id 3) as ▁ + h -> ▁h, ▁h + i -> ▁hi;
// tests change or drop keys before writing.
gguf::GgufWriter base_writer() {
  gguf::GgufWriter w;
  w.set("tokenizer.ggml.model", Value{std::string("llama")});
  w.set("tokenizer.ggml.tokens", strings({"<unk>", "<s>", "</s>", "\xE2\x96\x81hi", "\xE2\x96\x81",
                                          "h", "i", "\xE2\x96\x81h"}));
  w.set("tokenizer.ggml.scores", floats({0, 0, 0, -1, -2, -2, -2, -1}));
  w.set("tokenizer.ggml.token_type", ints({2, 3, 3, 1, 1, 1, 1, 1}));
  return w;
}

class VocabMetadata : public testing::Test {
protected:
  void SetUp() override {
    path_ = (std::filesystem::temp_directory_path() /
             ("pshard_vocab_" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) +
              "_" + testing::UnitTest::GetInstance()->current_test_info()->name() + ".gguf"))
                .string();
  }
  void TearDown() override { std::filesystem::remove(path_); }

  Result<std::unique_ptr<Tokenizer>> build(const gguf::GgufWriter &w) {
    Status written = w.write(path_);
    if (!written.ok())
      return written;
    PSHARD_ASSIGN_OR_RETURN(auto file, gguf::GgufFile::open(path_));
    return Tokenizer::from_gguf(*file);
  }

  void expect_error(const gguf::GgufWriter &w, StatusCode code, const std::string &needle) {
    auto tok = build(w);
    ASSERT_FALSE(tok.ok());
    EXPECT_EQ(tok.status().code(), code) << tok.status().to_string();
    EXPECT_NE(tok.status().message().find(needle), std::string::npos) << tok.status().message();
  }

  std::string path_;
};

TEST_F(VocabMetadata, AbsentKeysTakeSpmDefaults) {
  auto tok = build(base_writer());
  ASSERT_TRUE(tok.ok()) << tok.status().to_string();
  EXPECT_EQ((*tok)->bos(), 1);
  EXPECT_EQ((*tok)->eos(), 2);
  EXPECT_TRUE((*tok)->add_bos_by_default());
  EXPECT_EQ((*tok)->encode("hi", true), (std::vector<TokenId>{1, 3}));
}

TEST_F(VocabMetadata, ExplicitIdsAndFlagsAreRead) {
  gguf::GgufWriter w = base_writer();
  w.set("tokenizer.ggml.bos_token_id", Value{uint32_t{2}});
  w.set("tokenizer.ggml.eos_token_id", Value{uint32_t{1}});
  w.set("tokenizer.ggml.add_bos_token", Value{false});
  w.set("tokenizer.ggml.add_space_prefix", Value{false});
  auto tok = build(w);
  ASSERT_TRUE(tok.ok()) << tok.status().to_string();
  EXPECT_EQ((*tok)->bos(), 2);
  EXPECT_EQ((*tok)->eos(), 1);
  EXPECT_FALSE((*tok)->add_bos_by_default());
  EXPECT_EQ((*tok)->encode(" hi", false), (std::vector<TokenId>{3}));
}

TEST_F(VocabMetadata, FimMarkersComeFromTheirKeysOrTheirTexts) {
  // Keys: the current one wins over the older; a role without either is found by text.
  gguf::GgufWriter w = base_writer();
  w.set("tokenizer.ggml.tokens", strings({"<unk>", "<s>", "</s>", "\xE2\x96\x81hi", "\xE2\x96\x81",
                                          "h", "i", "<|file_sep|>"}));
  w.set("tokenizer.ggml.fim_pre_token_id", Value{uint32_t{3}});
  w.set("tokenizer.ggml.prefix_token_id", Value{uint32_t{4}});
  w.set("tokenizer.ggml.suffix_token_id", Value{uint32_t{5}});
  w.set("tokenizer.ggml.fim_mid_token_id", Value{uint32_t{6}});
  auto tok = build(w);
  ASSERT_TRUE(tok.ok()) << tok.status().to_string();
  const FimTokens& fim = (*tok)->vocabulary().fim;
  EXPECT_EQ(fim.prefix, 3);
  EXPECT_EQ(fim.suffix, 5);
  EXPECT_EQ(fim.middle, 6);
  EXPECT_EQ(fim.repo, kNoToken);
  EXPECT_EQ(fim.file_sep, 7);

  // CodeLlama's markers, the prefix stored with SentencePiece's word-start mark.
  gguf::GgufWriter codellama = base_writer();
  codellama.set("tokenizer.ggml.tokens",
                strings({"<unk>", "<s>", "</s>", "\xE2\x96\x81hi", "\xE2\x96\x81", "<SUF>",
                         "\xE2\x96\x81<PRE>", "<MID>"}));
  auto cl = build(codellama);
  ASSERT_TRUE(cl.ok()) << cl.status().to_string();
  EXPECT_EQ((*cl)->vocabulary().fim.prefix, 6);
  EXPECT_EQ((*cl)->vocabulary().fim.suffix, 5);
  EXPECT_EQ((*cl)->vocabulary().fim.middle, 7);

  // None: all kNoToken; out of range: an error naming the role.
  auto plain = build(base_writer());
  ASSERT_TRUE(plain.ok());
  EXPECT_EQ((*plain)->vocabulary().fim.prefix, kNoToken);
  EXPECT_EQ((*plain)->vocabulary().fim.file_sep, kNoToken);
  gguf::GgufWriter bad = base_writer();
  bad.set("tokenizer.ggml.fim_suf_token_id", Value{uint32_t{99}});
  expect_error(bad, StatusCode::kInvalidFormat, "fim_suf_token_id = 99");
}

TEST_F(VocabMetadata, ScoresOfAnotherLengthAreRejected) {
  gguf::GgufWriter w = base_writer();
  w.set("tokenizer.ggml.scores", floats({0, 0, 0}));
  expect_error(w, StatusCode::kInvalidFormat,
               "tokenizer.ggml.scores has 3 entries but tokenizer.ggml.tokens has 8");
}

TEST_F(VocabMetadata, TokenTypesOfAnotherLengthAreRejected) {
  gguf::GgufWriter w = base_writer();
  w.set("tokenizer.ggml.token_type", ints({1, 1, 1, 1, 1}));
  expect_error(w, StatusCode::kInvalidFormat, "tokenizer.ggml.token_type has 5 entries");
}

TEST_F(VocabMetadata, UnknownTokenTypeIsRejected) {
  gguf::GgufWriter w = base_writer();
  w.set("tokenizer.ggml.token_type", ints({2, 3, 3, 9, 1, 1, 1, 1}));
  expect_error(w, StatusCode::kInvalidFormat, "tokenizer.ggml.token_type[3]");
}

TEST_F(VocabMetadata, OutOfRangeSpecialIdIsRejected) {
  gguf::GgufWriter w = base_writer();
  w.set("tokenizer.ggml.eos_token_id", Value{uint32_t{8}});
  expect_error(w, StatusCode::kInvalidFormat, "tokenizer.ggml.eos_token_id = 8 is out of range");
}

TEST_F(VocabMetadata, AllOnesOrNegativeIdMeansNone) {
  // Converters write -1, or uint32 0xFFFFFFFF, for "this vocabulary has none".
  gguf::GgufWriter w = base_writer();
  w.set("tokenizer.ggml.padding_token_id", Value{uint32_t{0xFFFFFFFFu}});
  w.set("tokenizer.ggml.bos_token_id", Value{int32_t{-1}});
  auto tok = build(w);
  ASSERT_TRUE(tok.ok()) << tok.status().to_string();
  EXPECT_EQ((*tok)->bos(), kNoToken);
  EXPECT_EQ((*tok)->encode("hi", true), (std::vector<TokenId>{3}));
}

TEST_F(VocabMetadata, TokensMustBeStrings) {
  gguf::GgufWriter w = base_writer();
  w.set("tokenizer.ggml.tokens", ints({1, 2, 3, 4, 5, 6, 7, 8}));
  expect_error(w, StatusCode::kInvalidFormat, "array of strings");
}

TEST_F(VocabMetadata, MissingModelKeyIsAnError) {
  gguf::GgufWriter w;
  w.set("tokenizer.ggml.tokens", strings({"a"}));
  auto tok = build(w);
  ASSERT_FALSE(tok.ok());
  EXPECT_NE(tok.status().message().find("tokenizer.ggml.model"), std::string::npos)
      << tok.status().message();
}

TEST_F(VocabMetadata, OtherModelKindsAreUnsupported) {
  gguf::GgufWriter w = base_writer();
  w.set("tokenizer.ggml.model", Value{std::string("rwkv")});
  expect_error(w, StatusCode::kUnsupported, "\"rwkv\" (RWKV greedy)");
}

// A byte-level BPE vocabulary: the 256 byte characters, then "hi"; one merge.
gguf::GgufWriter bpe_writer() {
  std::vector<std::string> tokens;
  for (const TokenData& t : testing_vocab::byte_level_alphabet())
    tokens.push_back(t.text);
  tokens.push_back("hi");
  tokens.push_back("<|im_end|>");
  gguf::GgufWriter w;
  w.set("tokenizer.ggml.model", Value{std::string("gpt2")});
  w.set("tokenizer.ggml.pre", Value{std::string("qwen2")});
  w.set("tokenizer.ggml.tokens", strings(tokens));
  w.set("tokenizer.ggml.merges", strings({"h i"}));
  return w;
}

TEST_F(VocabMetadata, ByteLevelBpeReadsMergesAndItsDefaults) {
  auto tok = build(bpe_writer());
  ASSERT_TRUE(tok.ok()) << tok.status().to_string();
  EXPECT_EQ((*tok)->encode("hi", true), (std::vector<TokenId>{256}));
  EXPECT_EQ((*tok)->bos(), kNoToken);
  EXPECT_FALSE((*tok)->add_bos_by_default()); // Qwen adds no BOS
  EXPECT_TRUE((*tok)->warnings().empty());
  // A normal token with an end-of-turn text becomes a control token, as in llama.cpp.
  EXPECT_EQ((*tok)->vocabulary().tokens[257].type, TokenType::kControl);
  EXPECT_TRUE((*tok)->is_end_of_generation(257));
  EXPECT_EQ((*tok)->encode("hi<|im_end|>", false), (std::vector<TokenId>{256, 257}));
}

// Mistral's converters type its call marker control, whose text answers would not show;
// it is user-defined here, so a server can see the calls after it. Other control tokens
// stay as they are.
TEST_F(VocabMetadata, MistralsCallMarkerShowsItsText) {
  std::vector<std::string> tokens;
  for (const TokenData& t : testing_vocab::byte_level_alphabet())
    tokens.push_back(t.text);
  tokens.insert(tokens.end(), {"hi", "[TOOL_CALLS]", "[INST]"});
  std::vector<int32_t> types(tokens.size(), 1);
  types[257] = types[258] = 3;
  gguf::GgufWriter w = bpe_writer();
  w.set("tokenizer.ggml.tokens", strings(tokens));
  w.set("tokenizer.ggml.token_type", ints(types));
  auto tok = build(w);
  ASSERT_TRUE(tok.ok()) << tok.status().to_string();
  EXPECT_EQ((*tok)->vocabulary().tokens[257].type, TokenType::kUserDefined);
  EXPECT_EQ((*tok)->vocabulary().tokens[258].type, TokenType::kControl);
  EXPECT_EQ((*tok)->token_to_piece(257), "[TOOL_CALLS]");
  EXPECT_EQ((*tok)->token_to_piece(258), "");
  EXPECT_EQ((*tok)->encode("[TOOL_CALLS]hi", false), (std::vector<TokenId>{257, 256}));
}

// A byte-level BPE vocabulary of the byte alphabet, "hi" (id 256) and `controls` as control
// tokens from id 257; `tokens` gets the texts.
gguf::GgufWriter writer_with_control_tokens(std::initializer_list<const char*> controls,
                                            std::vector<std::string>& tokens) {
  for (const TokenData& t : testing_vocab::byte_level_alphabet())
    tokens.push_back(t.text);
  tokens.push_back("hi");
  tokens.insert(tokens.end(), controls.begin(), controls.end());
  std::vector<int32_t> types(tokens.size(), 1);
  for (size_t id = 257; id < tokens.size(); ++id)
    types[id] = 3;
  gguf::GgufWriter w = bpe_writer();
  w.set("tokenizer.ggml.tokens", strings(tokens));
  w.set("tokenizer.ggml.token_type", ints(types));
  return w;
}

// Harmony (gpt-oss): <|return|> and <|call|> end an answer, <|end|> (which closes its
// analysis message) does not, even as the file's end-of-turn id; the channel markers show
// their text, so the analysis can be told from the final answer.
TEST_F(VocabMetadata, HarmonyEndsAtReturnOrCallAndShowsItsChannels) {
  std::vector<std::string> tokens;
  gguf::GgufWriter w = writer_with_control_tokens(
      {"<|return|>", "<|call|>", "<|end|>", "<|channel|>", "<|message|>", "<|start|>"}, tokens);
  w.set("tokenizer.ggml.eot_token_id", Value{uint32_t{259}});
  auto tok = build(w);
  ASSERT_TRUE(tok.ok()) << tok.status().to_string();
  EXPECT_TRUE((*tok)->is_end_of_generation(257));
  EXPECT_TRUE((*tok)->is_end_of_generation(258));
  EXPECT_FALSE((*tok)->is_end_of_generation(259)) << "<|end|> ends only the analysis";
  EXPECT_EQ((*tok)->token_to_piece(259), "");
  for (TokenId id : {260, 261, 262})
    EXPECT_EQ((*tok)->vocabulary().tokens[static_cast<size_t>(id)].type, TokenType::kUserDefined);
  EXPECT_EQ((*tok)->token_to_piece(260), "<|channel|>");
  // Without <|return|> (Phi-3's vocabulary), <|end|> still ends the turn.
  tokens.resize(257);
  tokens.insert(tokens.end(), {"hi", "<|end|>"});
  w.set("tokenizer.ggml.tokens", strings(tokens));
  w.set("tokenizer.ggml.token_type", ints(std::vector<int32_t>(tokens.size(), 1)));
  w.set("tokenizer.ggml.eot_token_id", Value{uint32_t{257}});
  auto phi = build(w);
  ASSERT_TRUE(phi.ok()) << phi.status().to_string();
  EXPECT_TRUE((*phi)->is_end_of_generation(257));
}

// GLM-4.5: the next user turn and a tool result's opening end an answer even in files
// converted before the EOT and EOM ids were written; the BOS ([gMASK]) is the template's
// to write, not the tokenizer's. Other vocabularies' <|user|> is text.
TEST_F(VocabMetadata, GlmEndsAtTheNextTurnAndAddsNoBos) {
  std::vector<std::string> tokens;
  gguf::GgufWriter w =
      writer_with_control_tokens({"<|user|>", "<|observation|>", "<|assistant|>"}, tokens);
  w.set("tokenizer.ggml.pre", Value{std::string("glm4")});
  auto glm = build(w);
  ASSERT_TRUE(glm.ok()) << glm.status().to_string();
  EXPECT_TRUE((*glm)->is_end_of_generation(257));
  EXPECT_TRUE((*glm)->is_end_of_generation(258));
  EXPECT_FALSE((*glm)->is_end_of_generation(259)) << "<|assistant|>";
  EXPECT_FALSE((*glm)->add_bos_by_default());
  w.set("tokenizer.ggml.pre", Value{std::string("qwen2")});
  auto other = build(w);
  ASSERT_TRUE(other.ok()) << other.status().to_string();
  EXPECT_FALSE((*other)->is_end_of_generation(257));
}

// ERNIE 4.5's answers end with its separator, dots.llm1's with its turn's closing, which no
// id key names.
TEST_F(VocabMetadata, ErnieAndDotsEndAtTheirTurnClosings) {
  std::vector<std::string> tokens;
  gguf::GgufWriter w = writer_with_control_tokens(
      {"<|begin_of_sentence|>", "<|end_of_sentence|>", "<|response|>", "<|endofresponse|>"},
      tokens);
  auto tok = build(w);
  ASSERT_TRUE(tok.ok()) << tok.status().to_string();
  EXPECT_FALSE((*tok)->is_end_of_generation(257));
  EXPECT_TRUE((*tok)->is_end_of_generation(258));
  EXPECT_FALSE((*tok)->is_end_of_generation(259));
  EXPECT_TRUE((*tok)->is_end_of_generation(260)) << "dots.llm1's turn closing";
}

TEST_F(VocabMetadata, KimiEndsAtItsTurnClosingAndItsEndMarkers) {
  std::vector<std::string> tokens;
  gguf::GgufWriter w = writer_with_control_tokens(
      {"[BOS]", "[EOS]", "<|im_end|>", "<|im_user|>", "[EOT]", "<|im_middle|>"}, tokens);
  w.set("tokenizer.ggml.pre", Value{std::string("kimi-k2")});
  auto tok = build(w);
  ASSERT_TRUE(tok.ok()) << tok.status().to_string();
  const bool expected[] = {false, true, true, false, true, false};
  for (int i = 0; i < 6; ++i)
    EXPECT_EQ((*tok)->is_end_of_generation(257 + i), expected[i]) << tokens[257 + i];
  EXPECT_FALSE((*tok)->add_bos_by_default()) << "Moonshot's tokenizer adds no BOS";
}

TEST_F(VocabMetadata, Llama4EndsAtItsTurnAndMessageEnds) {
  std::vector<std::string> tokens;
  gguf::GgufWriter w = writer_with_control_tokens(
      {"<|begin_of_text|>", "<|header_start|>", "<|header_end|>", "<|eot|>", "<|eom|>"}, tokens);
  w.set("tokenizer.ggml.pre", Value{std::string("llama4")});
  auto tok = build(w);
  ASSERT_TRUE(tok.ok()) << tok.status().to_string();
  const bool expected[] = {false, false, false, true, true};
  for (int i = 0; i < 5; ++i)
    EXPECT_EQ((*tok)->is_end_of_generation(257 + i), expected[i]) << tokens[257 + i];
}

TEST_F(VocabMetadata, Llama3AddsBosUnlessTheFileSaysOtherwise) {
  gguf::GgufWriter w = bpe_writer();
  w.set("tokenizer.ggml.pre", Value{std::string("llama-bpe")});
  auto tok = build(w);
  ASSERT_TRUE(tok.ok()) << tok.status().to_string();
  EXPECT_TRUE((*tok)->add_bos_by_default());
  w.set("tokenizer.ggml.add_bos_token", Value{false});
  auto explicit_off = build(w);
  ASSERT_TRUE(explicit_off.ok()) << explicit_off.status().to_string();
  EXPECT_FALSE((*explicit_off)->add_bos_by_default());
}

TEST_F(VocabMetadata, AnUnknownPreTokenizerIsAWarningNotAnError) {
  gguf::GgufWriter w = bpe_writer();
  w.set("tokenizer.ggml.pre", Value{std::string("brand-new")});
  auto tok = build(w);
  ASSERT_TRUE(tok.ok()) << tok.status().to_string();
  ASSERT_EQ((*tok)->warnings().size(), 1u);
  EXPECT_NE((*tok)->warnings()[0].find("\"brand-new\""), std::string::npos);
}

TEST_F(VocabMetadata, ByteLevelBpeNeedsStringMerges) {
  gguf::GgufWriter w = bpe_writer();
  w.set("tokenizer.ggml.merges", ints({1, 2}));
  expect_error(w, StatusCode::kInvalidFormat, "tokenizer.ggml.merges must be an array of strings");
  w.set("tokenizer.ggml.merges", strings({}));
  expect_error(w, StatusCode::kInvalidFormat, "tokenizer.ggml.merges is missing or empty");
}

TEST_F(VocabMetadata, Phi3ChatTokensStripTheWhitespaceAfterThem) {
  gguf::GgufWriter w = base_writer();
  w.set("general.name", Value{std::string("Phi3")});
  w.set("tokenizer.ggml.tokens", strings({"<unk>", "<s>", "</s>", "\xE2\x96\x81hi", "\xE2\x96\x81",
                                          "h", "i", "\xE2\x96\x81h"}));
  auto tok = build(w);
  ASSERT_TRUE(tok.ok()) << tok.status().to_string();
  const auto& tokens = (*tok)->vocabulary().tokens;
  EXPECT_TRUE(tokens[2].rstrip);  // </s>
  EXPECT_FALSE(tokens[1].rstrip); // <s> keeps its whitespace
  EXPECT_FALSE(tokens[0].rstrip); // <unk>
  EXPECT_EQ((*tok)->encode("</s> \n hi", false), (std::vector<TokenId>{2, 3}));
  EXPECT_EQ((*tok)->encode("<s> hi", false), (std::vector<TokenId>{1, 4, 3}));
}

// A WordPiece vocabulary as llama.cpp writes BERT's, without its special ids.
gguf::GgufWriter bert_writer() {
  gguf::GgufWriter w;
  w.set("tokenizer.ggml.model", Value{std::string("bert")});
  w.set("tokenizer.ggml.tokens",
        strings({"[PAD]", "[UNK]", "[CLS]", "[SEP]", "\xE2\x96\x81hi", "[MASK]"}));
  w.set("tokenizer.ggml.token_type", ints({3, 3, 3, 3, 1, 3}));
  return w;
}

TEST_F(VocabMetadata, BertFindsClsSepAndUnknownByName) {
  auto tok = build(bert_writer());
  ASSERT_TRUE(tok.ok()) << tok.status().to_string();
  EXPECT_EQ((*tok)->bos(), 2);
  EXPECT_EQ((*tok)->eos(), 3);
  EXPECT_EQ((*tok)->vocabulary().unk_id, 1);
  EXPECT_TRUE((*tok)->add_bos_by_default());
  EXPECT_EQ((*tok)->encode("Hi hey", true), (std::vector<TokenId>{2, 4, 1, 3}));
}

TEST_F(VocabMetadata, BertReadsClsAndSeparatorIds) {
  gguf::GgufWriter w = bert_writer();
  // The ids llama.cpp's converter writes (seperator sic) win over the names.
  w.set("tokenizer.ggml.cls_token_id", Value{uint32_t{5}});
  w.set("tokenizer.ggml.seperator_token_id", Value{uint32_t{0}});
  w.set("tokenizer.ggml.unknown_token_id", Value{uint32_t{3}});
  auto tok = build(w);
  ASSERT_TRUE(tok.ok()) << tok.status().to_string();
  EXPECT_EQ((*tok)->encode("x", true), (std::vector<TokenId>{5, 3, 0}));
  w.set("tokenizer.ggml.seperator_token_id", Value{uint32_t{6}});
  expect_error(w, StatusCode::kInvalidFormat, "tokenizer.ggml.seperator_token_id = 6");
}

TEST_F(VocabMetadata, BertAddSepTokenTurnsTheSeparatorOff) {
  gguf::GgufWriter w = bert_writer();
  w.set("tokenizer.ggml.add_sep_token", Value{false});
  auto tok = build(w);
  ASSERT_TRUE(tok.ok()) << tok.status().to_string();
  EXPECT_EQ((*tok)->encode("hi", true), (std::vector<TokenId>{2, 4}));
  w.set("tokenizer.ggml.add_bos_token", Value{false});
  auto neither = build(w);
  ASSERT_TRUE(neither.ok()) << neither.status().to_string();
  EXPECT_FALSE((*neither)->add_bos_by_default());
}

TEST_F(VocabMetadata, BertWithoutAnUnknownTokenIsAnError) {
  gguf::GgufWriter w = bert_writer();
  w.set("tokenizer.ggml.tokens",
        strings({"[PAD]", "[unk]", "[CLS]", "[SEP]", "\xE2\x96\x81hi", "[MASK]"}));
  expect_error(w, StatusCode::kInvalidFormat, "needs an unknown token");
}

} // namespace
} // namespace pshard
