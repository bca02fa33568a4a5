#include "runtime/sampler/sampler.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

namespace pshard {
namespace {

// Higher logit first; equal logits by lower id so the order never depends on
// the sort algorithm.
bool more_likely(TokenId a_id, float a_logit, TokenId b_id, float b_logit) {
  return a_logit > b_logit || (a_logit == b_logit && a_id < b_id);
}

} // namespace

Status validate_sampler_params(const SamplerParams &p) {
  if (!std::isfinite(p.temperature))
    return invalid_argument("sampler temperature must be finite, got " +
                            std::to_string(p.temperature));
  if (p.top_k < 0)
    return invalid_argument("sampler top_k must be >= 0 (0 = off), got " + std::to_string(p.top_k));
  if (!(p.top_p > 0.0f && p.top_p <= 1.0f))
    return invalid_argument("sampler top_p must be in (0, 1] (1 = off), got " +
                            std::to_string(p.top_p));
  if (!(p.min_p >= 0.0f && p.min_p <= 1.0f))
    return invalid_argument("sampler min_p must be in [0, 1] (0 = off), got " +
                            std::to_string(p.min_p));
  if (!(std::isfinite(p.repeat_penalty) && p.repeat_penalty > 0.0f))
    return invalid_argument("sampler repeat_penalty must be finite and > 0 (1 = off), got " +
                            std::to_string(p.repeat_penalty));
  if (p.repeat_last_n < -1)
    return invalid_argument("sampler repeat_last_n must be >= -1 (0 = off, -1 = all), got " +
                            std::to_string(p.repeat_last_n));
  if (!std::isfinite(p.frequency_penalty))
    return invalid_argument("sampler frequency_penalty must be finite (0 = off)");
  if (!std::isfinite(p.presence_penalty))
    return invalid_argument("sampler presence_penalty must be finite (0 = off)");
  for (const LogitBias &b : p.logit_bias)
    if (b.token < 0 || std::isnan(b.bias) || b.bias == std::numeric_limits<float>::infinity())
      return invalid_argument("sampler logit_bias: token " + std::to_string(b.token) +
                              " bias " + std::to_string(b.bias) +
                              ": tokens must be >= 0 and biases finite or -inf (a ban)");
  return Status::ok_status();
}

Result<Sampler> Sampler::create(const SamplerParams &params) {
  PSHARD_RETURN_IF_ERROR(validate_sampler_params(params));
  return Sampler(params);
}

Sampler::Sampler(const SamplerParams &params) : params_(params), rng_(params.seed) {}

void Sampler::reset(uint64_t seed) {
  params_.seed = seed;
  rng_.reseed(seed);
}

TokenId Sampler::sample(std::span<const float> logits, std::span<const TokenId> history) {
  if (logits.empty())
    return kNoToken;
  fill_penalized(logits, history);
  if (!filter_)
    return sample_unfiltered();
  filter_status_ = Status::ok_status();
  TokenId next = params_.temperature <= 0.0f ? argmax() : kNoToken;
  // Greedy: the filter's whole set is needed only when the model's choice is refused.
  if (next == kNoToken || !filter_->allows(next)) {
    if (!apply_filter()) {
      filter_status_ = invalid_argument(
          "the output constraint allows no token here: the grammar wants text that this "
          "vocabulary cannot spell, or it cannot end and nothing may follow");
      return kNoToken;
    }
    next = sample_unfiltered();
  }
  filter_status_ = filter_->accept(next);
  return filter_status_.ok() ? next : kNoToken;
}

TokenId Sampler::sample_unfiltered() {
  if (params_.temperature <= 0.0f)
    return argmax();
  keep_top_k();
  const double total = compute_probabilities();
  return draw(total);
}

bool Sampler::apply_filter() {
  const std::span<const uint64_t> allowed = filter_->allowed();
  std::erase_if(candidates_, [&](const Candidate &c) { return !token_bit(allowed, c.id); });
  return !candidates_.empty();
}

void Sampler::fill_penalized(std::span<const float> logits, std::span<const TokenId> history) {
  candidates_.resize(logits.size());
  for (size_t i = 0; i < logits.size(); ++i) {
    // NaN would poison every comparison below; treat it as impossible.
    const float logit = std::isnan(logits[i]) ? -std::numeric_limits<float>::infinity() : logits[i];
    candidates_[i] = {static_cast<TokenId>(i), logit, 0.0};
  }
  for (const LogitBias &b : params_.logit_bias)
    if (static_cast<size_t>(b.token) < candidates_.size())
      candidates_[b.token].logit += b.bias;
  const bool penalties = params_.repeat_penalty != 1.0f || params_.frequency_penalty != 0.0f ||
                         params_.presence_penalty != 0.0f;
  if (!penalties || params_.repeat_last_n == 0 || history.empty())
    return;
  const size_t window = params_.repeat_last_n < 0
                            ? history.size()
                            : std::min(history.size(), static_cast<size_t>(params_.repeat_last_n));
  recent_.assign(history.end() - static_cast<std::ptrdiff_t>(window), history.end());
  std::sort(recent_.begin(), recent_.end());
  // Each distinct token once, with how often it occurs in the window.
  for (size_t i = 0; i < recent_.size();) {
    size_t j = i;
    while (j < recent_.size() && recent_[j] == recent_[i])
      ++j;
    const TokenId id = recent_[i];
    const auto count = static_cast<float>(j - i);
    i = j;
    if (id < 0 || static_cast<size_t>(id) >= candidates_.size())
      continue;
    float &logit = candidates_[id].logit;
    logit = logit > 0.0f ? logit / params_.repeat_penalty : logit * params_.repeat_penalty;
    logit -= count * params_.frequency_penalty + params_.presence_penalty;
  }
}

TokenId Sampler::argmax() const {
  if (candidates_.empty())
    return kNoToken;
  size_t best = 0;
  for (size_t i = 1; i < candidates_.size(); ++i)
    if (candidates_[i].logit > candidates_[best].logit)
      best = i; // strict: ties keep the lower id
  return candidates_[best].id;
}

void Sampler::keep_top_k() {
  auto order = [](const Candidate &a, const Candidate &b) {
    return more_likely(a.id, a.logit, b.id, b.logit);
  };
  const size_t k = static_cast<size_t>(params_.top_k);
  if (k > 0 && k < candidates_.size()) {
    std::partial_sort(candidates_.begin(), candidates_.begin() + static_cast<std::ptrdiff_t>(k),
                      candidates_.end(), order);
    candidates_.resize(k);
  } else {
    std::sort(candidates_.begin(), candidates_.end(), order);
  }
}

double Sampler::compute_probabilities() {
  const double max_logit = candidates_.front().logit;
  if (!std::isfinite(max_logit)) {
    // Every logit is -inf (or the top one is +inf): all mass on the first.
    candidates_.resize(1);
    candidates_[0].prob = 1.0;
    return 1.0;
  }
  const double inv_temperature = 1.0 / params_.temperature;
  double sum = 0.0;
  for (Candidate &c : candidates_) {
    c.prob = std::exp((c.logit - max_logit) * inv_temperature);
    sum += c.prob;
  }
  for (Candidate &c : candidates_)
    c.prob /= sum;

  // top-p: the smallest prefix (most likely first) whose mass reaches top_p.
  if (params_.top_p < 1.0f) {
    double cumulative = 0.0;
    size_t keep = candidates_.size();
    for (size_t i = 0; i < candidates_.size(); ++i) {
      cumulative += candidates_[i].prob;
      if (cumulative >= params_.top_p) {
        keep = i + 1;
        break;
      }
    }
    candidates_.resize(keep);
  }
  // min-p: relative to the most likely token, which is always kept.
  if (params_.min_p > 0.0f) {
    const double threshold = params_.min_p * candidates_.front().prob;
    size_t keep = 1;
    while (keep < candidates_.size() && candidates_[keep].prob >= threshold)
      ++keep; // sorted, so the first one below the threshold ends the set
    candidates_.resize(keep);
  }
  double total = 0.0;
  for (const Candidate &c : candidates_)
    total += c.prob;
  return total;
}

TokenId Sampler::draw(double total) {
  // Scaling the draw by the kept mass renormalises without another pass.
  const double target = static_cast<double>(rng_.next_float()) * total;
  double cumulative = 0.0;
  for (const Candidate &c : candidates_) {
    cumulative += c.prob;
    if (target < cumulative)
      return c.id;
  }
  return candidates_.back().id; // rounding left target just past the end
}

} // namespace pshard
