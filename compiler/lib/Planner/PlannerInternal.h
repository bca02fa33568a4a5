// Internals shared by the planner's files (not a public header): the per-tier costs, a
// candidate placement for one (budget, tier), and the steps plan_grid strings together.
#pragma once

#include "pshard/Planner/Estimator.h"
#include "pshard/Planner/Planner.h"

#include <limits>
#include <vector>

namespace pshard::planner::detail {

inline uint64_t align_up(uint64_t v) { return (v + kVramAlignment - 1) / kVramAlignment * kVramAlignment; }

struct TierCosts {
  int64_t tier = 1;
  SubLayerCosts costs;
  uint64_t gpu_fixed_bytes = 0; // activations + workspace, needed once anything runs on GPU
  uint64_t workspace_bytes = 0; // the workspace buffer: attention tiles + kernel scratch
};

// The workspace buffer of a GPU plan at `tier`: the tiled-attention scratch plus the
// backend's fixed kernel scratch (CompileOptions::kernel_workspace_bytes, resolved).
uint64_t workspace_bytes_of(const ModelGraph& graph, int64_t tier, uint64_t kernel_workspace);
// Activations + workspace, aligned as laid out: what a GPU plan needs besides weights.
uint64_t gpu_fixed_bytes_of(const ModelGraph& graph, int64_t tier, uint64_t kernel_workspace);
// The smallest budget a GPU plan fits at every tier (Planner.h's minimum_budget with the
// kernel scratch given), for the MLIR passes, which read it from the IR.
uint64_t minimum_budget_with(const ModelGraph& graph, const CompileOptions& options,
                             uint64_t kernel_workspace);

// What one budget's plans share: the resident set and its bytes.
struct ResidentSet {
  std::vector<bool> resident; // per sub-layer: weights (and KV for attention) in VRAM
  uint64_t bytes = 0;         // aligned, as laid out
  // Per sub-layer: from which budget on (among consecutive ones) it has been resident
  // (assign_layout_ranks). The arena lays resident buffers out by (rank, sub-layer), so
  // when one budget's set nests in the next one's, its buffers sit at the same offsets
  // in both arenas and the switch uploads or evicts only the difference. Empty:
  // sub-layer order.
  std::vector<int> layout_rank;
};

// Fills layout_rank of every set; `by_budget` are the sets of ascending budgets.
void assign_layout_ranks(std::vector<ResidentSet>& by_budget);

struct Candidate {
  Strategy strategy = Strategy::kStatic;
  std::vector<Placement> placements;
  int slots = 0;
  uint64_t slot_bytes = 0;
  double seconds = std::numeric_limits<double>::infinity();
  bool feasible() const { return seconds < std::numeric_limits<double>::infinity(); }
};

// Aligned VRAM of sub-layer i when resident: its tensors and, for attention, its KV cache.
uint64_t resident_bytes_of(const ModelGraph& graph, const CompileOptions& options, size_t i);
ResidentSet make_resident_set(const ModelGraph& graph, const CompileOptions& options,
                              std::vector<bool> resident);

// Chooses the slot count (1..kMaxSlots) that fits the budget and is fastest, and fills
// slots, slot_bytes and seconds; leaves seconds infinite when the placements do not fit.
inline constexpr int kMaxSlots = 4;
void finish_candidate(const TierCosts& tc, uint64_t budget, const ResidentSet& rs, Candidate* c);

// The fixed strategies on a resident set (resident sub-layers are gpu_resident in all).
Candidate build_strategy(Strategy s, const TierCosts& tc, uint64_t budget, const ResidentSet& rs);
// Best feasible of GPU-only, Static and Dynamic.
Candidate best_fixed(const TierCosts& tc, uint64_t budget, const ResidentSet& rs);
// Local search from `start`: moves all non-resident sub-layers of one kind, then flips one
// sub-layer at a time, keeping improvements. `kinds` is the kind of each sub-layer.
Candidate local_search(const TierCosts& tc, uint64_t budget, const ResidentSet& rs,
                       const std::vector<SubLayerKind>& kinds, Candidate start);
// The fastest of `starts` and of a local search from each of them: the fixed strategies
// sit in different basins, so searching from the best one alone misses plans. Shared by
// plan_grid and the MLIR search pass so the two cannot drift apart.
Candidate search_from_starts(const TierCosts& tc, uint64_t budget, const ResidentSet& rs,
                             const std::vector<SubLayerKind>& kinds,
                             const std::vector<Candidate>& starts);
// Names a chosen candidate by what it does: everything on the GPU reads "gpu-only",
// nothing streamed "static", whatever its origin; otherwise the origin's name.
Strategy describe(const Candidate& c);

// Resident-set candidates for a budget: attention + KV first, then by benefit per byte,
// filled greedily leaving several reserves for streaming slots.
std::vector<ResidentSet> resident_candidates(const ModelGraph& graph, const CompileOptions& options,
                                             const std::vector<TierCosts>& tiers, uint64_t budget);
// llama.cpp-style: the first N whole layers (attention with KV, and FFN/MoE), N max.
ResidentSet layers_resident_set(const ModelGraph& graph, const CompileOptions& options,
                                const std::vector<TierCosts>& tiers, uint64_t budget);

// Turns a candidate into a Plan: stream order, VRAM layout (checked against the budget),
// and the simulation's figures.
Result<Plan> finalize_plan(const ModelGraph& graph, const CompileOptions& options, int threads,
                           const TierCosts& tc, uint64_t budget, const ResidentSet& rs,
                           const Candidate& c);

} // namespace pshard::planner::detail

// The steps of plan_grid, one call each, for the MLIR passes (compiler/lib/Dialect/
// PShard/Transforms), which run them one pass at a time on the IR. Same code as
// plan_grid's, so both pshard-compile paths plan alike.
namespace pshard::planner::detail {
// Per-tier costs with the GPU's fixed bytes (activations + workspace) of each tier;
// options.kernel_workspace_bytes unset takes the machine's figure.
std::vector<TierCosts> costs_per_tier(const ModelGraph& graph, const MachineModel& machine,
                                      const CompileOptions& options);
// The resident set plan_grid uses for `budget` (> 0) under options.strategy.
ResidentSet pick_resident_set(const ModelGraph& graph, const CompileOptions& options,
                              const std::vector<TierCosts>& tiers, uint64_t budget);
// The fixed-strategy candidate plan_grid starts from (options.strategy; auto: best fixed).
Candidate strategy_candidate(const CompileOptions& options, const TierCosts& tc, uint64_t budget,
                             const ResidentSet& rs);
} // namespace pshard::planner::detail
