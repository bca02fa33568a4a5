// Candidate: one token of the sampler's working set — its id, its (penalised) logit and,
// once the softmax has run, its probability. The sampler's stages
// (runtime/sampler/truncation.h, mirostat.h) work on vectors of them.
#pragma once

#include "runtime/tokenizer/token_id.h"

#include <algorithm>
#include <cstddef>
#include <vector>

namespace pshard {

struct Candidate {
  TokenId id;
  float logit;
  double prob;
};

// Higher logit first; equal logits by lower id, so the order never depends on the sort
// algorithm.
inline bool more_likely(const Candidate& a, const Candidate& b) {
  return a.logit > b.logit || (a.logit == b.logit && a.id < b.id);
}

inline void sort_most_likely(std::vector<Candidate>& candidates) {
  std::sort(candidates.begin(), candidates.end(), more_likely);
}

// Leaves the k most likely candidates, sorted, at the front (k <= size); the rest follow
// in no order.
inline void sort_most_likely_head(std::vector<Candidate>& candidates, size_t k) {
  std::partial_sort(candidates.begin(), candidates.begin() + static_cast<std::ptrdiff_t>(k),
                    candidates.end(), more_likely);
}

// Sorts by `less` the shortest head of `v` whose mass (mass(element), summed in order)
// reaches `target`, by ever longer partial sorts (64, 256, ... elements), and returns its
// length; when no head does, all of `v` sorted and its size. What top-p and typical
// sampling keep, found without sorting a whole vocabulary.
template <typename T, typename Less, typename Mass>
size_t sort_head_holding(std::vector<T>& v, Less less, Mass mass, double target) {
  for (size_t m = 64;; m *= 4) {
    const bool whole = m >= v.size();
    if (whole)
      std::sort(v.begin(), v.end(), less);
    else
      std::partial_sort(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(m), v.end(), less);
    const size_t head = whole ? v.size() : m;
    double cumulative = 0.0;
    for (size_t i = 0; i < head; ++i)
      if ((cumulative += mass(v[i])) >= target)
        return i + 1;
    if (whole)
      return v.size();
  }
}

// The sum of the candidates' probabilities, in their order.
template <typename It> double total_mass(It begin, It end) {
  double total = 0.0;
  for (It it = begin; it != end; ++it)
    total += it->prob;
  return total;
}
inline double total_mass(const std::vector<Candidate>& candidates) {
  return total_mass(candidates.begin(), candidates.end());
}

} // namespace pshard
