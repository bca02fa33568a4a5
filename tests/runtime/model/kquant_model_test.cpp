// llama.cpp's K-quant mixes of stories260K-x4 (shared/models/README-architectures.md:
// Q4_K_M = Q4_K with Q6_K tensors, Q6_K) against llama.cpp's known answers, on every
// ISA path this CPU has: the first 16 generated ids and the text of all 32 exactly, the
// first position's top-3 log-probs within 0.3 (llama.cpp rounds activations inside its
// quantized dot products differently), and logits independent of the thread count.
#include "model_test_util.h"
#include "runtime/kernels/cpu_isa.h"

namespace pshard {
namespace {

using kernels::Isa;
using testing::greedy;
using testing::shared_model;

struct KnownAnswer {
  const char* file;
  std::pair<TokenId, float> top3[3];
};

const std::vector<TokenId> kFirst16 = {432, 383, 286, 261, 376, 298, 315, 421,
                                       395, 317, 426, 338, 401, 396, 267, 337};
const char* kText = ", there was a little girl named Lily. She loved to play with her toys and "
                    "her friends. One day, Lily's";

const KnownAnswer kAnswers[] = {
    {"stories260K-x4-Q4_K_M.gguf", {{432, -0.0960f}, {383, -2.4294f}, {322, -7.6160f}}},
    {"stories260K-x4-Q6_K.gguf", {{432, -0.0403f}, {383, -3.3052f}, {322, -7.9673f}}},
};

class KQuantModelTest : public ::testing::TestWithParam<std::tuple<KnownAnswer, Isa>> {
protected:
  void SetUp() override {
    if (!kernels::force_isa(std::get<1>(GetParam())))
      GTEST_SKIP() << "this CPU lacks the " << kernels::isa_name(std::get<1>(GetParam()))
                   << " path";
  }
  void TearDown() override { kernels::force_isa(kernels::detected_isa()); }
};

TEST_P(KQuantModelTest, ReproducesLlamaCppsAnswer) {
  const KnownAnswer& k = std::get<0>(GetParam());
  const std::string path = shared_model(k.file);
  PSHARD_SKIP_IF_MISSING(path);
  GenerateResult r = greedy(path, "Once upon a time", 32, 2, 256, 3);
  ASSERT_EQ(r.generated.size(), 32u);
  EXPECT_EQ(std::vector<TokenId>(r.generated.begin(), r.generated.begin() + 16), kFirst16);
  EXPECT_EQ(r.text, kText);
  ASSERT_FALSE(r.top_logprobs.empty());
  ASSERT_EQ(r.top_logprobs[0].size(), 3u);
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(r.top_logprobs[0][i].id, k.top3[i].first) << i;
    EXPECT_NEAR(r.top_logprobs[0][i].logprob, k.top3[i].second, 0.3) << i;
  }
}

TEST_P(KQuantModelTest, LogitsIndependentOfThreadsAndOfDecodeVersusPrefill) {
  const std::string path = shared_model(std::get<0>(GetParam()).file);
  PSHARD_SKIP_IF_MISSING(path);
  auto model = Model::load(path);
  ASSERT_TRUE(model.ok()) << model.status().to_string();
  const std::vector<TokenId> prompt = {1, 403, 407, 261, 378, 432, 383, 286};
  // The prompt in one pass of 8 tokens, then the last position again as a 1-token
  // pass after a 7-token prefill: the same logits bit for bit.
  auto last_logits = [&](int32_t threads, bool split) {
    auto s = CpuSession::create(**model, {64, threads, 256});
    EXPECT_TRUE(s.ok());
    std::span<const TokenId> all(prompt);
    if (split) {
      EXPECT_TRUE((*s)->decode(all.first(7)).ok());
    }
    auto l = (*s)->decode(split ? all.last(1) : all);
    EXPECT_TRUE(l.ok());
    return std::vector<float>(l->begin(), l->end());
  };
  const auto one = last_logits(1, false);
  EXPECT_EQ(one, last_logits(2, false)) << "thread count changed the logits";
  EXPECT_EQ(one, last_logits(3, true)) << "decode and prefill disagree";
}

INSTANTIATE_TEST_SUITE_P(
    Files, KQuantModelTest,
    ::testing::Combine(::testing::ValuesIn(kAnswers),
                       ::testing::Values(Isa::kScalar, Isa::kAvx2, Isa::kAvx512)),
    [](const ::testing::TestParamInfo<std::tuple<KnownAnswer, Isa>>& i) {
      std::string name = std::get<0>(i.param).file;
      name = name.substr(15, name.size() - 20); // "Q4_K_M" of "stories260K-x4-Q4_K_M.gguf"
      return name + "_" + kernels::isa_name(std::get<1>(i.param));
    });

} // namespace
} // namespace pshard
