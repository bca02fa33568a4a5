#include "runtime/model/routing_recorder.h"

#include "runtime/backends/cpu/cpu_ops.h"

#include <algorithm>

namespace pshard {

void RoutingRecorder::record(int64_t layer, const float* logits, int64_t n_tokens,
                             const MoeGating& gating) {
  const int64_t e = profile_->n_expert;
  copy_.assign(logits, logits + n_tokens * e);
  const auto routes = moe_routes(copy_.data(), n_tokens, e, profile_->n_expert_used, gating);
  per_token_.assign(static_cast<size_t>(n_tokens), {});
  for (int64_t x = 0; x < e; ++x) // ascending experts: each token's list comes out sorted
    for (const MoeRoute& r : routes[static_cast<size_t>(x)])
      per_token_[static_cast<size_t>(r.token)].push_back(x);
  for (const auto& experts : per_token_) {
    Status s = profile_->add(layer, experts);
    if (!s.ok() && status_.ok())
      status_ = s;
  }
}

} // namespace pshard
