#include "runtime/executor/session_stats.h"

#include <cstdio>

namespace pshard {

std::string describe_expert_uses(const ExpertUses& uses, double predicted_host, int64_t passes) {
  if (uses.total() == 0 || passes <= 0)
    return "";
  const auto per_pass = [&](double v) { return v / static_cast<double>(passes); };
  char buf[160];
  std::snprintf(buf, sizeof buf,
                "experts per pass %.1f resident, %.1f copied, %.1f on the host (predicted %.1f "
                "on the host)",
                per_pass(static_cast<double>(uses.resident)),
                per_pass(static_cast<double>(uses.copied)),
                per_pass(static_cast<double>(uses.host)), per_pass(predicted_host));
  std::string out = buf;
  // A few passes scatter too much to tell; past a quarter more than expected (and at
  // least one expert a pass) the profile's hot experts are not this text's.
  constexpr int64_t kEnoughPasses = 8;
  const double host = static_cast<double>(uses.host);
  if (passes >= kEnoughPasses && host > 1.25 * predicted_host &&
      per_pass(host - predicted_host) >= 1.0)
    out += "; this text routes unlike the plan's routing profile: take one of text like it "
           "(pshard-profile --routing) and compile with it (pshard-compile --routing)";
  return out;
}

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
  use->experts += p.experts;
  use->predicted_host_experts += p.predicted_host_experts;
}

} // namespace pshard
