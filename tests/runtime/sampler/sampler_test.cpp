// Sampler: each stage of the chain on small hand-made distributions, plus the
// seeded generator's reproducibility.
#include "runtime/sampler/sampler.h"

#include <cmath>
#include <gtest/gtest.h>
#include <map>
#include <set>

namespace pshard {
namespace {

SamplerParams plain(float temperature = 1.0f, uint64_t seed = 7) {
  SamplerParams p;
  p.temperature = temperature;
  p.top_k = 0;
  p.top_p = 1.0f;
  p.min_p = 0.0f;
  p.repeat_penalty = 1.0f;
  p.seed = seed;
  return p;
}

// Logits whose softmax (temperature 1) is exactly `probs`.
std::vector<float> logits_for(const std::vector<double> &probs) {
  std::vector<float> logits;
  for (double p : probs)
    logits.push_back(p > 0 ? static_cast<float>(std::log(p)) : -INFINITY);
  return logits;
}

std::map<TokenId, int> histogram(Sampler &sampler, std::span<const float> logits, int draws) {
  std::map<TokenId, int> counts;
  for (int i = 0; i < draws; ++i)
    ++counts[sampler.sample(logits, {})];
  return counts;
}

TEST(Pcg32, KnownFirstOutputsAreStable) {
  // Pinned so that a change to the generator, which would change every seeded
  // generation, is noticed.
  Pcg32 a(42);
  EXPECT_EQ(a.next_u32(), 3270867926u);
  EXPECT_EQ(a.next_u32(), 1795671209u);
  EXPECT_EQ(a.next_u32(), 1924641435u);
  Pcg32 b(42);
  EXPECT_EQ(b.next_u32(), 3270867926u);
  Pcg32 c(0);
  const uint32_t first = c.next_u32();
  c.reseed(0);
  EXPECT_EQ(c.next_u32(), first);
  for (int i = 0; i < 10000; ++i) {
    const float u = c.next_float();
    ASSERT_GE(u, 0.0f);
    ASSERT_LT(u, 1.0f);
  }
}

TEST(Sampler, GreedyPicksArgmaxLowestIdOnTies) {
  Sampler sampler(plain(0.0f));
  const std::vector<float> logits = {0.1f, 2.0f, -1.0f, 2.0f, 1.9f};
  EXPECT_EQ(sampler.sample(logits, {}), 1);
  SamplerParams negative = plain(-1.0f);
  EXPECT_EQ(Sampler(negative).sample(logits, {}), 1);
}

TEST(Sampler, EmptyLogitsGiveNoToken) {
  Sampler sampler(plain());
  EXPECT_EQ(sampler.sample({}, {}), kNoToken);
}

TEST(Sampler, SameSeedSameSequenceDifferentSeedDifferent) {
  const std::vector<float> logits = {1.0f, 1.2f, 0.8f, 1.1f, 0.9f, 1.0f, 0.7f, 1.3f};
  Sampler a(plain(1.0f, 123)), b(plain(1.0f, 123)), c(plain(1.0f, 124));
  std::vector<TokenId> seq_a, seq_b, seq_c;
  for (int i = 0; i < 1000; ++i) {
    seq_a.push_back(a.sample(logits, {}));
    seq_b.push_back(b.sample(logits, {}));
    seq_c.push_back(c.sample(logits, {}));
  }
  EXPECT_EQ(seq_a, seq_b);
  EXPECT_NE(seq_a, seq_c);
}

TEST(Sampler, ResetRestartsTheSequence) {
  const std::vector<float> logits = {1.0f, 1.0f, 1.0f, 1.0f};
  Sampler sampler(plain(1.0f, 5));
  std::vector<TokenId> first, second;
  for (int i = 0; i < 200; ++i)
    first.push_back(sampler.sample(logits, {}));
  sampler.reset(5);
  for (int i = 0; i < 200; ++i)
    second.push_back(sampler.sample(logits, {}));
  EXPECT_EQ(first, second);
  sampler.reset(6);
  EXPECT_EQ(sampler.params().seed, 6u);
}

TEST(Sampler, TopKOneEqualsGreedy) {
  SamplerParams p = plain(1.5f);
  p.top_k = 1;
  Sampler sampler(p);
  Pcg32 noise(99);
  for (int round = 0; round < 50; ++round) {
    std::vector<float> logits(64);
    for (float &l : logits)
      l = noise.next_float() * 4.0f;
    Sampler greedy(plain(0.0f));
    EXPECT_EQ(sampler.sample(logits, {}), greedy.sample(logits, {}));
  }
}

TEST(Sampler, TopKExcludesTheRest) {
  SamplerParams p = plain();
  p.top_k = 2;
  Sampler sampler(p);
  const auto counts = histogram(sampler, logits_for({0.3, 0.1, 0.35, 0.25}), 10000);
  EXPECT_EQ(counts.count(1), 0u);
  EXPECT_EQ(counts.count(3), 0u);
  EXPECT_GT(counts.at(0), 0);
  EXPECT_GT(counts.at(2), 0);
}

TEST(Sampler, TopPKeepsTheSmallestSetReachingP) {
  // Sorted: 0.5 (id 2), 0.3 (id 0), 0.15 (id 3), 0.05 (id 1). p = 0.75 needs
  // ids 2 and 0 (0.8); p = 0.85 needs id 3 too.
  const auto logits = logits_for({0.3, 0.05, 0.5, 0.15});
  SamplerParams p = plain();
  p.top_p = 0.75f;
  Sampler narrow(p);
  auto counts = histogram(narrow, logits, 10000);
  EXPECT_EQ(counts.count(1), 0u);
  EXPECT_EQ(counts.count(3), 0u);
  p.top_p = 0.85f;
  Sampler wider(p);
  counts = histogram(wider, logits, 10000);
  EXPECT_EQ(counts.count(1), 0u);
  EXPECT_GT(counts[3], 0);
}

TEST(Sampler, MinPDropsTokensBelowAFractionOfTheTop) {
  // Top is 0.5; min_p 0.25 -> threshold 0.125: keeps 0.5, 0.3, 0.15.
  SamplerParams p = plain();
  p.min_p = 0.25f;
  Sampler sampler(p);
  const auto counts = histogram(sampler, logits_for({0.3, 0.05, 0.5, 0.15}), 10000);
  EXPECT_EQ(counts.count(1), 0u);
  EXPECT_GT(counts.at(3), 0);
}

TEST(Sampler, ZeroProbabilityTokensAreNeverDrawn) {
  Sampler sampler(plain());
  const auto counts = histogram(sampler, logits_for({0.5, 0.0, 0.5}), 10000);
  EXPECT_EQ(counts.count(1), 0u);
}

TEST(Sampler, FrequenciesMatchProbabilities) {
  const std::vector<double> probs = {0.4, 0.3, 0.15, 0.1, 0.05};
  Sampler sampler(plain(1.0f, 2024));
  const int draws = 20000;
  const auto counts = histogram(sampler, logits_for(probs), draws);
  double chi_square = 0.0;
  for (size_t i = 0; i < probs.size(); ++i) {
    const double expected = probs[i] * draws;
    const auto it = counts.find(static_cast<TokenId>(i));
    const double observed = it == counts.end() ? 0.0 : it->second;
    chi_square += (observed - expected) * (observed - expected) / expected;
  }
  // 4 degrees of freedom: p = 0.001 at 18.5. A loose bound; fails only if broken.
  EXPECT_LT(chi_square, 25.0);
}

TEST(Sampler, TemperatureSharpensTheDistribution) {
  const auto logits = logits_for({0.6, 0.4});
  Sampler cold(plain(0.25f, 3));
  const auto counts = histogram(cold, logits, 10000);
  // At T = 0.25 the odds become (0.6/0.4)^4 ~ 5.06 : 1, i.e. p(0) ~ 0.835.
  EXPECT_NEAR(counts.at(0) / 10000.0, 0.835, 0.02);
}

TEST(Sampler, RepetitionPenaltyChangesTheArgmax) {
  SamplerParams p = plain(0.0f);
  p.repeat_penalty = 2.0f;
  Sampler sampler(p);
  const std::vector<float> logits = {3.0f, 2.0f, -1.0f, -1.5f};
  const std::vector<TokenId> history = {0, 0, 0};
  // 3.0 / 2 = 1.5 < 2.0: token 1 wins.
  EXPECT_EQ(sampler.sample(logits, history), 1);
  // Negative logits are multiplied: -1 * 2 = -2 < -1.5.
  const std::vector<float> negative = {-1.0f, -1.5f};
  EXPECT_EQ(sampler.sample(negative, std::vector<TokenId>{0}), 1);
  // Tokens outside the last repeat_last_n are not penalised.
  p.repeat_last_n = 1;
  Sampler short_window(p);
  EXPECT_EQ(short_window.sample(logits, std::vector<TokenId>{0, 2}), 0);
  // Ids outside the vocabulary in the history are ignored.
  EXPECT_EQ(short_window.sample(logits, std::vector<TokenId>{-3, 99}), 0);
}

TEST(Sampler, FrequencyAndPresencePenaltiesSubtractPerOccurrenceAndOnce) {
  // Token 0 occurs 3 times, token 1 once: frequency 0.5 takes 1.5 and 0.5.
  const std::vector<float> logits = {3.0f, 2.2f, 1.8f};
  const std::vector<TokenId> history = {0, 1, 0, 0};
  SamplerParams p = plain(0.0f);
  p.frequency_penalty = 0.5f;
  EXPECT_EQ(Sampler(p).sample(logits, history), 2); // 1.5, 1.7, 1.8
  p.frequency_penalty = 0.3f;
  EXPECT_EQ(Sampler(p).sample(logits, history), 0); // 2.1, 1.9, 1.8
  p.frequency_penalty = 0.0f;
  p.presence_penalty = 1.1f;
  EXPECT_EQ(Sampler(p).sample(logits, history), 0); // 1.9, 1.1, 1.8
  p.presence_penalty = 1.3f;
  EXPECT_EQ(Sampler(p).sample(logits, history), 2); // 1.7, 0.9, 1.8
  // The window is repeat_last_n's: only the last token (0) counts.
  p.repeat_last_n = 1;
  p.presence_penalty = 0.5f;
  EXPECT_EQ(Sampler(p).sample(std::vector<float>{2.0f, 1.8f}, history), 1);
  // A negative penalty encourages repeats.
  SamplerParams q = plain(0.0f);
  q.presence_penalty = -1.0f;
  EXPECT_EQ(Sampler(q).sample(std::vector<float>{2.0f, 1.5f}, std::vector<TokenId>{1}), 1);
}

TEST(Sampler, LogitBiasShiftsAndBansTokens) {
  const std::vector<float> logits = {3.0f, 2.0f, 1.0f};
  SamplerParams p = plain(0.0f);
  p.logit_bias = {{2, 2.5f}};
  EXPECT_EQ(Sampler(p).sample(logits, {}), 2);
  p.logit_bias = {{0, -INFINITY}};
  EXPECT_EQ(Sampler(p).sample(logits, {}), 1);
  // A banned token is never drawn, and a bias past the vocabulary is ignored.
  SamplerParams s = plain(1.0f, 5);
  s.logit_bias = {{1, -INFINITY}, {7, 5.0f}};
  Sampler sampler(s);
  const auto counts = histogram(sampler, logits, 2000);
  EXPECT_EQ(counts.count(1), 0u);
  EXPECT_GT(counts.at(2), 0);
}

TEST(Sampler, ValidateNamesTheBadField) {
  auto bad = [](auto mutate) {
    SamplerParams p;
    mutate(p);
    Status s = validate_sampler_params(p);
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
    return s.message();
  };
  EXPECT_NE(bad([](SamplerParams &p) { p.top_p = 0.0f; }).find("top_p"), std::string::npos);
  EXPECT_NE(bad([](SamplerParams &p) { p.top_p = 1.5f; }).find("top_p"), std::string::npos);
  EXPECT_NE(bad([](SamplerParams &p) { p.min_p = -0.1f; }).find("min_p"), std::string::npos);
  EXPECT_NE(bad([](SamplerParams &p) { p.top_k = -1; }).find("top_k"), std::string::npos);
  EXPECT_NE(bad([](SamplerParams &p) { p.repeat_penalty = 0.0f; }).find("repeat_penalty"),
            std::string::npos);
  EXPECT_NE(bad([](SamplerParams &p) { p.temperature = NAN; }).find("temperature"),
            std::string::npos);
  EXPECT_NE(bad([](SamplerParams &p) { p.repeat_last_n = -2; }).find("repeat_last_n"),
            std::string::npos);
  EXPECT_NE(bad([](SamplerParams &p) { p.frequency_penalty = INFINITY; }).find("frequency"),
            std::string::npos);
  EXPECT_NE(bad([](SamplerParams &p) { p.presence_penalty = NAN; }).find("presence"),
            std::string::npos);
  EXPECT_NE(bad([](SamplerParams &p) { p.logit_bias = {{-1, 1.0f}}; }).find("logit_bias"),
            std::string::npos);
  EXPECT_NE(bad([](SamplerParams &p) { p.logit_bias = {{3, INFINITY}}; }).find("logit_bias"),
            std::string::npos);
  EXPECT_TRUE(validate_sampler_params(SamplerParams{}).ok());
  EXPECT_TRUE(Sampler::create(SamplerParams{}).ok());
  EXPECT_FALSE(Sampler::create([] {
                 SamplerParams p;
                 p.min_p = 2.0f;
                 return p;
               }())
                   .ok());
}

TEST(Sampler, DefaultChainOnlyDrawsLikelyTokens) {
  SamplerParams p; // the defaults: top_k 40, top_p 0.95, min_p 0.05, T 0.8
  p.seed = 11;
  Sampler sampler(p);
  std::vector<float> logits(1000, -10.0f);
  logits[10] = 5.0f;
  logits[20] = 4.5f;
  logits[30] = 4.0f;
  std::set<TokenId> seen;
  for (int i = 0; i < 2000; ++i)
    seen.insert(sampler.sample(logits, {}));
  for (TokenId id : seen)
    EXPECT_TRUE(id == 10 || id == 20 || id == 30) << id;
}

} // namespace
} // namespace pshard
