#include "runtime/sampler/sampler.h"

#include "runtime/sampler/sampler_stages.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

namespace pshard {

namespace {

// The checks of llama.cpp's other samplers (typical, top-n-sigma, XTC, dynamic
// temperature, Mirostat, DRY).
Status validate_extra_samplers(const SamplerParams& p) {
  auto in_unit = [](float v) { return v >= 0.0f && v <= 1.0f; };
  auto finite_at_least = [](float v, float low) { return std::isfinite(v) && v >= low; };
  if (!(p.typical_p > 0.0f && p.typical_p <= 1.0f))
    return invalid_argument("sampler typical_p must be in (0, 1] (1 = off), got " +
                            std::to_string(p.typical_p));
  if (!std::isfinite(p.top_n_sigma))
    return invalid_argument("sampler top_n_sigma must be finite (<= 0 = off)");
  if (!in_unit(p.xtc_probability) || !in_unit(p.xtc_threshold))
    return invalid_argument("sampler xtc_probability and xtc_threshold must be in [0, 1], got " +
                            std::to_string(p.xtc_probability) + " and " +
                            std::to_string(p.xtc_threshold));
  if (!finite_at_least(p.dynatemp_range, 0.0f))
    return invalid_argument("sampler dynatemp_range must be finite and >= 0 (0 = off), got " +
                            std::to_string(p.dynatemp_range));
  if (!(std::isfinite(p.dynatemp_exponent) && p.dynatemp_exponent > 0.0f))
    return invalid_argument("sampler dynatemp_exponent must be finite and > 0, got " +
                            std::to_string(p.dynatemp_exponent));
  if (p.mirostat < 0 || p.mirostat > 2)
    return invalid_argument("sampler mirostat must be 0 (off), 1 or 2 (the version), got " +
                            std::to_string(p.mirostat));
  if (!finite_at_least(p.mirostat_params.tau, 0.0f) ||
      !finite_at_least(p.mirostat_params.eta, 0.0f))
    return invalid_argument("sampler mirostat_tau and mirostat_eta must be finite and >= 0");
  if (!finite_at_least(p.dry.multiplier, 0.0f))
    return invalid_argument("sampler dry_multiplier must be finite and >= 0 (0 = off), got " +
                            std::to_string(p.dry.multiplier));
  if (!finite_at_least(p.dry.base, 1.0f))
    return invalid_argument("sampler dry_base must be finite and >= 1, got " +
                            std::to_string(p.dry.base));
  if (p.dry.allowed_length < 1)
    return invalid_argument("sampler dry_allowed_length must be >= 1, got " +
                            std::to_string(p.dry.allowed_length));
  if (p.dry.penalty_last_n < -1)
    return invalid_argument("sampler dry_penalty_last_n must be >= -1 (0 = off, -1 = all), got " +
                            std::to_string(p.dry.penalty_last_n));
  return Status::ok_status();
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
  return validate_extra_samplers(p);
}

Result<Sampler> Sampler::create(const SamplerParams &params) {
  PSHARD_RETURN_IF_ERROR(validate_sampler_params(params));
  return Sampler(params);
}

Sampler::Sampler(const SamplerParams& params)
    : params_(params), rng_(params.seed), mirostat_mu_(2.0f * params.mirostat_params.tau) {}

void Sampler::reset(uint64_t seed) {
  params_.seed = seed;
  rng_.reseed(seed);
  mirostat_mu_ = 2.0f * params_.mirostat_params.tau;
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
  if (params_.mirostat != 0) { // Mirostat does its own truncation, over everything
    const size_t n_vocab = candidates_.size();
    softmax(candidates_, step_temperature());
    return params_.mirostat == 1
               ? mirostat_v1(candidates_, n_vocab, params_.mirostat_params, mirostat_mu_, rng_)
               : mirostat_v2(candidates_, params_.mirostat_params, mirostat_mu_, rng_);
  }
  if (params_.top_n_sigma > 0.0f)
    keep_top_n_sigma(candidates_, params_.top_n_sigma);
  const bool sorted = keep_top_k();
  if (!sorted && params_.typical_p >= 1.0f && params_.top_p >= 1.0f && params_.min_p <= 0.0f &&
      params_.xtc_probability == 0.0f) {
    // No cut at all: every token may be drawn, and finding which needs no whole sort.
    softmax(candidates_, step_temperature());
    return draw_in_sorted_order(candidates_, total_mass(candidates_), rng_);
  }
  const double total = compute_probabilities(sorted);
  return draw(candidates_, total, rng_);
}

double Sampler::step_temperature() const {
  return params_.dynatemp_range > 0.0f
             ? dynamic_temperature(candidates_, params_.temperature, params_.dynatemp_range,
                                   params_.dynatemp_exponent)
             : params_.temperature;
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
  apply_repetition_penalties(history);
  dry_.apply(params_.dry, params_.dry_breakers.get(), history, candidates_);
}

void Sampler::apply_repetition_penalties(std::span<const TokenId> history) {
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

bool Sampler::keep_top_k() {
  const size_t k = static_cast<size_t>(params_.top_k);
  if (k == 0 || k >= candidates_.size())
    return false;
  sort_most_likely_head(candidates_, k);
  candidates_.resize(k);
  return true;
}

void Sampler::sort_what_the_cuts_keep() {
  // Typical needs every probability; with no cut but XTC, XTC needs the most likely first.
  if (params_.typical_p < 1.0f || (params_.top_p >= 1.0f && params_.min_p <= 0.0f)) {
    sort_most_likely(candidates_);
    return;
  }
  if (params_.min_p > 0.0f) {
    // What min-p drops goes first: the sorted survivors are a prefix of the sorted whole,
    // so top-p's cut among them is the one it makes in the whole.
    double top = 0.0;
    for (const Candidate& c : candidates_)
      top = std::max(top, c.prob);
    const double threshold = params_.min_p * top;
    std::erase_if(candidates_, [&](const Candidate& c) { return !(c.prob >= threshold); });
    sort_most_likely(candidates_);
    return;
  }
  // top-p alone: ever longer sorted heads, until one holds the mass.
  for (size_t m = 64;; m *= 4) {
    if (m >= candidates_.size()) {
      sort_most_likely(candidates_);
      return;
    }
    sort_most_likely_head(candidates_, m);
    if (total_mass(candidates_.begin(), candidates_.begin() + static_cast<std::ptrdiff_t>(m)) >=
        params_.top_p) {
      candidates_.resize(m);
      return;
    }
  }
}

double Sampler::compute_probabilities(bool sorted) {
  softmax(candidates_, step_temperature());
  if (!sorted)
    sort_what_the_cuts_keep();
  if (params_.typical_p < 1.0f)
    keep_typical(candidates_, params_.typical_p);
  if (params_.top_p < 1.0f)
    keep_top_p(candidates_, params_.top_p);
  if (params_.min_p > 0.0f)
    keep_min_p(candidates_, params_.min_p);
  // XTC's coin is drawn only while it is on and two tokens are left, so with it off every
  // other draw is as before.
  if (params_.xtc_probability > 0.0f && candidates_.size() >= 2 &&
      rng_.next_float() < params_.xtc_probability) {
    renormalize(candidates_);
    exclude_top_choices(candidates_, params_.xtc_threshold);
  }
  return total_mass(candidates_);
}

} // namespace pshard
