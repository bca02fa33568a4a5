// Tokenizers built from real GGUF vocabularies (/work/shared): the reference
// test vectors (SentencePiece, byte-level BPE and WordPiece), the stories260K
// known answer, added tokens, round trips, streaming and speed.
#include "runtime/gguf/gguf_file.h"
#include "runtime/tokenizer/tokenizer.h"
#include "runtime/tokenizer/tokens_containing.h"
#include "runtime/tokenizer/utf8.h"
#include "runtime/tokenizer/vocabulary.h"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <iostream>
#include <sstream>

namespace pshard {
namespace {

using Ids = std::vector<TokenId>;

std::string shared_path(const std::string &relative) {
  return std::string(PSHARD_SHARED_DIR) + "/" + relative;
}

std::string read_text(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

// NAME.gguf.inp: every input is followed by "\n__ggml_vocab_test__\n", so the
// newline before a separator belongs to the separator (the file holds as many
// separators as NAME.gguf.out holds lines).
std::vector<std::string> read_inputs(const std::string &path) {
  const std::string text = read_text(path);
  const std::string separator = "\n__ggml_vocab_test__\n";
  std::vector<std::string> inputs;
  size_t start = 0;
  for (size_t at; (at = text.find(separator, start)) != std::string::npos;
       start = at + separator.size())
    inputs.push_back(text.substr(start, at - start));
  return inputs;
}

std::vector<Ids> read_outputs(const std::string &path) {
  std::ifstream in(path);
  std::vector<Ids> outputs;
  for (std::string line; std::getline(in, line);) {
    std::istringstream ids(line);
    Ids row;
    for (TokenId id; ids >> id;)
      row.push_back(id);
    outputs.push_back(row);
  }
  return outputs;
}

struct Loaded {
  std::unique_ptr<gguf::GgufFile> file;
  std::unique_ptr<Tokenizer> tokenizer;
};

// Opens a shared GGUF; `why_not` is set (and the result empty) when the file
// is absent, for GTEST_SKIP.
Loaded load(const std::string &relative, std::string *why_not) {
  const std::string path = shared_path(relative);
  if (!std::filesystem::exists(path)) {
    *why_not = path + " is absent";
    return {};
  }
  auto file = gguf::GgufFile::open(path, gguf::OpenMode::kMetadataOnly);
  EXPECT_TRUE(file.ok()) << file.status().to_string();
  if (!file.ok())
    return {};
  auto tok = Tokenizer::from_gguf(**file);
  EXPECT_TRUE(tok.ok()) << tok.status().to_string();
  if (!tok.ok())
    return {};
  return {std::move(file).value(), std::move(tok).value()};
}

#define LOAD_OR_SKIP(var, relative)                                                                \
  std::string why_not_##var;                                                                       \
  Loaded var = load(relative, &why_not_##var);                                                     \
  if (!why_not_##var.empty())                                                                      \
    GTEST_SKIP() << why_not_##var;                                                                 \
  ASSERT_NE(var.tokenizer, nullptr)

// DRY's breakers that span tokens: where the vocabulary splits a name, the token it begins
// in is found with the rest of the name; every pair found ends with the name's beginning
// and does not hold it whole; a one-byte breaker never spans tokens.
TEST(GgufVocab, TokensStartingFindWhereANameBegins) {
  LOAD_OR_SKIP(loaded, "vocab/ggml-vocab-qwen2.gguf");
  const Tokenizer& tok = *loaded.tokenizer;
  const std::string name = " Seraphina";
  const std::vector<std::string> texts = {name, "\n"};
  const auto starts = tokens_starting(tok, texts);
  ASSERT_FALSE(starts.empty());
  EXPECT_TRUE(std::is_sorted(starts.begin(), starts.end(),
                             [](const auto& a, const auto& b) { return a.first < b.first; }));
  for (const auto& [id, rest] : starts) {
    const std::string piece = tok.token_to_piece(id);
    ASSERT_TRUE(!rest.empty() && rest.size() < name.size()) << id << " " << rest;
    const std::string begin = name.substr(0, name.size() - rest.size());
    ASSERT_GE(piece.size(), begin.size()) << id;
    EXPECT_EQ(piece.substr(piece.size() - begin.size()), begin) << id;
    EXPECT_EQ(piece.find(name), std::string::npos) << id;
  }
  const Ids ids = tok.encode(name, false, false);
  ASSERT_GE(ids.size(), 2u) << "the name is one token of this vocabulary";
  const std::string first = tok.token_to_piece(ids[0]);
  const std::pair<TokenId, std::string> expected{ids[0], name.substr(first.size())};
  EXPECT_NE(std::find(starts.begin(), starts.end(), expected), starts.end()) << first;
  EXPECT_TRUE(tokens_starting(tok, std::vector<std::string>{"\n", ":"}).empty());
}

const std::string kSpmVocabs[] = {"llama-spm", "phi-3"};
const std::string kByteLevelVocabs[] = {"gpt-2",     "deepseek-llm", "deepseek-coder",
                                        "falcon",    "starcoder",    "mpt",
                                        "refact",    "llama-bpe",    "qwen2"};

class VocabVectors : public testing::TestWithParam<std::string> {};

TEST_P(VocabVectors, MatchTheReferenceIds) {
  const std::string name = "vocab/ggml-vocab-" + GetParam() + ".gguf";
  LOAD_OR_SKIP(loaded, name);
  const auto inputs = read_inputs(shared_path(name + ".inp"));
  const auto outputs = read_outputs(shared_path(name + ".out"));
  ASSERT_EQ(inputs.size(), outputs.size());
  ASSERT_GT(inputs.size(), 40u);
  size_t matched = 0;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Ids ids = loaded.tokenizer->encode(inputs[i], /*add_bos=*/false);
    EXPECT_EQ(ids, outputs[i]) << "vector " << i << ": \"" << inputs[i] << "\"";
    matched += ids == outputs[i];
  }
  EXPECT_EQ(matched, inputs.size());
}

INSTANTIATE_TEST_SUITE_P(Spm, VocabVectors, testing::ValuesIn(kSpmVocabs));
INSTANTIATE_TEST_SUITE_P(Bpe, VocabVectors, testing::ValuesIn(kByteLevelVocabs));
INSTANTIATE_TEST_SUITE_P(Wpm, VocabVectors, testing::Values("bert-bge"));

// Every kind but WordPiece (which lowercases and strips accents) gives the text back.
class LosslessVocab : public testing::TestWithParam<std::string> {};

TEST_P(LosslessVocab, DecodeInvertsEncode) {
  const std::string name = "vocab/ggml-vocab-" + GetParam() + ".gguf";
  LOAD_OR_SKIP(loaded, name);
  for (const std::string &input : read_inputs(shared_path(name + ".inp"))) {
    EXPECT_EQ(loaded.tokenizer->decode(loaded.tokenizer->encode(input, true)), input);
    EXPECT_EQ(loaded.tokenizer->decode(loaded.tokenizer->encode(input, false)), input);
  }
}

INSTANTIATE_TEST_SUITE_P(Spm, LosslessVocab, testing::ValuesIn(kSpmVocabs));
INSTANTIATE_TEST_SUITE_P(Bpe, LosslessVocab, testing::ValuesIn(kByteLevelVocabs));

// The vectors hold no added-token text, so parsing it or not gives the same ids.
TEST_P(VocabVectors, ParseSpecialMakesNoDifferenceOnPlainText) {
  const std::string name = "vocab/ggml-vocab-" + GetParam() + ".gguf";
  LOAD_OR_SKIP(loaded, name);
  for (const std::string &input : read_inputs(shared_path(name + ".inp")))
    EXPECT_EQ(loaded.tokenizer->encode(input, false, true),
              loaded.tokenizer->encode(input, false, false))
        << input;
}

TEST(GgufVocab, LlamaSpmSpecialTokens) {
  LOAD_OR_SKIP(loaded, "vocab/ggml-vocab-llama-spm.gguf");
  const Tokenizer &tok = *loaded.tokenizer;
  EXPECT_EQ(tok.n_vocab(), 32000);
  EXPECT_EQ(tok.bos(), 1);
  EXPECT_EQ(tok.eos(), 2);
  EXPECT_TRUE(tok.add_bos_by_default());
  EXPECT_TRUE(tok.is_end_of_generation(2));
  EXPECT_FALSE(tok.is_end_of_generation(1));
  EXPECT_EQ(tok.encode("<s>Hi</s>", true, /*parse_special=*/true).front(), 1);
  EXPECT_EQ(tok.encode("<s>Hi</s>", false, true).back(), 2);
  EXPECT_NE(tok.encode("<s>Hi</s>", false, false).back(), 2);
}

TEST(GgufVocab, Phi3ChatTokens) {
  LOAD_OR_SKIP(loaded, "vocab/ggml-vocab-phi-3.gguf");
  const Tokenizer& tok = *loaded.tokenizer;
  const Ids end = tok.encode("<|end|>", false, /*parse_special=*/true);
  ASSERT_EQ(end.size(), 1u);
  EXPECT_EQ(end[0], 32007);
  EXPECT_TRUE(tok.is_end_of_generation(end[0]));
  const Ids user = tok.encode("<|user|>\nHi<|end|>", false, true);
  ASSERT_GE(user.size(), 3u);
  EXPECT_EQ(user.front(), 32010);
  EXPECT_FALSE(tok.is_end_of_generation(user.front()));
  EXPECT_EQ(user.back(), 32007);
}

TEST(GgufVocab, Stories260KPromptAndContinuation) {
  LOAD_OR_SKIP(loaded, "models/stories260K.gguf");
  const Tokenizer &tok = *loaded.tokenizer;
  EXPECT_EQ(tok.encode("Once upon a time", tok.add_bos_by_default()), (Ids{1, 403, 407, 261, 378}));
  const Ids generated = {432, 383, 286, 261, 376, 298, 315, 421, 395, 317, 426,
                         338, 401, 396, 267, 337, 410, 408, 419, 292, 411, 322,
                         265, 282, 295, 433, 426, 385, 328, 432, 358, 394};
  const std::string expected = ", there was a little girl named Lily. She loved to play outside "
                               "in the park. One day, she saw";
  // What a generation loop streams: the pieces one by one.
  Utf8StreamBuffer stream;
  std::string streamed;
  for (TokenId id : generated)
    streamed += stream.push(tok.token_to_piece(id));
  streamed += stream.flush();
  EXPECT_EQ(streamed, expected);
  EXPECT_EQ(tok.decode(generated), expected);
}

TEST(GgufVocab, EncodesTenKilobytesInMilliseconds) {
  LOAD_OR_SKIP(loaded, "vocab/ggml-vocab-llama-spm.gguf");
  const std::string inputs = read_text(shared_path("vocab/ggml-vocab-llama-spm.gguf.inp"));
  std::string text;
  while (text.size() < 10 * 1024)
    text += inputs;
  const auto start = std::chrono::steady_clock::now();
  const Ids ids = loaded.tokenizer->encode(text, true);
  const auto elapsed = std::chrono::steady_clock::now() - start;
  EXPECT_GT(ids.size(), 1000u);
  // Typically a few ms; the bound leaves room for sanitizer builds.
  EXPECT_LT(std::chrono::duration_cast<std::chrono::milliseconds>(elapsed).count(), 500);
  EXPECT_EQ(loaded.tokenizer->decode(ids), text);
}

TEST(GgufVocab, LlamaSpmParsesControlTokensByDefault) {
  LOAD_OR_SKIP(loaded, "vocab/ggml-vocab-llama-spm.gguf");
  const Tokenizer &tok = *loaded.tokenizer;
  // As llama.cpp: "<s>" is BOS, and the text after it gets SentencePiece's space prefix.
  const Ids parsed = tok.encode("<s> not special </s>", false);
  ASSERT_GE(parsed.size(), 3u);
  EXPECT_EQ(parsed.front(), 1);
  EXPECT_EQ(parsed.back(), 2);
  EXPECT_EQ(Ids(parsed.begin() + 1, parsed.end() - 1), tok.encode(" not special ", false));
  const Ids literal = tok.encode("<s> not special </s>", false, /*parse_special=*/false);
  EXPECT_EQ(std::count(literal.begin(), literal.end(), 1), 0);
  EXPECT_EQ(tok.decode(literal), "<s> not special </s>");
}

TEST(GgufVocab, LlamaBpeChatTokens) {
  LOAD_OR_SKIP(loaded, "vocab/ggml-vocab-llama-bpe.gguf");
  const Tokenizer &tok = *loaded.tokenizer;
  EXPECT_EQ(tok.n_vocab(), 128256);
  EXPECT_TRUE(tok.add_bos_by_default());
  const std::string chat = "<|start_header_id|>user<|end_header_id|>\n\nHi<|eot_id|>";
  const Ids ids = tok.encode(chat, true);
  ASSERT_GE(ids.size(), 5u);
  EXPECT_EQ(ids[0], 128000);
  EXPECT_EQ(ids[1], 128006);
  EXPECT_EQ(ids.back(), 128009);
  EXPECT_TRUE(tok.is_end_of_generation(128009));
  EXPECT_TRUE(tok.is_end_of_generation(128001));
  EXPECT_FALSE(tok.is_end_of_generation(128006));
  EXPECT_EQ(tok.decode(ids), "user\n\nHi"); // control tokens decode to nothing
  const Ids literal = tok.encode(chat, false, /*parse_special=*/false);
  EXPECT_EQ(std::count(literal.begin(), literal.end(), 128009), 0);
  EXPECT_EQ(tok.decode(literal), chat);
}

TEST(GgufVocab, Qwen2ChatTokens) {
  LOAD_OR_SKIP(loaded, "vocab/ggml-vocab-qwen2.gguf");
  const Tokenizer &tok = *loaded.tokenizer;
  EXPECT_FALSE(tok.add_bos_by_default());
  EXPECT_TRUE(tok.warnings().empty());
  const Ids ids = tok.encode("<|im_start|>user\nHi<|im_end|>\n", tok.add_bos_by_default());
  ASSERT_GE(ids.size(), 4u);
  EXPECT_EQ(ids.front(), 151644);
  EXPECT_EQ(ids[ids.size() - 2], 151645);
  EXPECT_TRUE(tok.is_end_of_generation(151645));
  EXPECT_TRUE(tok.is_end_of_generation(151643)); // <|endoftext|>
  EXPECT_FALSE(tok.is_end_of_generation(151644));
  // "<|fim_prefix|>" is user-defined in the file; as llama.cpp, pshard treats it as control.
  EXPECT_EQ(tok.vocabulary().tokens[151659].type, TokenType::kControl);
}

class ByteLevelStreaming : public testing::TestWithParam<std::string> {};

TEST_P(ByteLevelStreaming, SplitCharactersAreHeldBackUntilComplete) {
  const std::string name = "vocab/ggml-vocab-" + GetParam() + ".gguf";
  LOAD_OR_SKIP(loaded, name);
  const Tokenizer &tok = *loaded.tokenizer;
  const std::string text = "\xF0\x9F\xA6\x99 \xE1\x9E\x80\xE1\x9E\xB6 \xE6\x88\x91 \xC3\xBC "
                           "\xF0\x9F\x98\xB6\xE2\x80\x8D\xF0\x9F\x8C\xAB\xEF\xB8\x8F";
  const Ids ids = tok.encode(text, false);
  Utf8StreamBuffer stream;
  std::string streamed;
  size_t split_pieces = 0;
  for (TokenId id : ids) {
    const std::string piece = tok.token_to_piece(id);
    split_pieces += !is_valid_utf8(piece);
    const std::string shown = stream.push(piece);
    EXPECT_TRUE(is_valid_utf8(shown)) << "token " << id;
    streamed += shown;
  }
  EXPECT_EQ(stream.pending(), 0u);
  EXPECT_EQ(streamed, text);
  EXPECT_EQ(tok.decode(ids), text);
  // Every one of these vocabularies spells at least one of the characters in bytes.
  EXPECT_GT(split_pieces, 0u);
}

INSTANTIATE_TEST_SUITE_P(Bpe, ByteLevelStreaming, testing::ValuesIn(kByteLevelVocabs));

TEST(GgufVocab, Qwen2LoadsAndEncodesQuickly) {
  const std::string path = shared_path("vocab/ggml-vocab-qwen2.gguf");
  if (!std::filesystem::exists(path))
    GTEST_SKIP() << path << " is absent";
  using Clock = std::chrono::steady_clock;
  const auto ms = [](Clock::duration d) {
    return std::chrono::duration<double, std::milli>(d).count();
  };
  const auto t0 = Clock::now();
  auto file = gguf::GgufFile::open(path, gguf::OpenMode::kMetadataOnly);
  ASSERT_TRUE(file.ok()) << file.status().to_string();
  const auto t1 = Clock::now();
  auto tok = Tokenizer::from_gguf(**file);
  ASSERT_TRUE(tok.ok()) << tok.status().to_string();
  const auto t2 = Clock::now();
  std::string text;
  for (const std::string &input : read_inputs(path + ".inp"))
    text += input;
  text.resize(1024);
  const auto t3 = Clock::now();
  const Ids ids = (*tok)->encode(text, false, false);
  const auto t4 = Clock::now();
  EXPECT_GT(ids.size(), 200u);
  std::cout << "qwen2 (151936 tokens, 151387 merges): GGUF metadata " << ms(t1 - t0)
            << " ms, tokenizer tables " << ms(t2 - t1) << " ms, 1 KiB encoded in "
            << ms(t4 - t3) << " ms (" << ids.size() << " tokens)\n";
  RecordProperty("gguf_open_ms", static_cast<int>(ms(t1 - t0)));
  RecordProperty("tokenizer_build_ms", static_cast<int>(ms(t2 - t1)));
  // Typically well under a second together; the bound leaves room for sanitizers.
  EXPECT_LT(ms(t2 - t0), 5000.0);
  EXPECT_LT(ms(t4 - t3), 500.0);
}

TEST(GgufVocab, BertBgeAddsClsAndSep) {
  LOAD_OR_SKIP(loaded, "vocab/ggml-vocab-bert-bge.gguf");
  const Tokenizer &tok = *loaded.tokenizer;
  EXPECT_EQ(tok.n_vocab(), 30522);
  EXPECT_TRUE(tok.add_bos_by_default());
  EXPECT_EQ(tok.bos(), 101); // [CLS]
  EXPECT_EQ(tok.eos(), 102); // [SEP]
  const Ids plain = tok.encode("Hello, World!", false);
  EXPECT_EQ(plain, (Ids{7592, 1010, 2088, 999}));
  Ids framed = {101};
  framed.insert(framed.end(), plain.begin(), plain.end());
  framed.push_back(102);
  EXPECT_EQ(tok.encode("Hello, World!", tok.add_bos_by_default()), framed);
}

TEST(GgufVocab, BertBgeParsesItsControlTokens) {
  LOAD_OR_SKIP(loaded, "vocab/ggml-vocab-bert-bge.gguf");
  const Tokenizer &tok = *loaded.tokenizer;
  const Ids parsed = tok.encode("paris is the [MASK] of france", false);
  EXPECT_EQ(std::count(parsed.begin(), parsed.end(), 103), 1);
  EXPECT_EQ(parsed.size(), 6u);
  // As text, "[MASK]" is three words: "[", "mask", "]".
  const Ids literal = tok.encode("paris is the [MASK] of france", false, /*parse_special=*/false);
  EXPECT_EQ(std::count(literal.begin(), literal.end(), 103), 0);
  EXPECT_EQ(literal.size(), 8u);
}

TEST(GgufVocab, BertBgeDecodesWordsNotText) {
  LOAD_OR_SKIP(loaded, "vocab/ggml-vocab-bert-bge.gguf");
  const Tokenizer &tok = *loaded.tokenizer;
  // Lowercased, accents gone, punctuation a word of its own; [CLS] and [SEP] show nothing.
  EXPECT_EQ(tok.decode(tok.encode("Hello, Führer!", true)), "hello , fuhrer !");
  EXPECT_EQ(tok.token_to_piece(7592), " hello");
  const Ids discards = tok.encode("discards", false);
  ASSERT_EQ(discards.size(), 2u);
  EXPECT_EQ(tok.token_to_piece(discards[1]), "ards"); // a piece inside the word: no space
  EXPECT_EQ(tok.token_to_piece(101), "");
  // The unknown token stands for a whole word it could not spell.
  EXPECT_EQ(tok.token_to_piece(100), " \xEF\xBF\xBD");
  EXPECT_EQ(tok.decode(tok.encode("a \xF0\x9F\xA6\x99 b", false)), "a \xEF\xBF\xBD b");
}

TEST(GgufVocab, BertBgeLongWordsAreUnknown) {
  LOAD_OR_SKIP(loaded, "vocab/ggml-vocab-bert-bge.gguf");
  const Tokenizer &tok = *loaded.tokenizer;
  // "aaa...": spelled in pieces up to BERT's 100 characters a word, unknown past them.
  const Ids hundred = tok.encode(std::string(100, 'a'), false);
  EXPECT_GT(hundred.size(), 1u);
  EXPECT_EQ(std::count(hundred.begin(), hundred.end(), 100), 0);
  EXPECT_EQ(tok.encode(std::string(101, 'a'), false), (Ids{100}));
}

} // namespace
} // namespace pshard
