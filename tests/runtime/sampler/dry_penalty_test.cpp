// DryPenalty: the repeats it finds against a direct search, the penalty's size, the
// breakers, the window, and its place in the Sampler's chain.
#include "runtime/sampler/dry_penalty.h"
#include "runtime/sampler/sampler.h"

#include <cmath>
#include <gtest/gtest.h>
#include <map>
#include <random>

namespace pshard {
namespace {

std::vector<Candidate> flat(size_t n_vocab) {
  std::vector<Candidate> c(n_vocab);
  for (size_t i = 0; i < n_vocab; ++i)
    c[i] = {static_cast<TokenId>(i), 0.0f, 0.0};
  return c;
}

// The longest repeat each token would extend, by checking every earlier position
// token by token (the definition, O(n^2)).
std::map<TokenId, int32_t> naive_repeats(const std::vector<TokenId>& h,
                                         const std::vector<bool>& breakers, int32_t allowed) {
  std::map<TokenId, int32_t> best;
  const auto n = static_cast<int32_t>(h.size());
  for (int32_t i = 1; i < n; ++i) {
    int32_t k = 0;
    while (k < i && h[i - 1 - k] == h[n - 1 - k] && !breakers[h[n - 1 - k]])
      ++k;
    if (k >= allowed)
      best[h[i]] = std::max(best[h[i]], k);
  }
  return best;
}

TEST(DryPenalty, ARepeatLosesMultiplierTimesBaseToItsExtraLength) {
  // "1 2 3 4 9 1 2 3": a 4 would repeat "1 2 3 4", extending a repeat of 3.
  const std::vector<TokenId> history = {1, 2, 3, 4, 9, 1, 2, 3};
  DryParams p;
  p.multiplier = 0.8f;
  p.base = 1.75f;
  p.allowed_length = 2;
  DryPenalty dry;
  auto c = flat(10);
  dry.apply(p, nullptr, history, c, true);
  for (const Candidate& x : c)
    if (x.id == 4)
      EXPECT_FLOAT_EQ(x.logit, -0.8f * 1.75f);
    else
      EXPECT_EQ(x.logit, 0.0f) << x.id;
  // A repeat of 3 is free at allowed_length 4, and costs the multiplier alone at 3.
  p.allowed_length = 4;
  c = flat(10);
  dry.apply(p, nullptr, history, c, true);
  EXPECT_EQ(c[4].logit, 0.0f);
  p.allowed_length = 3;
  c = flat(10);
  dry.apply(p, nullptr, history, c, true);
  EXPECT_FLOAT_EQ(c[4].logit, -0.8f);
}

// A breaker the vocabulary spells over several tokens ("Ser" "aph" "ina", tokens 1 2 3)
// stops a repeat as one held by a token does; an unfinished or misspelt one does not.
TEST(DryPenalty, ABreakerSpanningTokensStopsARepeat) {
  const std::vector<std::string> pieces = {"a", "Ser", "aph", "ina", "b", "c", "x", "", "", "d"};
  DrySpans spans{{{1, "aphina"}}, [&](TokenId t) { return pieces[static_cast<size_t>(t)]; }};
  DryParams p;
  p.multiplier = 1.0f;
  p.allowed_length = 2;
  DryPenalty dry;
  auto longest = [&](const std::vector<TokenId>& h, const DrySpans* s) {
    int32_t n = 0;
    for (const auto& [token, length] : dry.repeats(p, nullptr, h, s))
      n = token == 9 ? length : n;
    return n;
  };
  // "Ser aph ina b c d Ser aph ina b c": d would extend "Ser aph ina b c" (5 tokens).
  const std::vector<TokenId> whole = {1, 2, 3, 4, 5, 9, 1, 2, 3, 4, 5};
  EXPECT_EQ(longest(whole, nullptr), 5);
  EXPECT_EQ(longest(whole, &spans), 2); // only "b c", after the name
  // "Ser aph x b c": not the name, the repeat runs on.
  const std::vector<TokenId> misspelt = {1, 2, 6, 4, 5, 9, 1, 2, 6, 4, 5};
  EXPECT_EQ(longest(misspelt, &spans), 5);
  // The name not finished at the end: the repeat "... b c Ser aph" stands.
  const std::vector<TokenId> unfinished = {4, 5, 1, 2, 9, 4, 5, 1, 2};
  EXPECT_EQ(longest(unfinished, &spans), 4);
  // Through the sampler: 9 loses multiplier x base^(2 - 2) = 1 instead of base^3.
  std::vector<float> logits(10, 0.0f);
  logits[9] = 1.5f;
  SamplerParams sp;
  sp.temperature = 0.0f;
  sp.dry = p;
  EXPECT_EQ(Sampler(sp).sample(logits, whole), 0); // 1.5 - 1.75^3 < 0
  sp.dry_spans = std::make_shared<const DrySpans>(spans);
  EXPECT_EQ(Sampler(sp).sample(logits, whole), 9); // 1.5 - 1 > 0
}

TEST(DryPenalty, ARepeatNeverRunsAcrossABreaker) {
  std::vector<bool> breakers(10, false);
  breakers[5] = true;
  DryParams p;
  p.multiplier = 1.0f;
  p.allowed_length = 2;
  DryPenalty dry;
  // "7 5 2 3 4 9 7 5 2 3": the repeat "2 3" (length 2) counts, "7 5 2 3" does not.
  std::vector<TokenId> history = {7, 5, 2, 3, 4, 9, 7, 5, 2, 3};
  auto hits = dry.repeats(p, &breakers, history);
  ASSERT_EQ(hits.size(), 1u);
  EXPECT_EQ(hits[0], (std::pair<TokenId, int32_t>{4, 2}));
  // The text ending on a breaker: nothing extends a repeat.
  history.push_back(5);
  EXPECT_TRUE(dry.repeats(p, &breakers, history).empty());
  // Without breakers "...3 5" repeats only its last token, under allowed_length.
  EXPECT_TRUE(dry.repeats(p, nullptr, history).empty());
}

TEST(DryPenalty, RepeatsEqualADirectSearchOnRandomTexts) {
  std::mt19937 rng(5);
  DryPenalty dry;
  for (int trial = 0; trial < 400; ++trial) {
    const int alphabet = 2 + trial % 4;
    std::vector<bool> breakers(static_cast<size_t>(alphabet), false);
    if (trial % 3 == 0)
      breakers[static_cast<size_t>(alphabet - 1)] = true;
    std::vector<TokenId> h(1 + rng() % 60);
    for (TokenId& t : h)
      t = static_cast<TokenId>(rng() % static_cast<unsigned>(alphabet));
    DryParams p;
    p.multiplier = 1.0f;
    p.allowed_length = 1 + trial % 3;
    const auto expected = naive_repeats(h, breakers, p.allowed_length);
    const auto& got = dry.repeats(p, &breakers, h);
    ASSERT_EQ(got.size(), expected.size()) << "trial " << trial;
    for (const auto& [token, length] : got)
      EXPECT_EQ(expected.at(token), length) << "trial " << trial << " token " << token;
  }
}

TEST(DryPenalty, OnlyTheLastPenaltyLastNTokensAreSearched) {
  const std::vector<TokenId> history = {1, 2, 3, 4, 9, 9, 9, 9, 1, 2, 3};
  DryParams p;
  p.multiplier = 1.0f;
  DryPenalty dry;
  EXPECT_EQ(dry.repeats(p, nullptr, history).size(), 1u);
  p.penalty_last_n = 7; // "9 9 9 9 1 2 3": the first "1 2 3 4" is out of the window
  EXPECT_TRUE(dry.repeats(p, nullptr, history).empty());
  p.penalty_last_n = 0; // off
  EXPECT_TRUE(dry.repeats(p, nullptr, history).empty());
}

TEST(DryPenalty, ALongLoopGetsAFiniteProhibitivePenalty) {
  std::vector<TokenId> history;
  for (int i = 0; i < 3000; ++i)
    history.push_back(i % 2 ? 2 : 1);
  DryParams p;
  p.multiplier = 0.8f;
  DryPenalty dry;
  auto c = flat(4);
  dry.apply(p, nullptr, history, c, true);
  EXPECT_TRUE(std::isfinite(c[1].logit));
  EXPECT_LE(c[1].logit, -1e29f);
  EXPECT_EQ(c[2].logit, 0.0f); // 2 would not repeat: the text ends on 2 and 1 follows 2
}

TEST(DryPenalty, InTheSamplerItTurnsGreedyAwayFromALoop) {
  // Token 4 is the most likely, but it would repeat "1 2 3 4" after "1 2 3".
  const std::vector<TokenId> history = {1, 2, 3, 4, 9, 1, 2, 3};
  std::vector<float> logits(10, 0.0f);
  logits[4] = 2.0f;
  logits[5] = 1.5f;
  SamplerParams p;
  p.temperature = 0.0f;
  EXPECT_EQ(Sampler(p).sample(logits, history), 4);
  p.dry.multiplier = 0.8f; // 4 loses 0.8 x 1.75 = 1.4
  EXPECT_EQ(Sampler(p).sample(logits, history), 5);
  // With 3 a breaker the repeat is "" and 4 is free again.
  auto breakers = std::make_shared<std::vector<bool>>(10, false);
  (*breakers)[3] = true;
  p.dry_breakers = breakers;
  EXPECT_EQ(Sampler(p).sample(logits, history), 4);
}

} // namespace
} // namespace pshard
