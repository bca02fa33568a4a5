// The sampler's truncation stages and Mirostat, each against its definition computed
// here, then through the Sampler's chain by the tokens it draws.
#include "runtime/sampler/mirostat.h"
#include "runtime/sampler/sampler.h"
#include "runtime/sampler/sampler_stages.h"
#include "tests/runtime/sampler/logits_of.h"

#include <cmath>
#include <gtest/gtest.h>
#include <map>
#include <random>
#include <set>

namespace pshard {
namespace {

// Candidates whose softmax at temperature 1 is `probs`, sorted most likely first.
std::vector<Candidate> with_probs(const std::vector<double>& probs) {
  std::vector<Candidate> c;
  for (size_t i = 0; i < probs.size(); ++i)
    c.push_back({static_cast<TokenId>(i), static_cast<float>(std::log(probs[i])), probs[i]});
  sort_most_likely(c);
  return c;
}

std::set<TokenId> ids(const std::vector<Candidate>& c) {
  std::set<TokenId> out;
  for (const Candidate& x : c)
    out.insert(x.id);
  return out;
}

SamplerParams unrestricted(uint64_t seed = 9) {
  SamplerParams p;
  p.temperature = 1.0f;
  p.top_k = 0;
  p.top_p = 1.0f;
  p.min_p = 0.0f;
  p.seed = seed;
  return p;
}

std::map<TokenId, int> draws(const SamplerParams& p, const std::vector<float>& logits, int n) {
  Sampler s(p);
  std::map<TokenId, int> counts;
  for (int i = 0; i < n; ++i)
    ++counts[s.sample(logits, {})];
  return counts;
}

TEST(SamplerStages, TypicalKeepsTheSurprisesNearestTheEntropy) {
  // H = 1.2206 nats; surprises 0.693 (the 0.5), 1.609 (each 0.2), 2.303 (the 0.1): the
  // two 0.2s are nearest, and their 0.4 reaches p = 0.3 — the most likely token is out.
  const std::vector<double> probs = {0.5, 0.2, 0.2, 0.1};
  auto c = with_probs(probs);
  keep_typical(c, 0.3f);
  EXPECT_EQ(ids(c), (std::set<TokenId>{1, 2}));
  for (const Candidate& x : c)
    EXPECT_NEAR(x.prob, 0.5, 1e-12); // renormalised
  c = with_probs(probs);
  keep_typical(c, 0.5f); // + the 0.5: 0.9
  EXPECT_EQ(ids(c), (std::set<TokenId>{0, 1, 2}));
  EXPECT_EQ(c.front().id, 0); // sorted most likely first again

  SamplerParams p = unrestricted();
  p.typical_p = 0.3f;
  const auto counts = draws(p, logits_of(probs), 4000);
  EXPECT_EQ(counts.count(0), 0u);
  EXPECT_EQ(counts.count(3), 0u);
  EXPECT_NEAR(counts.at(1) / 4000.0, 0.5, 0.04);
}

// keep_typical sorts only the tokens nearest the entropy; the set is the one a sort of
// them all by distance keeps, on sets large enough to need several heads, with ties.
TEST(SamplerStages, TypicalKeepsWhatSortingEveryTokenByDistanceKept) {
  std::mt19937 gen(3);
  for (int trial = 0; trial < 200; ++trial) {
    const auto n = static_cast<size_t>(1 + gen() % (trial % 5 == 0 ? 20000 : 600));
    std::normal_distribution<float> normal(0.0f, trial % 2 ? 1.0f : 4.0f);
    std::vector<Candidate> c;
    for (size_t i = 0; i < n; ++i)
      c.push_back({static_cast<TokenId>(i), normal(gen), 0.0});
    for (size_t i = 0; trial % 3 == 0 && i < n; i += 3)
      c[i].logit = c[0].logit;
    softmax(c, 1.0);
    const float p = std::uniform_real_distribution<float>(0.05f, 1.0f)(gen);
    std::vector<Candidate> want = c;
    double h = 0.0;
    for (const Candidate& x : want)
      h -= x.prob > 0.0 ? x.prob * std::log(x.prob) : 0.0;
    auto distance = [h](const Candidate& x) { return std::abs(-std::log(x.prob) - h); };
    std::sort(want.begin(), want.end(), [&](const Candidate& a, const Candidate& b) {
      return distance(a) < distance(b) || (distance(a) == distance(b) && more_likely(a, b));
    });
    keep_top_p(want, p);
    keep_typical(c, p);
    ASSERT_EQ(ids(c), ids(want)) << "trial " << trial << ", " << n << " tokens, p " << p;
  }
}

TEST(SamplerStages, TopNSigmaKeepsLogitsWithinNDeviationsOfTheTop) {
  std::mt19937 rng(3);
  std::normal_distribution<float> normal(0.0f, 2.0f);
  for (float n : {0.5f, 1.0f, 2.0f}) {
    std::vector<Candidate> c;
    for (TokenId i = 0; i < 500; ++i)
      c.push_back({i, normal(rng), 0.0});
    c.push_back({500, -INFINITY, 0.0}); // banned: no part of the statistics, never kept
    double max = -INFINITY, mean = 0;
    for (int i = 0; i < 500; ++i) {
      max = std::max<double>(max, c[i].logit);
      mean += c[i].logit / 500.0;
    }
    double var = 0;
    for (int i = 0; i < 500; ++i)
      var += (c[i].logit - mean) * (c[i].logit - mean) / 500.0;
    std::set<TokenId> expected;
    for (int i = 0; i < 500; ++i)
      if (c[i].logit >= max - n * std::sqrt(var))
        expected.insert(c[i].id);
    keep_top_n_sigma(c, n);
    EXPECT_EQ(ids(c), expected) << "n " << n;
    EXPECT_GT(expected.size(), 0u);
    EXPECT_LT(expected.size(), 500u);
  }
  // In the chain it keeps a token the default top-k would too, and drops a far one.
  std::vector<float> logits = {3.0f, 2.9f, 0.0f, 0.1f, -0.2f, 0.05f};
  SamplerParams p = unrestricted();
  p.top_n_sigma = 1.0f;
  const auto counts = draws(p, logits, 3000);
  std::set<TokenId> seen;
  for (const auto& [id, n] : counts)
    seen.insert(id);
  EXPECT_EQ(seen, (std::set<TokenId>{0, 1})); // sigma 1.40: the threshold is 1.6
}

TEST(SamplerStages, XtcDropsTheTopChoicesButTheLeastLikelyOfThem) {
  auto c = with_probs({0.4, 0.3, 0.2, 0.1});
  exclude_top_choices(c, 0.25f); // 0.4 and 0.3 reach it: 0.4 goes
  EXPECT_EQ(ids(c), (std::set<TokenId>{1, 2, 3}));
  EXPECT_NEAR(c.front().prob, 0.5, 1e-12);
  c = with_probs({0.4, 0.3, 0.2, 0.1});
  exclude_top_choices(c, 0.35f); // only one reaches it: nothing goes
  EXPECT_EQ(c.size(), 4u);

  const auto logits = logits_of({0.4, 0.3, 0.2, 0.1});
  SamplerParams p = unrestricted();
  p.xtc_threshold = 0.25f;
  p.xtc_probability = 1.0f;
  EXPECT_EQ(draws(p, logits, 2000).count(0), 0u);
  p.xtc_probability = 0.5f; // token 0 only when the coin spares it: 0.4 x 0.5
  EXPECT_NEAR(draws(p, logits, 20000).at(0) / 20000.0, 0.2, 0.015);
  // Off, every draw is the plain chain's: no coin is drawn.
  p.xtc_probability = 0.0f;
  EXPECT_EQ(draws(p, logits, 500), draws(unrestricted(), logits, 500));
}

TEST(SamplerStages, DynamicTemperatureFollowsTheNormalisedEntropy) {
  const auto uniform = with_probs({0.25, 0.25, 0.25, 0.25});
  EXPECT_NEAR(dynamic_temperature(uniform, 1.0f, 0.5f, 1.0f), 1.5, 1e-9);
  const auto certain = with_probs({1 - 3e-12, 1e-12, 1e-12, 1e-12});
  EXPECT_NEAR(dynamic_temperature(certain, 1.0f, 0.5f, 1.0f), 0.5, 1e-6);
  EXPECT_NEAR(dynamic_temperature(certain, 0.2f, 0.5f, 1.0f), 1e-4, 1e-6); // floored
  const auto some = with_probs({0.7, 0.2, 0.1});
  double h = 0;
  for (double q : {0.7, 0.2, 0.1})
    h -= q * std::log(q);
  const double normalized = h / std::log(3.0);
  EXPECT_NEAR(dynamic_temperature(some, 0.8f, 0.3f, 2.0f), 0.5 + 0.6 * normalized * normalized,
              1e-6);

  // In the chain: two tokens at odds 3:1 (normalised entropy 0.811) with T 1 +- 1 are
  // drawn at T = 0 + 2 x 0.811, so token 0 at 3^(1/T) / (1 + 3^(1/T)).
  SamplerParams p = unrestricted(21);
  p.dynatemp_range = 1.0f;
  const double t = 2.0 * (-(0.75 * std::log(0.75) + 0.25 * std::log(0.25)) / std::log(2.0));
  const double expected = std::pow(3.0, 1 / t) / (1 + std::pow(3.0, 1 / t));
  EXPECT_NEAR(draws(p, logits_of({0.75, 0.25}), 20000).at(0) / 20000.0, expected, 0.012);
}

TEST(SamplerStages, ZipfExponentIsExactOnAZipfDistribution) {
  std::vector<double> probs;
  double z = 0;
  for (int i = 1; i <= 1000; ++i)
    z += std::pow(i, -1.3);
  for (int i = 1; i <= 1000; ++i)
    probs.push_back(std::pow(i, -1.3) / z);
  EXPECT_NEAR(zipf_exponent(with_probs(probs)), 1.3, 1e-6);
}

TEST(Mirostat, V2KeepsSurprisesUpToMuAndLearnsFromTheChosenOne) {
  MirostatParams p{5.0f, 0.1f};
  float mu = 1.5f; // surprises 1, 2, 3, 3 bits: only the first is kept
  Pcg32 rng(1);
  auto c = with_probs({0.5, 0.25, 0.125, 0.125});
  EXPECT_EQ(mirostat_v2(c, p, mu, rng), 0);
  ASSERT_EQ(c.size(), 1u);
  EXPECT_FLOAT_EQ(mu, 1.5f - 0.1f * (0.0f - 5.0f)); // its surprise in the kept set: 0
  c = with_probs({0.5, 0.25, 0.125, 0.125});
  mirostat_v2(c, p, mu, rng); // mu 2: two kept
  EXPECT_EQ(ids(c), (std::set<TokenId>{0, 1}));
}

// Over many steps on a fixed Zipf distribution, the chosen tokens' surprise averages
// near tau: what Mirostat is for.
double mean_surprise(int version, float tau) {
  std::vector<double> probs;
  double z = 0;
  for (int i = 1; i <= 2000; ++i)
    z += std::pow(i, -1.1);
  for (int i = 1; i <= 2000; ++i)
    probs.push_back(std::pow(i, -1.1) / z);
  const MirostatParams p{tau, 0.1f};
  float mu = 2 * tau;
  Pcg32 rng(17);
  double sum = 0;
  const int steps = 4000;
  for (int s = 0; s < steps; ++s) {
    auto c = with_probs(probs);
    const TokenId t =
        version == 1 ? mirostat_v1(c, probs.size(), p, mu, rng) : mirostat_v2(c, p, mu, rng);
    for (const Candidate& x : c)
      if (x.id == t)
        sum += -std::log2(x.prob);
  }
  return sum / steps;
}

TEST(Mirostat, BothVersionsHoldTheSurpriseNearTau) {
  for (float tau : {3.0f, 5.0f}) {
    EXPECT_NEAR(mean_surprise(1, tau), tau, 0.25) << "v1 tau " << tau;
    EXPECT_NEAR(mean_surprise(2, tau), tau, 0.25) << "v2 tau " << tau;
  }
}

TEST(Mirostat, InTheChainItReplacesTopK) {
  std::vector<float> logits(50);
  for (size_t i = 0; i < logits.size(); ++i)
    logits[i] = -0.1f * static_cast<float>(i);
  SamplerParams p = unrestricted(5);
  p.top_k = 1;
  EXPECT_EQ(draws(p, logits, 200).size(), 1u);
  p.mirostat = 2;
  EXPECT_GT(draws(p, logits, 200).size(), 5u);
  // reset() restarts mu with the random sequence: the same draws again.
  Sampler s(p);
  std::vector<TokenId> first, again;
  for (int i = 0; i < 100; ++i)
    first.push_back(s.sample(logits, {}));
  s.reset(p.seed);
  for (int i = 0; i < 100; ++i)
    again.push_back(s.sample(logits, {}));
  EXPECT_EQ(first, again);
}

// The chain with top-k off as it ran before it learnt to sort only what the cuts keep (and
// with no cut, nothing): everything sorted, the softmax summed in that order, top-p,
// min-p, one draw.
TokenId sorted_whole_draw(const std::vector<float>& logits, const SamplerParams& p, Pcg32& rng) {
  std::vector<Candidate> c;
  for (size_t i = 0; i < logits.size(); ++i)
    c.push_back({static_cast<TokenId>(i), logits[i], 0.0});
  sort_most_likely(c);
  softmax(c, p.temperature);
  if (p.top_p < 1.0f)
    keep_top_p(c, p.top_p);
  if (p.min_p > 0.0f)
    keep_min_p(c, p.min_p);
  double total = 0;
  for (const Candidate& x : c)
    total += x.prob;
  return draw(c, total, rng);
}

TEST(SamplerStages, TopKOffDrawsWhatSortingEverythingDrew) {
  std::mt19937 gen(8);
  std::normal_distribution<float> normal(0.0f, 3.0f);
  for (auto [top_p, min_p] :
       {std::pair{0.9f, 0.05f}, {1.0f, 0.1f}, {0.8f, 0.0f}, {0.95f, 0.0f}, {1.0f, 0.0f}}) {
    SamplerParams p = unrestricted(31);
    p.top_p = top_p;
    p.min_p = min_p;
    Sampler sampler(p);
    Pcg32 rng(31);
    int differ = 0;
    for (int row = 0; row < 100; ++row) {
      std::vector<float> logits(3000);
      for (float& x : logits)
        x = normal(gen);
      for (int draw_i = 0; draw_i < 5; ++draw_i)
        differ += sampler.sample(logits, {}) != sorted_whole_draw(logits, p, rng);
    }
    EXPECT_EQ(differ, 0) << "top_p " << top_p << " min_p " << min_p;
  }
}

TEST(SamplerStages, ValidateNamesTheBadField) {
  auto message = [](auto mutate) {
    SamplerParams p;
    mutate(p);
    const Status s = validate_sampler_params(p);
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
    return s.message();
  };
  auto names = [&](auto mutate, const char* field) {
    EXPECT_NE(message(mutate).find(field), std::string::npos) << field;
  };
  names([](SamplerParams& p) { p.typical_p = 0.0f; }, "typical_p");
  names([](SamplerParams& p) { p.top_n_sigma = NAN; }, "top_n_sigma");
  names([](SamplerParams& p) { p.xtc_probability = 1.5f; }, "xtc_probability");
  names([](SamplerParams& p) { p.xtc_threshold = -0.1f; }, "xtc_threshold");
  names([](SamplerParams& p) { p.dynatemp_range = -1.0f; }, "dynatemp_range");
  names([](SamplerParams& p) { p.dynatemp_exponent = 0.0f; }, "dynatemp_exponent");
  names([](SamplerParams& p) { p.mirostat = 3; }, "mirostat");
  names([](SamplerParams& p) { p.mirostat_params.eta = -1.0f; }, "mirostat_eta");
  names([](SamplerParams& p) { p.dry.multiplier = -1.0f; }, "dry_multiplier");
  names([](SamplerParams& p) { p.dry.base = 0.5f; }, "dry_base");
  names([](SamplerParams& p) { p.dry.allowed_length = 0; }, "dry_allowed_length");
  names([](SamplerParams& p) { p.dry.penalty_last_n = -2; }, "dry_penalty_last_n");
}

} // namespace
} // namespace pshard
