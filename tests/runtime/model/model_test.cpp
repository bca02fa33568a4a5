// End-to-end checks of the forward pass against the reference answer recorded
// in shared/models/README.md (llama.cpp on the CPU).
#include "model_test_util.h"

#include <algorithm>
#include <cmath>

namespace pshard {
namespace {

using testing::greedy;
using testing::shared_model;

const std::vector<TokenId> kPrompt = {1, 403, 407, 261, 378};
const std::vector<TokenId> kExpected = {432, 383, 286, 261, 376, 298, 315, 421, 395, 317, 426,
                                        338, 401, 396, 267, 337, 410, 408, 419, 292, 411, 322,
                                        265, 282, 295, 433, 426, 385, 328, 432, 358, 394};
const char* kExpectedText = ", there was a little girl named Lily. She loved to play outside in "
                            "the park. One day, she saw";

TEST(LlamaModelTest, Stories260KMatchesReferenceTokensTextAndLogprobs) {
  const std::string path = shared_model("stories260K.gguf");
  PSHARD_SKIP_IF_MISSING(path);
  GenerateResult r = greedy(path, "Once upon a time", 32, 1, 256, 3);
  EXPECT_EQ(r.prompt, kPrompt);
  EXPECT_EQ(r.generated, kExpected);
  EXPECT_EQ(r.text, kExpectedText);
  ASSERT_EQ(r.top_logprobs.size(), 32u);
  const auto& first = r.top_logprobs[0];
  ASSERT_EQ(first.size(), 3u);
  const std::pair<TokenId, float> reference[] = {{432, -0.0318f}, {383, -3.548f}, {322, -8.121f}};
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(first[i].id, reference[i].first);
    EXPECT_NEAR(first[i].logprob, reference[i].second, 0.01);
  }
}

class VariantTest : public ::testing::TestWithParam<const char*> {};

TEST_P(VariantTest, GivesTheReferenceTokens) {
  const std::string path = shared_model(GetParam());
  PSHARD_SKIP_IF_MISSING(path);
  GenerateResult r = greedy(path, "Once upon a time", 32);
  EXPECT_EQ(r.generated, kExpected);
}

// F16 weights, Q8_0 weights, and an MoE whose four experts are all the dense FFN
// (so top-2 with renormalised weights must reproduce the dense model).
INSTANTIATE_TEST_SUITE_P(Stories260K, VariantTest,
                         ::testing::Values("stories260K-F16.gguf", "stories260K-Q8_0-mixed.gguf",
                                           "stories260K-moe4x2-exact.gguf"));

TEST(LlamaModelTest, NoisyMoeRoutesDifferentlyButStaysDeterministic) {
  const std::string path = shared_model("stories260K-moe4x2-noise10.gguf");
  PSHARD_SKIP_IF_MISSING(path);
  GenerateResult a = greedy(path, "Once upon a time", 32);
  GenerateResult b = greedy(path, "Once upon a time", 32, 2);
  EXPECT_EQ(a.generated.size(), 32u);
  EXPECT_EQ(a.generated, b.generated);
  EXPECT_NE(a.generated, kExpected) << "noisy experts should change the continuation";
}

// Logits must not depend on the thread count, and chunked prefill must match a
// single pass up to float rounding.
TEST(LlamaModelTest, LogitsIndependentOfThreadsAndChunking) {
  const std::string path = shared_model("stories260K.gguf");
  PSHARD_SKIP_IF_MISSING(path);
  auto model = Model::load(path);
  ASSERT_TRUE(model.ok());
  std::vector<TokenId> prompt;
  for (int i = 0; i < 40; ++i)
    prompt.push_back(static_cast<TokenId>(3 + (i * 37) % 500));
  auto logits_for = [&](int32_t threads, int64_t batch) {
    auto s = CpuSession::create(**model, {128, threads, batch});
    EXPECT_TRUE(s.ok());
    auto l = (*s)->decode(prompt);
    EXPECT_TRUE(l.ok());
    return std::vector<float>(l->begin(), l->end());
  };
  const auto one = logits_for(1, 256);
  EXPECT_EQ(one, logits_for(2, 256)) << "thread count changed the logits";
  EXPECT_EQ(one, logits_for(3, 256)) << "thread count changed the logits";
  const auto chunked = logits_for(2, 7);
  ASSERT_EQ(one.size(), chunked.size());
  for (size_t i = 0; i < one.size(); ++i)
    EXPECT_NEAR(one[i], chunked[i], 1e-3f * (1 + std::fabs(one[i])));
}

// --mmap 0: the weights read into (huge-page) RAM instead of used from the mapping give
// the same bytes and so the same logits; a metadata-only open cannot make a model.
TEST(LlamaModelTest, ReadIntoMemoryGivesTheMappedLogits) {
  const std::string path = shared_model("stories260K.gguf");
  PSHARD_SKIP_IF_MISSING(path);
  auto mapped = Model::load(path);
  auto read = Model::load(path, gguf::OpenMode::kReadData);
  ASSERT_TRUE(mapped.ok() && read.ok()) << read.status().to_string();
  const auto a = (*mapped)->file().mapped_bytes(), b = (*read)->file().mapped_bytes();
  ASSERT_EQ(a.size(), b.size());
  EXPECT_NE(a.data(), b.data());
  EXPECT_TRUE(std::equal(a.begin(), a.end(), b.begin()));
  EXPECT_EQ(reinterpret_cast<uintptr_t>(b.data()) % (2u << 20), 0u) << "not on a huge-page boundary";
  auto logits = [&](const Model& m) {
    auto s = CpuSession::create(m, {64, 2, 256});
    EXPECT_TRUE(s.ok());
    auto l = (*s)->decode(kPrompt);
    EXPECT_TRUE(l.ok());
    return std::vector<float>(l->begin(), l->end());
  };
  EXPECT_EQ(logits(**mapped), logits(**read));
  auto metadata = Model::load(path, gguf::OpenMode::kMetadataOnly);
  ASSERT_FALSE(metadata.ok());
  EXPECT_EQ(metadata.status().code(), StatusCode::kInvalidArgument);
}

} // namespace
} // namespace pshard
