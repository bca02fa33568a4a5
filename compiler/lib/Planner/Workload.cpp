// The workload switches are priced against (CompileOptions::workload) as the passes a
// request runs, and what a switch between two resident sets moves and costs.
#include "PlannerInternal.h"
#include "runtime/model/kv_ring.h"

#include <algorithm>

namespace pshard::planner::detail {

std::vector<WorkloadStep> workload_steps(const CompileOptions& o, int64_t context) {
  const std::vector<int64_t>& tiers = o.tiers;
  auto tier_of = [&](int64_t n) {
    for (size_t i = 0; i < tiers.size(); ++i)
      if (tiers[i] >= n)
        return i;
    return tiers.size() - 1;
  };
  const int64_t prompt = o.workload.prompt_tokens, generated = o.workload.generated_tokens;
  const int64_t chunk = tiers.back(), full = prompt / chunk, rest = prompt % chunk;
  std::vector<WorkloadStep> steps;
  auto add = [&](size_t tier, int64_t passes, int64_t positions) {
    positions = std::min(positions, context);
    if (!steps.empty() && steps.back().tier == tier) {
      steps.back().passes += passes;
      steps.back().positions_after = positions;
    } else {
      steps.push_back({tier, passes, positions});
    }
  };
  if (full > 0)
    add(tiers.size() - 1, full, full * chunk);
  if (rest > 0)
    add(tier_of(rest), 1, prompt);
  if (generated > 0)
    add(tier_of(1), generated, prompt + generated);
  return steps;
}

double SwitchBytes::seconds(int64_t positions, const LinkPricing& link) const {
  // A state with no positions behind it is zeros the runtime does not move.
  const uint64_t slots = positions > 0 ? static_cast<uint64_t>(state_slots) : 0;
  const uint64_t up = state_up * slots, down = state_down * slots;
  return link.h2d_seconds(
             weights_up + up +
             kv_bytes_moved(kv_up_per_position, kv_ring_up_per_position, positions, ring)) +
         link.d2h_seconds(down + kv_bytes_moved(kv_down_per_position, kv_ring_down_per_position,
                                                positions, ring));
}

SwitchBytes switch_bytes(const ModelGraph& graph, const CompileOptions& options,
                         const ResidentSet& from, const ResidentSet& to) {
  SwitchBytes b;
  b.ring = kv_ring_positions(graph, options);
  b.state_slots = std::max<int64_t>(options.parallel, 1);
  for (size_t i = 0; i < graph.sublayers.size(); ++i) {
    if (from.resident[i] == to.resident[i])
      continue;
    const SubLayerInfo& s = graph.sublayers[i];
    const uint64_t kv = s.kv_bytes_per_token(options.kv_type);
    const uint64_t ring_kv = s.kv_is_ring(b.ring) ? kv : 0;
    if (to.resident[i]) {
      for (const TensorRef& t : s.tensors)
        b.weights_up += t.bytes;
      b.kv_up_per_position += kv;
      b.kv_ring_up_per_position += ring_kv;
      b.state_up += s.state_bytes(options.kv_type);
    } else {
      b.kv_down_per_position += kv;
      b.kv_ring_down_per_position += ring_kv;
      b.state_down += s.state_bytes(options.kv_type);
    }
  }
  return b;
}

} // namespace pshard::planner::detail
