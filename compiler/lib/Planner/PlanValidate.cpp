// The plan invariants the runtime relies on, checked after planning (and by tests).
#include "pshard/Planner/ModelGraph.h"
#include "pshard/Planner/Plan.h"

#include <algorithm>

namespace pshard::planner {
namespace {

std::string where(const Plan& p) {
  return "plan (budget " + std::to_string(p.budget_bytes) + " B, tier " + std::to_string(p.tier) + ")";
}

// What streamed sub-layer i needs in a slot: its weights at the plan's tier, or for an
// expert-level MoE block its unit and the most copied experts a pass may route to.
uint64_t slot_need(const SubLayerInfo& s, const Plan& plan, size_t i) {
  for (const PlanExperts& e : plan.experts)
    if (e.sublayer == static_cast<int32_t>(i))
      return s.shared_bytes +
             static_cast<uint64_t>(std::min<int64_t>(static_cast<int64_t>(e.copied.size()),
                                                     plan.tier * s.n_expert_used)) *
                 s.expert_bytes;
  return s.weight_bytes_needed(plan.tier);
}

} // namespace

Status validate_plan(const ModelGraph& graph, const CompileOptions& options, const Plan& plan) {
  const size_t n = graph.sublayers.size();
  if (plan.placements.size() != n)
    return internal_error(where(plan) + " places " + std::to_string(plan.placements.size()) +
                          " sub-layers, the model has " + std::to_string(n));
  if (plan.arena_bytes > plan.budget_bytes)
    return internal_error(where(plan) + " arena " + std::to_string(plan.arena_bytes) +
                          " B exceeds the budget");
  std::vector<const VramBuffer*> sorted;
  std::vector<int> weights_of(n, 0), kv_of(n, 0);
  int slots = 0;
  for (const VramBuffer& b : plan.vram_layout) {
    if (b.offset % kVramAlignment != 0)
      return internal_error(where(plan) + " has a misaligned buffer at " + std::to_string(b.offset));
    if (b.offset > plan.arena_bytes || b.size > plan.arena_bytes - b.offset)
      return internal_error(where(plan) + " has a buffer outside its arena");
    if (b.kind == BufferKind::kWeights || b.kind == BufferKind::kKvCache) {
      if (b.sublayer < 0 || static_cast<size_t>(b.sublayer) >= n)
        return internal_error(where(plan) + " has a buffer for a sub-layer that does not exist");
      const auto i = static_cast<size_t>(b.sublayer);
      if (plan.placements[i] != Placement::kGpuResident)
        return internal_error(where(plan) + " keeps " + graph.sublayers[i].name +
                              " in VRAM but does not place it gpu_resident");
      ++(b.kind == BufferKind::kWeights ? weights_of : kv_of)[i];
    }
    if (b.kind == BufferKind::kExpert) {
      const bool listed = std::any_of(plan.experts.begin(), plan.experts.end(), [&](const PlanExperts& e) {
        return e.sublayer == b.sublayer &&
               std::find(e.resident.begin(), e.resident.end(), b.tensor) != e.resident.end();
      });
      if (!listed || b.sublayer < 0 || static_cast<size_t>(b.sublayer) >= n ||
          plan.placements[static_cast<size_t>(b.sublayer)] != Placement::kGpuStreamed)
        return internal_error(where(plan) + " keeps an expert in VRAM that no streamed "
                              "expert-level MoE block lists as resident");
    }
    if (b.kind == BufferKind::kStreamSlot) {
      ++slots;
      if (b.size < plan.stream_slot_bytes)
        return internal_error(where(plan) + " has a streaming slot smaller than stream_slot_bytes");
    }
    sorted.push_back(&b);
  }
  std::sort(sorted.begin(), sorted.end(),
            [](const VramBuffer* a, const VramBuffer* b) { return a->offset < b->offset; });
  for (size_t i = 1; i < sorted.size(); ++i)
    if (sorted[i - 1]->offset + sorted[i - 1]->size > sorted[i]->offset)
      return internal_error(where(plan) + " has overlapping buffers at " +
                            std::to_string(sorted[i - 1]->offset) + " and " +
                            std::to_string(sorted[i]->offset));
  std::vector<int32_t> expected_order;
  for (size_t i = 0; i < n; ++i) {
    const SubLayerInfo& s = graph.sublayers[i];
    if (plan.placements[i] == Placement::kGpuResident) {
      if (weights_of[i] != static_cast<int>(s.tensors.size()))
        return internal_error(where(plan) + " lays out " + std::to_string(weights_of[i]) + " of " +
                              std::to_string(s.tensors.size()) + " tensors of resident " + s.name);
      if ((s.kind == SubLayerKind::kAttention) != (kv_of[i] == 1))
        return internal_error(where(plan) + " has no KV cache buffer for resident " + s.name);
    }
    if (plan.placements[i] == Placement::kGpuStreamed) {
      expected_order.push_back(static_cast<int32_t>(i));
      if (slot_need(s, plan, i) > plan.stream_slot_bytes)
        return internal_error(where(plan) + " streams " + s.name + " into a slot too small for it");
    }
  }
  if (plan.stream_order != expected_order)
    return internal_error(where(plan) + " stream order is not the streamed sub-layers in order");
  if (!expected_order.empty() && (slots < 1 || slots != plan.stream_slot_count))
    return internal_error(where(plan) + " streams weights without matching streaming slots");
  (void)options;
  return Status::ok_status();
}

Status validate_grid(const ModelGraph& graph, const PlanGrid& grid) {
  if (grid.plans.size() != grid.budgets.size() || grid.switches.size() != grid.budgets.size())
    return internal_error("the grid has rows for " + std::to_string(grid.plans.size()) + " of " +
                          std::to_string(grid.budgets.size()) + " budgets");
  if (grid.contexts.empty() || grid.contexts.back() != grid.options.n_ctx)
    return internal_error("the grid's context ranges do not end at the context planned for");
  auto check_rows = [&](const std::vector<std::vector<Plan>>& rows, uint64_t budget) -> Status {
    if (rows.size() != grid.contexts.size())
      return internal_error("budget " + std::to_string(budget) + " lacks plans for some contexts");
    for (size_t c = 0; c < rows.size(); ++c) {
      if (rows[c].size() != grid.tiers.size())
        return internal_error("budget " + std::to_string(budget) + " lacks plans for some tiers");
      for (size_t t = 0; t < rows[c].size(); ++t) {
        const Plan& p = rows[c][t];
        if (p.budget_bytes != budget || p.tier != grid.tiers[t] || p.context != grid.contexts[c])
          return internal_error("the plan at budget " + std::to_string(budget) + ", context " +
                                std::to_string(grid.contexts[c]) + ", tier " +
                                std::to_string(grid.tiers[t]) + " is filed under another cell");
        PSHARD_RETURN_IF_ERROR(validate_plan(graph, grid.options, p));
      }
    }
    return Status::ok_status();
  };
  for (size_t b = 0; b < grid.plans.size(); ++b) {
    PSHARD_RETURN_IF_ERROR(check_rows(grid.plans[b], grid.budgets[b]));
    auto known = [&](int64_t context, int64_t tier) {
      return std::find(grid.contexts.begin(), grid.contexts.end(), context) != grid.contexts.end() &&
             std::find(grid.tiers.begin(), grid.tiers.end(), tier) != grid.tiers.end();
    };
    for (const PlanSwitch& s : grid.switches[b])
      if (!known(s.from_context, s.from_tier) || !known(s.to_context, s.to_tier))
        return internal_error("budget " + std::to_string(grid.budgets[b]) +
                              " records a switch between plans it does not have");
  }
  if (!grid.cpu_only.empty())
    PSHARD_RETURN_IF_ERROR(check_rows(grid.cpu_only, 0));
  return Status::ok_status();
}

} // namespace pshard::planner
