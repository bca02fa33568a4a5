#include "runtime/generate/draft_policy.h"

#include <algorithm>
#include <cmath>

namespace pshard {
namespace {

// Old observations fade: a text drafts well in one stretch (a quoted passage) and
// badly in the next.
constexpr double kDecay = 0.9;
// A new pass time moves the average by this much.
constexpr double kTimeWeight = 0.25;

} // namespace

DraftPolicy::DraftPolicy(int64_t draft_max)
    : draft_max_(std::max<int64_t>(draft_max, 0)), ms_(static_cast<size_t>(draft_max_) + 2, 0.0) {}

double DraftPolicy::acceptance() const {
  // Laplace's rule: one success and one failure before any evidence.
  return (kept_ + 1.0) / (tried_ + 2.0);
}

double DraftPolicy::pass_ms(int64_t n_tokens) const {
  for (auto n = static_cast<size_t>(std::min<int64_t>(n_tokens, draft_max_ + 1)); n >= 1; --n)
    if (ms_[n] > 0)
      return ms_[n];
  return -1;
}

double DraftPolicy::expected_rate(int64_t k) const {
  const double a = acceptance();
  const double tokens = (1.0 - std::pow(a, static_cast<double>(k + 1))) / (1.0 - a);
  const double ms = pass_ms(k + 1);
  return ms > 0 ? tokens / ms : tokens;
}

int64_t DraftPolicy::choose(int64_t available) const {
  const int64_t most = std::clamp<int64_t>(available, 0, draft_max_);
  int64_t best = 0;
  for (int64_t k = 1; k <= most; ++k)
    if (expected_rate(k) > expected_rate(best))
      best = k;
  return best;
}

void DraftPolicy::observe_pass(int64_t n_tokens, double ms) {
  if (n_tokens < 1 || n_tokens > draft_max_ + 1 || !(ms > 0))
    return;
  double& m = ms_[static_cast<size_t>(n_tokens)];
  m = m > 0 ? (1 - kTimeWeight) * m + kTimeWeight * ms : ms;
}

void DraftPolicy::observe_draft(int64_t accepted, bool rejected) {
  accepted = std::max<int64_t>(accepted, 0);
  if (accepted == 0 && !rejected)
    return;
  tried_ = kDecay * tried_ + static_cast<double>(accepted + (rejected ? 1 : 0));
  kept_ = kDecay * kept_ + static_cast<double>(accepted);
}

} // namespace pshard
