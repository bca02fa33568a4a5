#include "runtime/sampler/mirostat.h"

#include "runtime/sampler/sampler_stages.h"

#include <algorithm>
#include <cmath>

namespace pshard {
namespace {

// Draws from the kept, renormalised set and learns mu from the chosen token's surprise.
TokenId draw_and_learn(std::vector<Candidate>& candidates, const MirostatParams& p, float& mu,
                       Pcg32& rng) {
  renormalize(candidates);
  const TokenId chosen = draw(candidates, 1.0, rng);
  for (const Candidate& c : candidates)
    if (c.id == chosen) {
      const double surprise = -std::log2(c.prob);
      mu -= static_cast<float>(p.eta * (surprise - p.tau));
      break;
    }
  return chosen;
}

} // namespace

double zipf_exponent(const std::vector<Candidate>& candidates, size_t m) {
  const size_t n = std::min(m, candidates.size());
  double slope_product = 0.0, slope_square = 0.0;
  for (size_t i = 0; i + 1 < n; ++i) {
    if (!(candidates[i].prob > 0.0 && candidates[i + 1].prob > 0.0))
      break;
    const double t = std::log(static_cast<double>(i + 2) / static_cast<double>(i + 1));
    const double b = std::log(candidates[i].prob / candidates[i + 1].prob);
    slope_product += t * b;
    slope_square += t * t;
  }
  return slope_square > 0.0 ? slope_product / slope_square : 0.0;
}

TokenId mirostat_v1(std::vector<Candidate>& candidates, size_t n_vocab, const MirostatParams& p,
                    float& mu, Pcg32& rng) {
  constexpr size_t kHead = 100;
  sort_most_likely_head(candidates, std::min(kHead, candidates.size()));
  const double s = zipf_exponent(candidates, kHead);
  const double e = s - 1.0;
  double k = std::pow(e * std::pow(2.0, static_cast<double>(mu)) /
                          (1.0 - std::pow(static_cast<double>(n_vocab), -e)),
                      1.0 / s);
  // A head with no finite k (s = 1, or no estimate: s = 0) keeps everything.
  if (!std::isfinite(k) || k > static_cast<double>(candidates.size()))
    k = static_cast<double>(candidates.size());
  const size_t keep = std::max<size_t>(1, static_cast<size_t>(k));
  if (keep > kHead)
    sort_most_likely_head(candidates, keep);
  candidates.resize(keep);
  return draw_and_learn(candidates, p, mu, rng);
}

TokenId mirostat_v2(std::vector<Candidate>& candidates, const MirostatParams& p, float& mu,
                    Pcg32& rng) {
  // The kept set is those of surprise <= mu and the most likely token: found in one pass,
  // then only they are sorted (not the whole vocabulary).
  // Surprise <= mu is probability >= 2^-mu: one exp2, not a log2 per token.
  const double floor = std::exp2(-static_cast<double>(mu));
  const Candidate top = *std::min_element(candidates.begin(), candidates.end(), more_likely);
  std::erase_if(candidates,
                [&](const Candidate& c) { return c.id != top.id && !(c.prob >= floor); });
  sort_most_likely(candidates);
  return draw_and_learn(candidates, p, mu, rng);
}

} // namespace pshard
