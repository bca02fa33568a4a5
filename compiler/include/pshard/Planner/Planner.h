// The planner: budgets × tiers of plans for one model on one machine.
//
//   PSHARD_ASSIGN_OR_RETURN(planner::ModelGraph graph, planner::build_model_graph(*gguf));
//   PSHARD_ASSIGN_OR_RETURN(auto machine, planner::ProfileMachineModel::create(profile));
//   planner::CompileOptions options;               // auto budgets, tiers 1,4,16,64,256
//   options.n_ctx = 4096;
//   PSHARD_ASSIGN_OR_RETURN(planner::PlanGrid grid, planner::plan_grid(graph, *machine, options));
//
// For each context range (CompileOptions::contexts; resident KV caches sized for it) and
// each budget, ascending:
//   1. candidate resident sets — attention blocks with their KV cache first, then other
//      sub-layers by predicted benefit per byte at each tier, filled greedily leaving
//      room for 0, 1 or 2 streaming slots; the llama.cpp-style whole-layer prefix; none;
//   2. on each set and tier, the fixed strategies — GPU-only (non-resident streamed),
//      Static (non-resident on the CPU), Dynamic (non-resident split: streamed while the
//      CPU works on the sub-layers before them) — and, for the pairs most likely to be
//      kept, a local search that flips one sub-layer at a time (cpu ↔ gpu_streamed);
//   3. each tier gets a set and its plan: the assignment with the least total time over
//      the workload (CompileOptions::workload: the prompt in chunks of the largest tier,
//      then decode), a switch between different sets priced by the bytes it moves over
//      the profiled PCIe rate. The smaller budget's plans fit too and compete, and no
//      tier may be slower than at the smaller budget (or CPU only): larger budgets are
//      never predicted slower. A cell where sharing a set makes auto slower than a forced
//      strategy is listed in PlanGrid::trades;
//   4. the VRAM layout places the budget's resident sets jointly (a buffer two plans hold
//      at one offset), then each plan's slots, activations and workspace, checked against
//      the budget. The workspace holds the tiled-attention scratch and the GPU backend's
//      fixed kernel scratch (the profile's kernel_workspace_bytes), so everything the
//      runtime allocates is inside the budget. The switches between the budget's plans
//      are recorded with their bytes and predicted time.
// A forced strategy (options.strategy ≠ kAuto) skips the search and shares one resident
// set over all tiers of a budget; `layers` then uses its own resident set (the first N
// whole layers, N as large as fits, everything else on the CPU). Budget 0 means a
// CPU-only plan; a budget above 0 but below the smallest GPU plan is an error naming
// that minimum.
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

// `plan` (planned for a shorter context range) run at `n_ctx` within its budget, as a
// runtime holding only this plan would have to: every sub-layer executes where the plan
// says (GPU or CPU), but KV caches now hold n_ctx positions, so resident sub-layers stay
// resident only while they fit (attention first, in sub-layer order) and the other GPU
// sub-layers stream their weights and KV cache over PCIe; the fastest slot count that
// fits is taken. kOutOfMemory when not even one slot fits beside the scratch.
Result<Plan> plan_at_context(const ModelGraph& graph, const MachineModel& machine,
                             const CompileOptions& options, const Plan& plan, int64_t n_ctx);

} // namespace pshard::planner
