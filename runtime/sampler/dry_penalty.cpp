#include "runtime/sampler/dry_penalty.h"

#include <algorithm>
#include <cmath>

namespace pshard {
namespace {

bool is_breaker(const std::vector<bool>* breakers, TokenId t) {
  return breakers && t >= 0 && static_cast<size_t>(t) < breakers->size() && (*breakers)[t];
}

// z[k]: the length of the longest common prefix of s and s[k..] (Gusfield's Z-function),
// so for the reversed text, how far the text before a position agrees with its end.
void z_function(std::span<const TokenId> s, std::vector<int32_t>& z) {
  const auto n = static_cast<int32_t>(s.size());
  z.assign(s.size(), 0);
  if (n == 0)
    return;
  z[0] = n;
  for (int32_t k = 1, left = 0, right = 0; k < n; ++k) {
    if (k < right)
      z[k] = std::min(right - k, z[k - left]);
    while (k + z[k] < n && s[z[k]] == s[k + z[k]])
      ++z[k];
    if (k + z[k] > right) {
      left = k;
      right = k + z[k];
    }
  }
}

// Where a breaker that begins inside h[j] ends: the last of the tokens after it that
// spell the rest of one (-1: none does, or the text ends before the rest is complete).
int32_t span_end(const DrySpans& spans, std::span<const TokenId> h, int32_t j) {
  auto it = std::lower_bound(spans.starts.begin(), spans.starts.end(), h[j],
                             [](const auto& s, TokenId id) { return s.first < id; });
  int32_t end = -1;
  for (; it != spans.starts.end() && it->first == h[j]; ++it) {
    const std::string& rest = it->second;
    std::string text;
    for (auto k = static_cast<size_t>(j) + 1; k < h.size(); ++k) {
      text += spans.piece(h[k]);
      if (text.size() >= rest.size()) {
        if (text.compare(0, rest.size(), rest) == 0)
          end = std::max(end, static_cast<int32_t>(k));
        break;
      }
      if (rest.compare(0, text.size(), text) != 0)
        break;
    }
  }
  return end;
}

} // namespace

const std::vector<std::pair<TokenId, int32_t>>&
DryPenalty::repeats(const DryParams& p, const std::vector<bool>* breakers,
                    std::span<const TokenId> history, const DrySpans* spans) {
  hits_.clear();
  if (p.penalty_last_n == 0 || history.size() < 2)
    return hits_;
  const size_t window = p.penalty_last_n < 0
                            ? history.size()
                            : std::min(history.size(), static_cast<size_t>(p.penalty_last_n));
  const std::span<const TokenId> h = history.last(window);
  const auto n = static_cast<int32_t>(h.size());
  // A repeat ends at the text's end and cannot reach back past its last breaker: one a
  // token holds, or one that begins in a token and ends in a later one.
  int32_t cap = 0;
  while (cap < n && !is_breaker(breakers, h[n - 1 - cap])) {
    if (spans && !spans->starts.empty()) {
      if (const int32_t end = span_end(*spans, h, n - 1 - cap); end >= 0) {
        cap = n - 1 - end;
        break;
      }
    }
    ++cap;
  }
  if (cap < p.allowed_length)
    return hits_;
  reversed_.assign(h.rbegin(), h.rend());
  z_function(reversed_, z_);
  // The token at i follows the text h[..i); in the reversed text that text's end starts at
  // n - i, so z_[n - i] is how many of its last tokens equal the text's last ones.
  for (int32_t i = 1; i < n; ++i) {
    const int32_t length = std::min(z_[n - i], cap);
    if (length >= p.allowed_length)
      hits_.emplace_back(h[i], length);
  }
  // Each token once, with its longest repeat.
  std::sort(hits_.begin(), hits_.end(), [](const auto& a, const auto& b) {
    return a.first < b.first || (a.first == b.first && a.second > b.second);
  });
  hits_.erase(std::unique(hits_.begin(), hits_.end(),
                          [](const auto& a, const auto& b) { return a.first == b.first; }),
              hits_.end());
  return hits_;
}

void DryPenalty::apply(const DryParams& p, const std::vector<bool>* breakers,
                       std::span<const TokenId> history, std::span<Candidate> candidates,
                       bool by_id, const DrySpans* spans) {
  if (p.multiplier == 0.0f)
    return;
  const auto& hits = repeats(p, breakers, history, spans);
  auto penalize = [&](Candidate& c, int32_t length) {
    const double penalty = static_cast<double>(p.multiplier) *
                           std::pow(static_cast<double>(p.base), length - p.allowed_length);
    c.logit -= static_cast<float>(std::min(penalty, kMaxDryPenalty));
  };
  if (by_id) {
    for (const auto& [token, length] : hits)
      if (token >= 0 && static_cast<size_t>(token) < candidates.size())
        penalize(candidates[token], length);
    return;
  }
  if (hits.empty())
    return;
  for (Candidate& c : candidates) {
    const auto it = std::lower_bound(hits.begin(), hits.end(), c.id,
                                     [](const auto& hit, TokenId id) { return hit.first < id; });
    if (it != hits.end() && it->first == c.id)
      penalize(c, it->second);
  }
}

} // namespace pshard
