// From a candidate to a Plan: the VRAM layout in one arena and the estimator's figures.
//
// Arena order: resident tensors and KV caches first — identical for every tier of a
// budget, so their offsets never move on a tier switch, and ordered by the smallest
// budget holding them (ResidentSet::layout_rank), so a budget switch keeps what both
// budgets hold in place — then the streaming slots, the activations and the workspace,
// which are scratch and may differ per tier. Every buffer starts at a multiple of kVramAlignment.
#include "PlannerInternal.h"

#include <algorithm>

namespace pshard::planner::detail {
namespace {

// Resident sub-layers by (layout rank, index): see ResidentSet::layout_rank.
std::vector<size_t> resident_layout_order(const ResidentSet& rs) {
  std::vector<size_t> order;
  for (size_t i = 0; i < rs.resident.size(); ++i)
    if (rs.resident[i])
      order.push_back(i);
  if (rs.layout_rank.size() == rs.resident.size())
    std::stable_sort(order.begin(), order.end(),
                     [&](size_t a, size_t b) { return rs.layout_rank[a] < rs.layout_rank[b]; });
  return order;
}

} // namespace

Result<Plan> finalize_plan(const ModelGraph& graph, const CompileOptions& options, int threads,
                           const TierCosts& tc, uint64_t budget, const ResidentSet& rs,
                           const Candidate& c) {
  Plan plan;
  plan.budget_bytes = budget;
  plan.tier = tc.tier;
  plan.strategy = strategy_name(c.strategy);
  plan.placements = c.placements;
  plan.cpu_threads = threads;
  plan.stream_slot_count = c.slots;
  plan.stream_slot_bytes = c.slot_bytes;
  plan.prefetch_depth = c.slots;
  for (size_t i = 0; i < c.placements.size(); ++i)
    if (c.placements[i] == Placement::kGpuStreamed)
      plan.stream_order.push_back(static_cast<int32_t>(i));

  uint64_t offset = 0;
  auto place = [&](BufferKind kind, int32_t sublayer, int32_t index, uint64_t size) {
    plan.vram_layout.push_back({kind, sublayer, index, offset, size});
    offset += align_up(size);
  };
  bool gpu_used = false;
  for (Placement p : c.placements)
    gpu_used = gpu_used || on_gpu(p);
  for (size_t i : resident_layout_order(rs)) {
    const SubLayerInfo& s = graph.sublayers[i];
    for (size_t t = 0; t < s.tensors.size(); ++t)
      place(BufferKind::kWeights, static_cast<int32_t>(i), static_cast<int32_t>(t), s.tensors[t].bytes);
    if (s.kind == SubLayerKind::kAttention)
      place(BufferKind::kKvCache, static_cast<int32_t>(i), -1,
            s.kv_bytes_per_token(options.kv_type) * static_cast<uint64_t>(options.n_ctx));
  }
  for (int slot = 0; slot < c.slots; ++slot)
    place(BufferKind::kStreamSlot, -1, slot, c.slot_bytes);
  if (gpu_used) {
    place(BufferKind::kActivations, -1, -1, graph.activation_bytes(tc.tier));
    place(BufferKind::kWorkspace, -1, -1, tc.workspace_bytes); // attention + kernel scratch
  }
  plan.arena_bytes = offset;
  if (plan.arena_bytes > budget)
    return internal_error("plan for budget " + std::to_string(budget) + ", tier " +
                          std::to_string(tc.tier) + " needs an arena of " +
                          std::to_string(plan.arena_bytes) + " B (a planner bug: the " +
                          "feasibility check and the layout disagree)");

  const SimResult sim = simulate(graph, tc.costs, plan);
  plan.predicted_ms_per_pass = sim.seconds * 1e3;
  plan.predicted_tokens_per_s = sim.seconds > 0 ? static_cast<double>(tc.tier) / sim.seconds : 0;
  plan.cpu_busy_ms = sim.cpu_busy_s * 1e3;
  plan.gpu_busy_ms = sim.gpu_busy_s * 1e3;
  plan.copy_busy_ms = sim.copy_busy_s * 1e3;
  return plan;
}

} // namespace pshard::planner::detail
