// Expert-level MoE placement: a streamed MoE sub-layer keeps its hottest experts (by the
// routing profile) resident in the plan's budget and copies only the routed others. The
// VRAM left over by a candidate's resident set, fixed buffers and slots is filled greedily,
// one expert at a time, by expected copy bytes saved per byte of VRAM: a layer's next
// expert is always its next hottest, so each layer's savings shrink as it takes more and
// the greedy order is the best one for this separable objective.
#include "PlannerInternal.h"

#include <algorithm>
#include <cmath>

namespace pshard::planner::detail {
namespace {

// The probability that a pass of n tokens routes to the `rank`-th hottest expert of s.
double routed_in_pass(const SubLayerInfo& s, int64_t rank, int64_t n) {
  return s.expected_streamed_experts(n, rank) - s.expected_streamed_experts(n, rank + 1);
}

bool streamed_moe(const ModelGraph& graph, const std::vector<Placement>& placements, size_t i) {
  const SubLayerInfo& s = graph.sublayers[i];
  return placements[i] == Placement::kGpuStreamed && s.kind == SubLayerKind::kMoe && s.n_expert > 0;
}

} // namespace

uint64_t hot_expert_bytes(const SubLayerInfo& s) {
  uint64_t bytes = 0;
  for (const MatmulGroup& m : s.matmuls)
    if (m.pool > m.count) // one expert's slice of each expert tensor, laid out on its own
      bytes += align_up(m.matrix_bytes);
  return bytes;
}

HotExperts choose_hot_experts(const ModelGraph& graph, int64_t tier,
                              const std::vector<Placement>& placements, uint64_t bytes) {
  HotExperts hot;
  hot.count.assign(graph.sublayers.size(), 0);
  for (;;) {
    size_t best = graph.sublayers.size();
    double best_gain = 0;
    for (size_t i = 0; i < graph.sublayers.size(); ++i) {
      const SubLayerInfo& s = graph.sublayers[i];
      if (!streamed_moe(graph, placements, i) || hot.count[i] >= s.n_expert)
        continue;
      const uint64_t cost = hot_expert_bytes(s);
      if (cost == 0 || hot.bytes + cost > bytes)
        continue;
      const double gain = routed_in_pass(s, hot.count[i], tier) *
                          static_cast<double>(s.expert_bytes) / static_cast<double>(cost);
      if (gain > best_gain) { // ties keep the earlier sub-layer
        best_gain = gain;
        best = i;
      }
    }
    if (best == graph.sublayers.size())
      return hot;
    ++hot.count[best];
    hot.bytes += hot_expert_bytes(graph.sublayers[best]);
  }
}

SubLayerCosts costs_with_hot_experts(const ModelGraph& graph, const MachineModel& machine,
                                     const TierCosts& tc, const HotExperts& hot) {
  SubLayerCosts costs = tc.costs;
  for (size_t i = 0; i < graph.sublayers.size(); ++i) {
    if (hot.count[i] == 0)
      continue;
    SubLayerCost& c = costs.sublayers[i];
    c = with_hot_experts(c, graph.sublayers[i], machine, tc.tier, hot.count[i]);
    c.copy_s = quantize_ns(c.copy_s); // as every planner cost (both compile paths agree)
    c.copy_loaded_s = quantize_ns(c.copy_loaded_s);
  }
  return costs;
}

std::vector<int32_t> hot_expert_ids(const SubLayerInfo& s, int64_t count) {
  std::vector<int32_t> ids = s.experts_by_heat();
  ids.resize(static_cast<size_t>(std::clamp<int64_t>(count, 0, static_cast<int64_t>(ids.size()))));
  std::sort(ids.begin(), ids.end());
  return ids;
}

HotCandidate add_hot_experts(const ModelGraph& graph, const MachineModel& machine,
                             const TierCosts& tc, uint64_t budget, const ResidentSet& rs,
                             const Candidate& base) {
  HotCandidate best;
  best.c = base;
  best.hot.count.assign(graph.sublayers.size(), 0);
  best.costs = tc.costs;
  if (!base.feasible() || base.slots == 0)
    return best;
  const uint64_t used = rs.bytes + tc.gpu_fixed_bytes;
  if (used > budget)
    return best;
  // Fewer slots leave more room for hot experts: try every count the base slot allows.
  for (int slots = 1; slots <= kMaxSlots; ++slots) {
    const uint64_t slot_room = static_cast<uint64_t>(slots) * base.slot_bytes;
    if (used + slot_room > budget)
      break;
    HotExperts hot = choose_hot_experts(graph, tc.tier, base.placements, budget - used - slot_room);
    SubLayerCosts costs = costs_with_hot_experts(graph, machine, tc, hot);
    uint64_t slot = 0; // the worst case of non-resident experts: never above the base slot
    for (size_t i = 0; i < base.placements.size(); ++i)
      if (base.placements[i] == Placement::kGpuStreamed)
        slot = std::max(slot, align_up(costs.sublayers[i].slot_bytes));
    const double t = simulate_seconds(costs, base.placements, slots, slots);
    if (t < best.c.seconds) {
      best.c.seconds = t;
      best.c.slots = slots;
      best.c.slot_bytes = slot;
      best.hot = std::move(hot);
      best.costs = std::move(costs);
    }
  }
  return best;
}

} // namespace pshard::planner::detail
