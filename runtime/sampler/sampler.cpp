#include "runtime/sampler/sampler.h"

#include "runtime/sampler/sampler_stages.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

namespace pshard {

namespace {

// The stages that move logits by the history (runtime/sampler/sampler.h's penalties).
bool is_penalty(SamplerStage stage) {
  return stage == SamplerStage::kPenalties || stage == SamplerStage::kDry;
}

// min-p's cut on unsorted candidates (below min_p x the top probability), then the rest
// sorted most likely first.
void sort_what_min_p_keeps(std::vector<Candidate>& candidates, float min_p) {
  double top = 0.0;
  for (const Candidate& c : candidates)
    top = std::max(top, c.prob);
  const double threshold = min_p * top;
  std::erase_if(candidates, [&](const Candidate& c) { return !(c.prob >= threshold); });
  sort_most_likely(candidates);
}

} // namespace

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
  history_ = history;
  last_greedy_ = params_.temperature <= 0.0f;
  fill_penalized(logits);
  if (!filter_)
    return sample_unfiltered(true);
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
    next = sample_unfiltered(false);
  }
  filter_status_ = filter_->accept(next);
  return filter_status_.ok() ? next : kNoToken;
}

TokenId Sampler::sample_unfiltered(bool whole) {
  if (params_.temperature <= 0.0f)
    return argmax();
  return params_.mirostat != 0 ? sample_mirostat(whole) : run_chain(whole);
}

TokenId Sampler::sample_mirostat(bool whole) {
  for (size_t i = chain_start_; i < params_.order.size(); ++i)
    if (is_penalty(params_.order[i]))
      apply_penalty_stage(params_.order[i], whole);
  // Mirostat does its own truncation, over everything.
  const size_t n_vocab = candidates_.size();
  softmax(candidates_, step_temperature());
  const TokenId t =
      params_.mirostat == 1
          ? mirostat_v1(candidates_, n_vocab, params_.mirostat_params, mirostat_mu_, rng_)
          : mirostat_v2(candidates_, params_.mirostat_params, mirostat_mu_, rng_);
  last_total_ = total_mass(candidates_); // renormalised and drawn from
  return t;
}

TokenId Sampler::run_chain(bool whole) {
  ChainState st;
  st.identity = whole;
  for (size_t i = chain_start_; i < params_.order.size(); ++i) {
    const SamplerStage stage = params_.order[i];
    if (!stage_on(stage))
      continue;
    switch (stage) {
    case SamplerStage::kPenalties:
    case SamplerStage::kDry:
      apply_penalty_stage(stage, st.identity);
      st.probs = st.normalized = st.sorted = false; // new logits, maybe in another order
      break;
    case SamplerStage::kTopNSigma:
      keep_top_n_sigma(candidates_, params_.top_n_sigma);
      st.cut(st.sorted, false);
      break;
    case SamplerStage::kTopK:
      if (keep_top_k())
        st.cut(true, false);
      break;
    case SamplerStage::kTemperature:
      st.temperature = step_temperature();
      st.probs = st.normalized = false;
      break;
    case SamplerStage::kTypicalP:
      typical_stage(st);
      break;
    case SamplerStage::kTopP:
      top_p_stage(st, min_p_follows(i));
      break;
    case SamplerStage::kMinP:
      min_p_stage(st);
      break;
    case SamplerStage::kXtc:
      xtc_stage(st);
      break;
    }
  }
  ensure_probs(st);
  // With no cut, every token may be drawn, and finding which needs no whole sort.
  const double total = last_total_ = total_mass(candidates_);
  return st.sorted ? draw(candidates_, total, rng_)
                   : draw_in_sorted_order(candidates_, total, rng_);
}

double Sampler::drawn_distribution(TokenId chosen, size_t n,
                                   std::vector<std::pair<TokenId, double>>& top) {
  top.clear();
  if (last_greedy_) {
    if (n > 0)
      top.emplace_back(chosen, 1.0);
    return 1.0;
  }
  // One temperature's softmax of the candidates left: the most likely have the highest
  // logits.
  n = std::min(n, candidates_.size());
  sort_most_likely_head(candidates_, n);
  for (size_t i = 0; i < n; ++i)
    top.emplace_back(candidates_[i].id, candidates_[i].prob / last_total_);
  for (const Candidate& c : candidates_)
    if (c.id == chosen)
      return c.prob / last_total_;
  return 0.0;
}

bool Sampler::stage_on(SamplerStage stage) const {
  switch (stage) {
  case SamplerStage::kPenalties:
    return params_.repeat_penalty != 1.0f || params_.frequency_penalty != 0.0f ||
           params_.presence_penalty != 0.0f;
  case SamplerStage::kDry:
    return params_.dry.multiplier != 0.0f;
  case SamplerStage::kTopNSigma:
    return params_.top_n_sigma > 0.0f;
  case SamplerStage::kTopK:
    return params_.top_k > 0;
  case SamplerStage::kTemperature:
    return true;
  case SamplerStage::kTypicalP:
    return params_.typical_p < 1.0f;
  case SamplerStage::kTopP:
    return params_.top_p < 1.0f;
  case SamplerStage::kMinP:
    return params_.min_p > 0.0f;
  case SamplerStage::kXtc:
    return params_.xtc_probability > 0.0f;
  }
  return false;
}

bool Sampler::min_p_follows(size_t i) const {
  for (size_t j = i + 1; j < params_.order.size(); ++j)
    if (stage_on(params_.order[j]))
      return params_.order[j] == SamplerStage::kMinP;
  return false;
}

void Sampler::ensure_probs(ChainState& st) {
  if (st.probs)
    return;
  const size_t before = candidates_.size();
  softmax(candidates_, st.temperature);
  st.probs = st.normalized = true;
  if (candidates_.size() != before) // a non-finite top logit leaves it alone
    st.cut(true, true);
}

void Sampler::typical_stage(ChainState& st) {
  ensure_probs(st);
  if (!st.normalized)
    renormalize(candidates_);
  keep_typical(candidates_, params_.typical_p);
  st.cut(true, true);
}

void Sampler::top_p_stage(ChainState& st, bool min_p_next) {
  ensure_probs(st);
  const double target = st.normalized ? params_.top_p : params_.top_p * total_mass(candidates_);
  if (!st.sorted && min_p_next) {
    // What min-p drops goes first: the sorted survivors are a prefix of the sorted whole,
    // so top-p's cut among them is the one it makes in the whole.
    sort_what_min_p_keeps(candidates_, params_.min_p);
  } else if (!st.sorted) {
    candidates_.resize(sort_head_holding(
        candidates_, more_likely, [](const Candidate& c) { return c.prob; }, target));
  }
  keep_top_p(candidates_, target);
  st.cut(true, false);
}

void Sampler::min_p_stage(ChainState& st) {
  ensure_probs(st);
  if (!st.sorted)
    sort_what_min_p_keeps(candidates_, params_.min_p);
  keep_min_p(candidates_, params_.min_p);
  st.cut(true, false);
}

void Sampler::xtc_stage(ChainState& st) {
  ensure_probs(st);
  if (!st.sorted) {
    sort_most_likely(candidates_);
    st.cut(true, st.normalized);
  }
  // XTC's coin is drawn only while two tokens are left, so with it off every other draw
  // is as before.
  if (candidates_.size() < 2 || !(rng_.next_float() < params_.xtc_probability))
    return;
  renormalize(candidates_);
  exclude_top_choices(candidates_, params_.xtc_threshold);
  st.normalized = true;
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

void Sampler::fill_penalized(std::span<const float> logits) {
  candidates_.resize(logits.size());
  for (size_t i = 0; i < logits.size(); ++i) {
    // NaN would poison every comparison below; treat it as impossible.
    const float logit = std::isnan(logits[i]) ? -std::numeric_limits<float>::infinity() : logits[i];
    candidates_[i] = {static_cast<TokenId>(i), logit, 0.0};
  }
  for (const LogitBias &b : params_.logit_bias)
    if (static_cast<size_t>(b.token) < candidates_.size())
      candidates_[b.token].logit += b.bias;
  // Greedy runs no other stage, so every penalty applies whatever its place.
  const bool greedy = params_.temperature <= 0.0f;
  chain_start_ = 0;
  for (SamplerStage stage : params_.order) {
    if (!is_penalty(stage) && !greedy)
      break;
    if (is_penalty(stage))
      apply_penalty_stage(stage, true);
    ++chain_start_;
  }
}

void Sampler::apply_penalty_stage(SamplerStage stage, bool by_id) {
  if (stage == SamplerStage::kDry)
    dry_.apply(params_.dry, params_.dry_breakers.get(), history_, candidates_, by_id,
               params_.dry_spans.get());
  else
    apply_repetition_penalties(by_id);
}

void Sampler::apply_repetition_penalties(bool by_id) {
  if (!stage_on(SamplerStage::kPenalties) || params_.repeat_last_n == 0 || history_.empty())
    return;
  const size_t window = params_.repeat_last_n < 0
                            ? history_.size()
                            : std::min(history_.size(), static_cast<size_t>(params_.repeat_last_n));
  recent_.assign(history_.end() - static_cast<std::ptrdiff_t>(window), history_.end());
  std::sort(recent_.begin(), recent_.end());
  auto penalize = [&](float& logit, size_t count) {
    logit = logit > 0.0f ? logit / params_.repeat_penalty : logit * params_.repeat_penalty;
    logit -= static_cast<float>(count) * params_.frequency_penalty + params_.presence_penalty;
  };
  if (!by_id) {
    for (Candidate& c : candidates_) {
      const auto [lo, hi] = std::equal_range(recent_.begin(), recent_.end(), c.id);
      if (lo != hi)
        penalize(c.logit, static_cast<size_t>(hi - lo));
    }
    return;
  }
  // Each distinct token once, with how often it occurs in the window.
  for (size_t i = 0; i < recent_.size();) {
    size_t j = i;
    while (j < recent_.size() && recent_[j] == recent_[i])
      ++j;
    const TokenId id = recent_[i];
    const size_t count = j - i;
    i = j;
    if (id >= 0 && static_cast<size_t>(id) < candidates_.size())
      penalize(candidates_[id].logit, count);
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

} // namespace pshard
