#include "runtime/serve/pass_plan.h"

#include <algorithm>

namespace pshard {

std::vector<PassShare> plan_pass(std::span<const PassWant> wants, int64_t budget, size_t rotation) {
  std::vector<int64_t> given(wants.size(), 0);
  std::vector<size_t> decoders;
  for (size_t i = 0; i < wants.size(); ++i)
    if (wants[i].decoding && wants[i].tokens > 0)
      decoders.push_back(i);
  const bool prompts_wait = std::any_of(
      wants.begin(), wants.end(), [](const PassWant& w) { return !w.decoding && w.tokens > 0; });
  // One token stays for a waiting prompt, so decoders cannot shut new requests out.
  int64_t left = budget;
  const int64_t decode_cap = prompts_wait && budget > 1 ? budget - 1 : budget;
  for (size_t k = 0; k < decoders.size() && static_cast<int64_t>(k) < decode_cap; ++k) {
    const size_t i = decoders[(rotation + k) % decoders.size()];
    given[i] = 1;
    --left;
  }
  for (size_t i = 0; i < wants.size() && left > 0; ++i)
    if (!wants[i].decoding && wants[i].tokens > 0) {
      if (wants[i].whole && wants[i].tokens > left)
        continue;
      given[i] = std::min(wants[i].tokens, left);
      left -= given[i];
    }
  for (size_t k = 0; k < decoders.size() && left > 0; ++k) {
    const size_t i = decoders[(rotation + k) % decoders.size()];
    if (given[i] == 0 || wants[i].drafted <= 0)
      continue;
    const int64_t more = std::min(wants[i].drafted, left);
    given[i] += more;
    left -= more;
  }
  std::vector<PassShare> shares;
  for (size_t i = 0; i < wants.size(); ++i)
    if (given[i] > 0)
      shares.push_back({i, given[i]});
  return shares;
}

} // namespace pshard
