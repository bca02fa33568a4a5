#include "runtime/executor/session_stats.h"

namespace pshard {

void SessionStats::add(const PassStats& p, const std::string& strategy) {
  ++passes;
  graph_passes += p.graph_replayed ? 1 : 0;
  bytes_streamed += p.bytes_streamed;
  bytes_crossed += p.bytes_crossed;
  last_pass = p;
  PlanUse* use = nullptr;
  for (PlanUse& u : plans)
    if (u.budget_bytes == p.budget_bytes && u.tier == p.tier && u.context == p.context)
      use = &u;
  if (!use) {
    plans.push_back({p.budget_bytes, p.tier, strategy, 0, p.context});
    use = &plans.back();
  }
  ++use->passes;
  use->tokens += p.n_tokens;
  use->predicted_ms_total += p.predicted_ms;
  use->predicted_ms_per_pass = use->predicted_ms_total / static_cast<double>(use->passes);
  use->measured_ms_total += p.measured_ms;
  use->bytes_streamed += p.bytes_streamed;
}

} // namespace pshard
