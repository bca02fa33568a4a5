// Tokenizers built from real GGUF vocabularies (/work/shared): the reference
// test vectors, the stories260K known answer, round trips, speed, and the
// errors for vocabularies pshard does not tokenize.
#include "runtime/gguf/gguf_file.h"
#include "runtime/tokenizer/tokenizer.h"
#include "runtime/tokenizer/utf8.h"

#include <chrono>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
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

TEST_P(VocabVectors, DecodeInvertsEncode) {
  const std::string name = "vocab/ggml-vocab-" + GetParam() + ".gguf";
  LOAD_OR_SKIP(loaded, name);
  for (const std::string &input : read_inputs(shared_path(name + ".inp"))) {
    EXPECT_EQ(loaded.tokenizer->decode(loaded.tokenizer->encode(input, true)), input);
    EXPECT_EQ(loaded.tokenizer->decode(loaded.tokenizer->encode(input, false)), input);
  }
}

INSTANTIATE_TEST_SUITE_P(Spm, VocabVectors, testing::Values("llama-spm", "phi-3"));

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

void expect_unsupported(const std::string &vocab, const std::string &kind) {
  const std::string path = shared_path("vocab/ggml-vocab-" + vocab + ".gguf");
  if (!std::filesystem::exists(path))
    GTEST_SKIP() << path << " is absent";
  auto file = gguf::GgufFile::open(path, gguf::OpenMode::kMetadataOnly);
  ASSERT_TRUE(file.ok()) << file.status().to_string();
  auto tok = Tokenizer::from_gguf(**file);
  ASSERT_FALSE(tok.ok());
  EXPECT_EQ(tok.status().code(), StatusCode::kUnsupported);
  EXPECT_NE(tok.status().message().find("\"" + kind + "\""), std::string::npos)
      << tok.status().message();
}

TEST(GgufVocab, Gpt2IsUnsupported) { expect_unsupported("gpt-2", "gpt2"); }
TEST(GgufVocab, BertIsUnsupported) { expect_unsupported("bert-bge", "bert"); }

} // namespace
} // namespace pshard
