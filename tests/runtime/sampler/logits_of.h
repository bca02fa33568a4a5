// The sampler tests' logits for a distribution given as probabilities.
#pragma once

#include <cmath>
#include <vector>

namespace pshard {

// Logits whose softmax at temperature 1 is `probs`.
inline std::vector<float> logits_of(const std::vector<double>& probs) {
  std::vector<float> logits;
  for (double p : probs)
    logits.push_back(static_cast<float>(std::log(p)));
  return logits;
}

} // namespace pshard
