// Candidate: one token of the sampler's working set — its id, its (penalised) logit and,
// once the softmax has run, its probability. The sampler's stages
// (runtime/sampler/truncation.h, mirostat.h) work on vectors of them.
#pragma once

#include "runtime/tokenizer/token_id.h"

#include <algorithm>
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

} // namespace pshard
