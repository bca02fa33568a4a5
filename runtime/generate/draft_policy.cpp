#include "runtime/generate/draft_policy.h"

#include <algorithm>
#include <cmath>

namespace pshard {
namespace {

// Old observations fade: a text drafts well in one stretch (a quoted passage) and
// badly in the next.
constexpr double kDecay = 0.95;
// A new pass time moves the average by this much.
constexpr double kTimeWeight = 0.25;
// Checking drafts must promise this much over plain decoding: pass times jitter, and a
// gain inside the jitter is a loss as often as not.
constexpr double kMinGain = 1.05;

} // namespace

DraftPolicy::DraftPolicy(int64_t draft_max)
    : draft_max_(std::max<int64_t>(draft_max, 0)),
      ratio_(static_cast<size_t>(draft_max_) + 2, 0.0) {}

// Laplace's rule: one success and one failure before any evidence.
double DraftPolicy::Odds::estimate() const { return (kept + 1.0) / (tried + 2.0); }

void DraftPolicy::Odds::observe(double trials, double successes) {
  tried = kDecay * tried + trials;
  kept = kDecay * kept + successes;
}

double DraftPolicy::acceptance() const { return first_.estimate(); }
double DraftPolicy::later_acceptance() const { return later_.estimate(); }

double DraftPolicy::pass_ms(int64_t n_tokens) const {
  if (one_ms_ <= 0)
    return -1;
  for (auto n = static_cast<size_t>(std::min<int64_t>(n_tokens, draft_max_ + 1)); n >= 2; --n)
    if (ratio_[n] > 0)
      return ratio_[n] * one_ms_;
  return one_ms_;
}

double DraftPolicy::expected_rate(int64_t k) const {
  // The sampled token, then the first drafted one with its odds, then each later one
  // with theirs, each only if all before it were kept.
  const double a0 = acceptance(), a = later_acceptance();
  const double tokens =
      k == 0 ? 1.0 : 1.0 + a0 * (1.0 - std::pow(a, static_cast<double>(k))) / (1.0 - a);
  const double ms = pass_ms(k + 1);
  return ms > 0 ? tokens / (ms + static_cast<double>(k) * draft_token_ms_) : tokens;
}

int64_t DraftPolicy::choose(int64_t available) const {
  // Drafted passes ran before any one-token pass: their times mean nothing until a plain
  // pass prices them (a draft model, which always has a draft, would else never get one).
  if (one_ms_ <= 0 && !untimed_.empty())
    return 0;
  const int64_t most = std::clamp<int64_t>(available, 0, draft_max_);
  const double plain = expected_rate(0);
  int64_t best = 0;
  for (int64_t k = 1; k <= most; ++k)
    if (expected_rate(k) > std::max(expected_rate(best), kMinGain * plain))
      best = k;
  return best;
}

void DraftPolicy::observe_pass(int64_t n_tokens, double ms) {
  if (n_tokens < 1 || n_tokens > draft_max_ + 1 || !(ms > 0))
    return;
  auto average = [](double& m, double x) {
    m = m > 0 ? (1 - kTimeWeight) * m + kTimeWeight * x : x;
  };
  if (n_tokens == 1) {
    average(one_ms_, ms);
    for (auto& [n, raw] : untimed_) // passes timed before any one-token pass
      average(ratio_[static_cast<size_t>(n)], raw / one_ms_);
    untimed_.clear();
  } else if (one_ms_ > 0) {
    average(ratio_[static_cast<size_t>(n_tokens)], ms / one_ms_);
  } else {
    untimed_.emplace_back(n_tokens, ms);
  }
}

void DraftPolicy::observe_drafting(int64_t n_tokens, double ms) {
  if (n_tokens < 1 || !(ms >= 0))
    return;
  const double per_token = ms / static_cast<double>(n_tokens);
  draft_token_ms_ = draft_token_ms_ > 0
                        ? (1 - kTimeWeight) * draft_token_ms_ + kTimeWeight * per_token
                        : per_token;
}

void DraftPolicy::observe_draft(int64_t accepted, bool rejected) {
  accepted = std::max<int64_t>(accepted, 0);
  if (accepted == 0 && !rejected)
    return;
  first_.observe(1, accepted > 0 ? 1 : 0);
  if (accepted > 0) // the positions after the first, each tried once the one before held
    later_.observe(static_cast<double>(accepted - 1 + (rejected ? 1 : 0)),
                   static_cast<double>(accepted - 1));
}

} // namespace pshard
