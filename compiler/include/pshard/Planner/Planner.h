// The planner: budgets × tiers of plans for one model on one machine.
//
//   PSHARD_ASSIGN_OR_RETURN(planner::ModelGraph graph, planner::build_model_graph(*gguf));
//   PSHARD_ASSIGN_OR_RETURN(auto machine, planner::ProfileMachineModel::create(profile));
//   planner::CompileOptions options;               // auto budgets, tiers 1,4,16,64,256
//   options.n_ctx = 4096;
//   PSHARD_ASSIGN_OR_RETURN(planner::PlanGrid grid, planner::plan_grid(graph, *machine, options));
//
// For each budget:
//   1. the resident set — attention blocks with their KV cache first, then other
//      sub-layers by predicted benefit per byte — is chosen ONCE for all tiers, so a tier
//      switch never reloads weights. Candidate sizes (leaving room for 0, 1 or 2
//      streaming slots, and the llama.cpp-style whole-layer prefix) are each planned for
//      every tier and the one with the least total time per token wins;
//   2. for each tier, the fixed strategies are built on that resident set — GPU-only
//      (non-resident streamed), Static (non-resident on the CPU), Dynamic (non-resident
//      split: streamed while the CPU works on the sub-layers before them) — and a local
//      search flips one sub-layer at a time (cpu ↔ gpu_streamed) keeping every
//      improvement. The chosen plan is never predicted slower than the fixed strategies;
//   3. the VRAM layout places resident tensors, KV caches, slots, activations and
//      workspace in one arena and checks it against the budget. The workspace holds the
//      tiled-attention scratch and the GPU backend's fixed kernel scratch (the profile's
//      kernel_workspace_bytes), so everything the runtime allocates is inside the budget.
// A forced strategy (options.strategy ≠ kAuto) skips the search; `layers` then uses its
// own resident set (the first N whole layers, N as large as fits, everything else on
// the CPU). Budget 0 means a CPU-only plan; a budget above 0 but below the smallest GPU
// plan is an error naming that minimum.
#pragma once

#include "runtime/core/status.h"
#include "pshard/Planner/MachineModel.h"
#include "pshard/Planner/ModelGraph.h"
#include "pshard/Planner/Plan.h"

namespace pshard::planner {

// The smallest budget a GPU plan fits at every tier of `options` (one attention block
// resident with its KV cache, plus activations and workspace of the largest tier; the
// workspace includes the backend's kernel scratch). The first form counts
// options.kernel_workspace_bytes (unset: none), the second resolves it from the machine
// as plan_grid does.
uint64_t minimum_budget(const ModelGraph& graph, const CompileOptions& options);
uint64_t minimum_budget(const ModelGraph& graph, const MachineModel& machine,
                        const CompileOptions& options);

// The auto ladder: from the minimum budget up to the machine's VRAM, geometric.
std::vector<uint64_t> auto_budgets(const ModelGraph& graph, const MachineModel& machine,
                                   const CompileOptions& options);

Result<PlanGrid> plan_grid(const ModelGraph& graph, const MachineModel& machine,
                           const CompileOptions& options);

// One fixed strategy for one (budget, tier) with a given resident set (tests, benchmarks).
// `resident[i]` marks sub-layers whose weights (and KV) are resident.
Result<Plan> plan_fixed_strategy(const ModelGraph& graph, const MachineModel& machine,
                                 const CompileOptions& options, Strategy strategy,
                                 uint64_t budget, int64_t tier,
                                 const std::vector<bool>& resident);

} // namespace pshard::planner
