// The sampler's stage order: llama.cpp's names and letters, and the chain run in any
// order against a plain reading of llama.cpp's stages (each cut on the softmax of what is
// left, the temperature scaling the logits where it stands).
#include "runtime/sampler/dry_penalty.h"
#include "runtime/sampler/sampler.h"
#include "runtime/sampler/sampler_order.h"
#include "tests/runtime/sampler/logits_of.h"

#include <algorithm>
#include <cmath>
#include <gtest/gtest.h>
#include <map>
#include <numeric>
#include <random>
#include <set>

namespace pshard {
namespace {

using S = SamplerStage;

TEST(SamplerOrder, ReadsLlamaCppsNamesInEverySpelling) {
  auto order = parse_sampler_names("penalties;DRY;top-n-sigma;topk;Typ;nucleus;min_p;xtc;temp");
  ASSERT_TRUE(order.ok()) << order.status().to_string();
  EXPECT_EQ(*order, llama_cpp_sampler_order());
  EXPECT_EQ(sampler_order_names(*order),
            "penalties;dry;top_n_sigma;top_k;typ_p;top_p;min_p;xtc;temperature");
  auto back = parse_sampler_names(sampler_order_names(default_sampler_order()));
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(*back, default_sampler_order());
  auto letters = parse_sampler_letters("edskypmxt");
  ASSERT_TRUE(letters.ok());
  EXPECT_EQ(*letters, llama_cpp_sampler_order());
  auto empty = parse_sampler_names(";;");
  ASSERT_TRUE(empty.ok());
  EXPECT_TRUE(empty->empty());
}

TEST(SamplerOrder, RefusesUnknownMissingAndRepeatedStagesByName) {
  auto unknown = parse_sampler_names("top_k;top_q");
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.status().message().find("'top_q'"), std::string::npos);
  EXPECT_NE(unknown.status().message().find("typ_p"), std::string::npos); // lists the known
  auto infill = parse_sampler_names("infill");
  ASSERT_FALSE(infill.ok());
  EXPECT_NE(infill.status().message().find("does not have"), std::string::npos);
  EXPECT_FALSE(parse_sampler_names("adaptive-p").ok());
  auto twice = parse_sampler_names("temperature;top_k;temp");
  ASSERT_FALSE(twice.ok());
  EXPECT_NE(twice.status().message().find("temperature twice"), std::string::npos);
  auto letter = parse_sampler_letters("kpz");
  ASSERT_FALSE(letter.ok());
  EXPECT_NE(letter.status().message().find("'z'"), std::string::npos);
  SamplerParams p;
  p.order = {S::kTopK, S::kMinP, S::kTopK};
  const Status st = validate_sampler_params(p);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("top_k twice"), std::string::npos);
}

SamplerParams plain(SamplerOrder order) {
  SamplerParams p;
  p.top_k = 0;
  p.top_p = 1.0f;
  p.min_p = 0.0f;
  p.temperature = 1.0f;
  p.order = std::move(order);
  return p;
}

// How often each token is drawn in `draws` samples, one seed each.
std::map<TokenId, int> draw_counts(const SamplerParams& params, std::span<const float> logits,
                                   std::span<const TokenId> history = {}, int draws = 400) {
  auto sampler = Sampler::create(params);
  EXPECT_TRUE(sampler.ok()) << sampler.status().to_string();
  std::map<TokenId, int> counts;
  for (int i = 0; i < draws; ++i) {
    sampler->reset(static_cast<uint64_t>(i) * 7919 + 1);
    ++counts[sampler->sample(logits, history)];
  }
  return counts;
}

TEST(SamplerOrder, TheTemperatureLastLeavesTopPToTheUnscaledProbabilities) {
  // At temperature 1 token 0 holds 0.73 of the mass, so top-p 0.7 keeps it alone; at
  // temperature 5 the two are near even and top-p keeps both.
  const std::vector<float> logits = {2.0f, 1.0f, -20.0f};
  SamplerParams first = plain({S::kTemperature, S::kTopP});
  first.temperature = 5.0f;
  first.top_p = 0.7f;
  SamplerParams last = first;
  last.order = {S::kTopP, S::kTemperature};
  EXPECT_GT(draw_counts(first, logits)[1], 100);
  EXPECT_EQ(draw_counts(last, logits).count(1), 0u);
}

TEST(SamplerOrder, MinPBeforeTopPRenormalisesWhatMinPLeft) {
  // min-p 0.2 drops the 0.05 token; top-p 0.83 then keeps two of the three left
  // (0.526 + 0.316 >= 0.83), while top-p first keeps three (0.5 + 0.3 < 0.83).
  const std::vector<float> logits = logits_of({0.5, 0.3, 0.15, 0.05});
  SamplerParams min_first = plain({S::kMinP, S::kTopP});
  min_first.min_p = 0.2f;
  min_first.top_p = 0.83f;
  SamplerParams top_first = min_first;
  top_first.order = {S::kTopP, S::kMinP};
  EXPECT_EQ(draw_counts(min_first, logits).count(2), 0u);
  EXPECT_GT(draw_counts(top_first, logits)[2], 20);
  EXPECT_EQ(draw_counts(top_first, logits).count(3), 0u);
}

TEST(SamplerOrder, PenaltiesAfterTopKPenaliseOnlyWhatTopKKept) {
  const std::vector<float> logits = {5.0f, 4.5f, 4.0f, -10.0f};
  const std::vector<TokenId> history = {0, 0, 0};
  SamplerParams p = plain(default_sampler_order());
  p.top_k = 2;
  p.frequency_penalty = 3.0f;
  // Penalties first: token 0 falls out of the top two.
  const auto early = draw_counts(p, logits, history);
  EXPECT_EQ(early.count(0), 0u);
  EXPECT_GT(early.at(2), 20);
  // After top-k: tokens 0 and 1 were kept, and the penalty only makes 0 rarer.
  p.order = {S::kTopK, S::kPenalties, S::kTemperature};
  const auto late = draw_counts(p, logits, history);
  EXPECT_EQ(late.count(2), 0u);
  EXPECT_GT(late.at(1), late.count(0) ? late.at(0) : 0);
  // A cut after them sees the penalised order: token 0 falls to 4.2, below token 1's 4.5,
  // and top-p 0.4 keeps token 1 alone (0.43 of the three's mass).
  SamplerParams then_cut = p;
  then_cut.order = {S::kTopK, S::kPenalties, S::kTopP};
  then_cut.top_k = 3;
  then_cut.frequency_penalty = 0.8f;
  then_cut.top_p = 0.4f;
  const std::vector<TokenId> once = {0};
  EXPECT_EQ(draw_counts(then_cut, logits, once), (std::map<TokenId, int>{{1, 400}}));
  // Greedy ignores the order: every penalty applies, then the argmax.
  p.temperature = 0.0f;
  EXPECT_EQ(draw_counts(p, logits, history, 3), (std::map<TokenId, int>{{1, 3}}));
}

TEST(SamplerOrder, AStageLeftOutDoesNotRun) {
  const std::vector<float> logits = {1.0f, 0.0f};
  const std::vector<TokenId> history = {0, 0, 0, 0};
  SamplerParams p = plain({S::kTemperature});
  p.temperature = 0.01f; // all but greedy
  EXPECT_EQ(draw_counts(p, logits).count(1), 0u);
  p.order = {}; // no temperature: 1, and token 1 has 0.27
  EXPECT_GT(draw_counts(p, logits)[1], 50);
  p.order = {S::kTemperature};
  p.frequency_penalty = 100.0f; // no "penalties" stage: not applied
  EXPECT_EQ(draw_counts(p, logits, history).count(1), 0u);
  p.order = {S::kPenalties, S::kTemperature};
  EXPECT_EQ(draw_counts(p, logits, history).count(0), 0u);
}

// llama.cpp's stages read plainly: every cut on the softmax of what is left, the
// temperature dividing the logits where it stands. The tokens left, with their
// probabilities.
std::map<TokenId, double> reference_support(std::span<const float> logits, const SamplerParams& p) {
  struct C {
    TokenId id;
    double logit, prob;
  };
  std::vector<C> c;
  for (size_t i = 0; i < logits.size(); ++i)
    c.push_back({static_cast<TokenId>(i), logits[i], 0.0});
  double t = 1.0;
  auto softmax = [&] {
    double top = -INFINITY, sum = 0;
    for (const C& x : c)
      top = std::max(top, x.logit / t);
    for (C& x : c)
      sum += (x.prob = std::exp(x.logit / t - top));
    for (C& x : c)
      x.prob /= sum;
    std::sort(c.begin(), c.end(), [](const C& a, const C& b) {
      return a.logit > b.logit || (a.logit == b.logit && a.id < b.id);
    });
  };
  auto keep_mass = [&](double mass) {
    double cum = 0;
    for (size_t i = 0; i < c.size(); ++i)
      if ((cum += c[i].prob) >= mass) {
        c.resize(i + 1);
        return;
      }
  };
  for (SamplerStage s : p.order) {
    if (s == S::kTemperature) {
      t = p.temperature;
    } else if (s == S::kTopK && p.top_k > 0) {
      softmax();
      c.resize(std::min(c.size(), static_cast<size_t>(p.top_k)));
    } else if (s == S::kTopNSigma && p.top_n_sigma > 0) {
      double top = -INFINITY, mean = 0, var = 0;
      for (const C& x : c)
        top = std::max(top, x.logit), mean += x.logit / static_cast<double>(c.size());
      for (const C& x : c)
        var += (x.logit - mean) * (x.logit - mean) / static_cast<double>(c.size());
      std::erase_if(c, [&](const C& x) { return x.logit < top - p.top_n_sigma * std::sqrt(var); });
    } else if (s == S::kTopP && p.top_p < 1) {
      softmax();
      keep_mass(p.top_p);
    } else if (s == S::kMinP && p.min_p > 0) {
      softmax();
      const double floor = p.min_p * c.front().prob;
      std::erase_if(c, [&](const C& x) { return x.prob < floor; });
    } else if (s == S::kTypicalP && p.typical_p < 1) {
      softmax();
      double h = 0;
      for (const C& x : c)
        h -= x.prob * std::log(x.prob);
      std::stable_sort(c.begin(), c.end(), [h](const C& a, const C& b) {
        return std::abs(-std::log(a.prob) - h) < std::abs(-std::log(b.prob) - h);
      });
      keep_mass(p.typical_p);
    }
  }
  softmax();
  std::map<TokenId, double> out;
  for (const C& x : c)
    out[x.id] = x.prob;
  return out;
}

TEST(SamplerOrder, EveryOrderDrawsFromWhatLlamaCppsStagesLeave) {
  std::mt19937 gen(11);
  const std::vector<SamplerStage> cuts = {S::kTopNSigma, S::kTopK, S::kTypicalP,
                                          S::kTopP,      S::kMinP, S::kTemperature};
  auto uniform = [&](double lo, double hi) {
    return std::uniform_real_distribution<>(lo, hi)(gen);
  };
  int checked = 0;
  for (int trial = 0; trial < 120; ++trial) {
    std::vector<float> logits(40);
    std::normal_distribution<float> normal(0.0f, 2.0f);
    for (float& x : logits)
      x = normal(gen);
    SamplerOrder order = cuts;
    std::shuffle(order.begin(), order.end(), gen);
    order.resize(2 + gen() % (cuts.size() - 1));
    SamplerParams p = plain(order);
    p.temperature = static_cast<float>(uniform(0.3, 3.0));
    p.top_k = static_cast<int32_t>(gen() % 30);
    p.top_p = static_cast<float>(uniform(0.3, 1.0));
    p.min_p = static_cast<float>(uniform(0.0, 0.3));
    p.typical_p = static_cast<float>(uniform(0.4, 1.0));
    p.top_n_sigma = static_cast<float>(uniform(0.0, 3.0));
    const auto support = reference_support(logits, p);
    const auto counts = draw_counts(p, logits);
    for (const auto& [token, n] : counts)
      EXPECT_TRUE(support.count(token))
          << "trial " << trial << " (" << sampler_order_names(order) << "): drew " << token;
    for (const auto& [token, prob] : support)
      if (prob >= 0.05) {
        EXPECT_TRUE(counts.count(token)) << "trial " << trial << " (" << sampler_order_names(order)
                                         << "): never drew " << token << " of probability " << prob;
        ++checked;
      }
  }
  EXPECT_GT(checked, 200); // the draws are tested against many kept tokens, not few
}

TEST(SamplerOrder, TheDrawnDistributionIsWhatTheStagesLeft) {
  const std::vector<float> logits = {1.0f, 3.0f, -1.0f, 2.0f, 0.0f};
  SamplerParams p = plain(default_sampler_order());
  p.top_k = 3;
  p.temperature = 0.5f;
  p.seed = 4;
  auto sampler = Sampler::create(p);
  ASSERT_TRUE(sampler.ok());
  std::vector<std::pair<TokenId, double>> top;
  for (int i = 0; i < 20; ++i) {
    const TokenId t = sampler->sample(logits, {});
    const double chosen = sampler->drawn_distribution(t, 5, top);
    // softmax(logits / 0.5) over tokens 1, 3 and 0: e^6, e^4, e^2 over their sum.
    const double sum = std::exp(6.0) + std::exp(4.0) + std::exp(2.0);
    ASSERT_EQ(top.size(), 3u);
    EXPECT_EQ(top[0].first, 1);
    EXPECT_EQ(top[1].first, 3);
    EXPECT_EQ(top[2].first, 0);
    EXPECT_NEAR(top[0].second, std::exp(6.0) / sum, 1e-6);
    EXPECT_NEAR(top[2].second, std::exp(2.0) / sum, 1e-6);
    const auto it =
        std::find_if(top.begin(), top.end(), [t](const auto& e) { return e.first == t; });
    ASSERT_NE(it, top.end());
    EXPECT_EQ(chosen, it->second);
  }
  p.temperature = 0.0f;
  auto greedy = Sampler::create(p);
  const TokenId t = greedy->sample(logits, {});
  EXPECT_EQ(greedy->drawn_distribution(t, 3, top), 1.0);
  EXPECT_EQ(top, (std::vector<std::pair<TokenId, double>>{{1, 1.0}}));
}

TEST(SamplerOrder, DryByLookupPenalisesAsByTokenId) {
  const std::vector<TokenId> history = {1, 2, 3, 4, 9, 1, 2, 3, 7, 1, 2, 3};
  DryParams p;
  p.multiplier = 0.8f;
  std::vector<Candidate> by_id, shuffled;
  for (TokenId t = 0; t < 10; ++t)
    by_id.push_back({t, 0.5f * static_cast<float>(t), 0.0});
  shuffled = {by_id[7], by_id[4], by_id[0], by_id[9], by_id[1]};
  DryPenalty dry;
  dry.apply(p, nullptr, history, by_id, true);
  dry.apply(p, nullptr, history, shuffled, false);
  int penalised = 0;
  for (const Candidate& c : shuffled) {
    EXPECT_EQ(c.logit, by_id[static_cast<size_t>(c.id)].logit) << c.id;
    penalised += c.logit != 0.5f * static_cast<float>(c.id);
  }
  EXPECT_EQ(penalised, 2); // 4 and 7 would extend "1 2 3"
}

} // namespace
} // namespace pshard
