#include "runtime/sampler/sampler_stages.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <utility>
#include <vector>

namespace pshard {

void keep_top_n_sigma(std::vector<Candidate>& candidates, float n) {
  double max_logit = -INFINITY, sum = 0.0;
  size_t finite = 0;
  for (const Candidate& c : candidates)
    if (std::isfinite(c.logit)) {
      max_logit = std::max<double>(max_logit, c.logit);
      sum += c.logit;
      ++finite;
    }
  if (finite < 2)
    return;
  const double mean = sum / static_cast<double>(finite);
  double squares = 0.0;
  for (const Candidate& c : candidates)
    if (std::isfinite(c.logit))
      squares += (c.logit - mean) * (c.logit - mean);
  const double sigma = std::sqrt(squares / static_cast<double>(finite));
  const double threshold = max_logit - static_cast<double>(n) * sigma;
  std::erase_if(candidates, [&](const Candidate& c) { return !(c.logit >= threshold); });
}

double dynamic_temperature(std::span<const Candidate> candidates, float temperature, float range,
                           float exponent) {
  if (candidates.size() < 2)
    return temperature;
  // The entropy of the softmax at temperature 1 in one pass, with no copy: for
  // w = exp(l - max), H = log(sum w) - sum(w (l - max)) / sum w.
  double max_logit = -INFINITY;
  for (const Candidate& c : candidates)
    max_logit = std::max<double>(max_logit, c.logit);
  double normalized = 0.0; // a non-finite top logit: a certain choice
  if (std::isfinite(max_logit)) {
    double sum = 0.0, weighted = 0.0;
    for (const Candidate& c : candidates)
      if (std::isfinite(c.logit)) {
        const double l = c.logit - max_logit, w = std::exp(l);
        sum += w;
        weighted += w * l;
      }
    normalized =
        (std::log(sum) - weighted / sum) / std::log(static_cast<double>(candidates.size()));
  }
  const double low = std::max(0.0, static_cast<double>(temperature) - range);
  const double high = static_cast<double>(temperature) + range;
  const double t = low + (high - low) * std::pow(std::clamp(normalized, 0.0, 1.0), exponent);
  return std::max(t, 1e-4);
}

void softmax(std::vector<Candidate>& candidates, double temperature) {
  const auto top = std::min_element(candidates.begin(), candidates.end(), more_likely);
  const double max_logit = top->logit;
  if (!std::isfinite(max_logit)) {
    // Every logit is -inf (or the top one is +inf): all mass on the most likely.
    candidates = {*top};
    candidates[0].prob = 1.0;
    return;
  }
  const double inv_temperature = 1.0 / temperature;
  double sum = 0.0;
  for (Candidate& c : candidates) {
    c.prob = std::exp((c.logit - max_logit) * inv_temperature);
    sum += c.prob;
  }
  for (Candidate& c : candidates)
    c.prob /= sum;
}

void renormalize(std::vector<Candidate>& candidates) {
  const double total = total_mass(candidates);
  if (total > 0.0)
    for (Candidate& c : candidates)
      c.prob /= total;
}

void keep_top_p(std::vector<Candidate>& candidates, double p) {
  double cumulative = 0.0;
  for (size_t i = 0; i < candidates.size(); ++i) {
    cumulative += candidates[i].prob;
    if (cumulative >= p) {
      candidates.resize(i + 1);
      return;
    }
  }
}

void keep_min_p(std::vector<Candidate>& candidates, float p) {
  // Relative to the most likely token, which is always kept.
  const double threshold = p * candidates.front().prob;
  size_t keep = 1;
  while (keep < candidates.size() && candidates[keep].prob >= threshold)
    ++keep; // sorted, so the first one below the threshold ends the set
  candidates.resize(keep);
}

void keep_typical(std::vector<Candidate>& candidates, float p) {
  // Each token's distance from the entropy, computed once from one log, its surprise,
  // which also gives the entropy (in nats, summed in the candidates' order): a comparison
  // that took two logs made sorting a 150K vocabulary cost 38 ms. Then only the closest
  // are sorted, as top-p's are.
  thread_local std::vector<std::pair<double, uint32_t>> by_distance;
  by_distance.clear();
  double h = 0.0;
  for (size_t i = 0; i < candidates.size(); ++i) {
    const double prob = candidates[i].prob;
    const double surprise = prob > 0.0 ? -std::log(prob) : INFINITY;
    if (prob > 0.0)
      h += prob * surprise;
    by_distance.emplace_back(surprise, static_cast<uint32_t>(i));
  }
  for (auto& [distance, i] : by_distance)
    distance = std::isinf(distance) ? INFINITY : std::abs(distance - h);
  // Closest to the entropy first; ties by the usual order, so the result never depends
  // on the sort algorithm.
  auto closer = [&](const std::pair<double, uint32_t>& a, const std::pair<double, uint32_t>& b) {
    return a.first < b.first ||
           (a.first == b.first && more_likely(candidates[a.second], candidates[b.second]));
  };
  const size_t keep = sort_head_holding(
      by_distance, closer, [&](const auto& d) { return candidates[d.second].prob; }, p);
  std::vector<Candidate> kept;
  kept.reserve(keep);
  for (size_t i = 0; i < keep; ++i)
    kept.push_back(candidates[by_distance[i].second]);
  candidates = std::move(kept);
  sort_most_likely(candidates);
  renormalize(candidates);
}

void exclude_top_choices(std::vector<Candidate>& candidates, float threshold) {
  size_t above = 0;
  while (above < candidates.size() && candidates[above].prob >= threshold)
    ++above;
  if (above < 2)
    return;
  candidates.erase(candidates.begin(), candidates.begin() + static_cast<std::ptrdiff_t>(above - 1));
  renormalize(candidates);
}

TokenId draw(std::span<const Candidate> candidates, double total, Pcg32& rng) {
  const double target = static_cast<double>(rng.next_float()) * total;
  double cumulative = 0.0;
  for (const Candidate& c : candidates) {
    cumulative += c.prob;
    if (target < cumulative)
      return c.id;
  }
  return candidates.back().id; // rounding left target just past the end
}

TokenId draw_in_sorted_order(std::vector<Candidate>& candidates, double total, Pcg32& rng) {
  double target = static_cast<double>(rng.next_float()) * total; // as draw() takes it
  auto lo = candidates.begin(), hi = candidates.end();
  while (hi - lo > 32) {
    // The median of three as pivot; the part more likely than it comes first.
    const Candidate a = *lo, b = *(lo + (hi - lo) / 2), c = *(hi - 1);
    const Candidate pivot = more_likely(a, b) ? (more_likely(b, c)   ? b
                                                 : more_likely(a, c) ? c
                                                                     : a)
                                              : (more_likely(a, c)   ? a
                                                 : more_likely(b, c) ? c
                                                                     : b);
    const auto mid =
        std::partition(lo, hi, [&](const Candidate& x) { return more_likely(x, pivot); });
    if (mid == lo) { // the pivot is the most likely left: it comes next in the sorted order
      std::iter_swap(lo,
                     std::find_if(lo, hi, [&](const Candidate& x) { return x.id == pivot.id; }));
      if (target < lo->prob)
        return lo->id;
      target -= lo->prob;
      ++lo;
      continue;
    }
    const double mass = total_mass(lo, mid);
    if (target < mass) {
      hi = mid;
    } else {
      target -= mass;
      lo = mid;
    }
  }
  std::sort(lo, hi, more_likely);
  double cumulative = 0.0;
  for (auto it = lo; it != hi; ++it) {
    cumulative += it->prob;
    if (target < cumulative)
      return it->id;
  }
  // Rounding left the target just past the part: the next token in the sorted order.
  return hi == candidates.end() ? (hi - 1)->id
                                : std::min_element(hi, candidates.end(), more_likely)->id;
}

} // namespace pshard
