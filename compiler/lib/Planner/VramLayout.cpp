// From a candidate to a Plan: the VRAM layout in one arena and the estimator's figures.
//
// Arena order: resident tensors and KV caches first, at the offsets the budget's shared
// layout gave them (SharedLayout.cpp: a buffer two plans keep sits at one offset in both,
// so a switch between them leaves it in place), then the streaming slots, the activations
// and the workspace, which are scratch and differ per plan. Every buffer starts at a
// multiple of kVramAlignment.
#include "PlannerInternal.h"

#include <algorithm>

namespace pshard::planner::detail {

ResidentOffsets compact_offsets(const ModelGraph& graph, const CompileOptions& options,
                                const ResidentSet& rs, const std::vector<int>& rank) {
  const size_t n = graph.sublayers.size();
  ResidentOffsets at;
  at.tensor.resize(n);
  at.kv.assign(n, kNoOffset);
  std::vector<size_t> order;
  for (size_t i = 0; i < n; ++i) {
    at.tensor[i].assign(graph.sublayers[i].tensors.size(), kNoOffset);
    if (rs.resident[i])
      order.push_back(i);
  }
  if (rank.size() == n)
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return rank[a] < rank[b]; });
  uint64_t offset = 0;
  for (size_t i : order) {
    const SubLayerInfo& s = graph.sublayers[i];
    for (size_t t = 0; t < s.tensors.size(); ++t) {
      at.tensor[i][t] = offset;
      offset += align_up(s.tensors[t].bytes);
    }
    if (s.kind == SubLayerKind::kAttention) {
      at.kv[i] = offset;
      offset += align_up(kv_buffer_bytes_of(graph, s, options));
    }
  }
  at.end = offset;
  return at;
}

Result<Plan> finalize_plan(const ModelGraph& graph, const ContextCosts& cc, size_t tier_index,
                           int threads, uint64_t budget, const ResidentSet& rs,
                           const ResidentOffsets& at, const Candidate& c) {
  const TierCosts& tc = cc.tiers[tier_index];
  const CompileOptions& options = cc.options;
  if (!c.feasible())
    return internal_error("no feasible plan for budget " + std::to_string(budget) + " B, context " +
                          std::to_string(cc.context) + ", tier " + std::to_string(tc.tier) +
                          " although it is above the minimum");
  Plan plan;
  plan.budget_bytes = budget;
  plan.tier = tc.tier;
  plan.context = cc.context;
  plan.context_start = cc.start;
  plan.strategy = strategy_name(c.strategy);
  plan.placements = c.placements;
  plan.cpu_threads = threads;
  plan.stream_slot_count = c.slots;
  plan.stream_slot_bytes = c.slot_bytes;
  plan.prefetch_depth = c.slots;
  for (size_t i = 0; i < c.placements.size(); ++i)
    if (c.placements[i] == Placement::kGpuStreamed)
      plan.stream_order.push_back(static_cast<int32_t>(i));

  // Resident buffers in arena order.
  for (size_t i = 0; i < graph.sublayers.size(); ++i) {
    if (!rs.resident[i])
      continue;
    const SubLayerInfo& s = graph.sublayers[i];
    for (size_t t = 0; t < s.tensors.size(); ++t)
      plan.vram_layout.push_back({BufferKind::kWeights, static_cast<int32_t>(i),
                                  static_cast<int32_t>(t), at.tensor[i][t], s.tensors[t].bytes});
    if (s.kind == SubLayerKind::kAttention)
      plan.vram_layout.push_back({BufferKind::kKvCache, static_cast<int32_t>(i), -1, at.kv[i],
                                  kv_buffer_bytes_of(graph, s, options)});
  }
  std::stable_sort(plan.vram_layout.begin(), plan.vram_layout.end(),
                   [](const VramBuffer& a, const VramBuffer& b) { return a.offset < b.offset; });

  uint64_t offset = at.end;
  auto place = [&](BufferKind kind, int32_t sublayer, int32_t index, uint64_t size) {
    plan.vram_layout.push_back({kind, sublayer, index, offset, size});
    offset += align_up(size);
  };
  place_resident_experts(graph, tc, c, &plan, &offset);
  bool gpu_used = false;
  for (Placement p : c.placements)
    gpu_used = gpu_used || on_gpu(p);
  for (int slot = 0; slot < c.slots; ++slot)
    place(BufferKind::kStreamSlot, -1, slot, c.slot_bytes);
  if (gpu_used) {
    place(BufferKind::kActivations, -1, -1, tc.activation_bytes);
    place(BufferKind::kWorkspace, -1, -1, tc.workspace_bytes); // attention + kernel scratch
  }
  plan.arena_bytes = offset;
  if (plan.arena_bytes > budget)
    return internal_error("plan for budget " + std::to_string(budget) + ", tier " +
                          std::to_string(tc.tier) + " needs an arena of " +
                          std::to_string(plan.arena_bytes) + " B (a planner bug: the " +
                          "feasibility check and the layout disagree)");

  const SimResult sim = simulate(graph, candidate_costs(tc, c), plan);
  plan.predicted_ms_per_pass = sim.seconds * 1e3;
  plan.predicted_tokens_per_s = sim.seconds > 0 ? static_cast<double>(tc.tier) / sim.seconds : 0;
  plan.cpu_busy_ms = sim.cpu_busy_s * 1e3;
  plan.gpu_busy_ms = sim.gpu_busy_s * 1e3;
  plan.copy_busy_ms = sim.copy_busy_s * 1e3;
  plan.predicted_ms_at_context_start =
      simulate(graph, split_costs(graph, cc.start_tiers[tier_index].costs, c.experts), plan)
          .seconds *
      1e3;
  return plan;
}

} // namespace pshard::planner::detail
