// Internals shared by the planner's files (not a public header): the per-tier costs, a
// candidate placement for one (budget, tier), and the steps plan_grid strings together.
//
// plan_grid runs six steps; each is one function below, and each MLIR pass
// (compiler/lib/Dialect/PShard/Transforms) calls exactly that function on what the IR
// holds, so both pshard-compile paths plan alike:
//   1. costs_per_context          pshard-annotate-costs
//   2. candidate_sets             pshard-choose-resident-set
//   3. fixed_candidates           pshard-generate-candidates
//   4. search_shortlist + search  pshard-search-placements
//   5. select_plans               pshard-select-plans
//   6. lay_out_budget             pshard-layout-vram
#pragma once

#include "pshard/Planner/Estimator.h"
#include "pshard/Planner/Planner.h"

#include <limits>
#include <optional>
#include <vector>

namespace pshard::planner::detail {

inline uint64_t align_up(uint64_t v) { return (v + kVramAlignment - 1) / kVramAlignment * kVramAlignment; }
inline constexpr uint64_t kNoOffset = ~0ull;

struct TierCosts {
  int64_t tier = 1;
  SubLayerCosts costs;
  uint64_t gpu_fixed_bytes = 0; // activations + workspace, needed once anything runs on GPU
  uint64_t workspace_bytes = 0; // the workspace buffer: attention tiles + kernel scratch
  uint64_t activation_bytes = 0; // the pass's activations with its sequences' logits
};

// One context range: the options it is planned with (n_ctx = its upper bound, so resident
// KV caches hold that many positions) and the costs of every tier at its upper bound
// (what plans are chosen by) and at its start (the other end of the prediction).
struct ContextCosts {
  int64_t context = 0;
  int64_t start = 1;
  CompileOptions options;
  std::vector<TierCosts> tiers;
  std::vector<TierCosts> start_tiers;
};

// Seconds rounded to whole nanoseconds, as the IR stores them (0 for non-positive or
// non-finite). Costs are quantized once, so both compile paths plan with equal numbers.
uint64_t to_ns(double seconds);
double from_ns(uint64_t ns);
inline double quantize_ns(double seconds) { return from_ns(to_ns(seconds)); }

// The workspace buffer of a GPU plan at `tier`: the tiled-attention scratch plus the
// backend's fixed kernel scratch (CompileOptions::kernel_workspace_bytes, resolved).
uint64_t workspace_bytes_of(const ModelGraph& graph, int64_t tier, uint64_t kernel_workspace);
// Activations of a pass at `tier` holding the logits of min(tier, parallel) sequences.
uint64_t activation_bytes_of(const ModelGraph& graph, int64_t tier, int64_t parallel);
// A resident attention sub-layer's KV cache: n_ctx positions for each parallel sequence,
// a sliding-window layer's ring's at most (kv_ring_positions).
uint64_t kv_buffer_bytes_of(const ModelGraph& graph, const SubLayerInfo& s,
                            const CompileOptions& options);
// Activations + workspace, aligned as laid out: what a GPU plan needs besides weights.
uint64_t gpu_fixed_bytes_of(const ModelGraph& graph, int64_t tier, uint64_t kernel_workspace,
                            int64_t parallel = 1);
// The smallest budget a GPU plan fits at every tier (Planner.h's minimum_budget with the
// kernel scratch given), for the MLIR passes, which read it from the IR.
uint64_t minimum_budget_with(const ModelGraph& graph, const CompileOptions& options,
                             uint64_t kernel_workspace);

// A set of sub-layers whose weights (and KV for attention) stay in VRAM.
struct ResidentSet {
  std::vector<bool> resident; // per sub-layer
  uint64_t bytes = 0;         // aligned, as laid out
};

// Expert-level MoE placement of a candidate (ExpertPlacement.cpp). A MoE sub-layer with
// level[i] is placed gpu_streamed (router, norms and shared expert copied as one unit)
// and splits its experts by heat (SubLayerInfo::experts_by_heat): the first hot[i]
// resident, the next copied[i] copied on demand (only those a pass routes to), the rest
// run on the CPU at the same time as the device's. Empty: every MoE block placed whole.
struct ExpertSplit {
  std::vector<bool> level;           // per sub-layer
  std::vector<int64_t> hot, copied;  // per sub-layer
  uint64_t bytes = 0;                // aligned VRAM of all resident experts
  std::vector<SubLayerCost> costs;   // per sub-layer: split_cost where level, at the tier
                                     // the split was made for
  bool empty() const { return level.empty(); }
  bool at(size_t i) const { return !level.empty() && level[i]; }
};

struct Candidate {
  Strategy strategy = Strategy::kStatic;
  std::vector<Placement> placements;
  int slots = 0;
  uint64_t slot_bytes = 0;
  double seconds = std::numeric_limits<double>::infinity();
  ExpertSplit experts;
  bool feasible() const { return seconds < std::numeric_limits<double>::infinity(); }
};

// Aligned VRAM of sub-layer i when resident: its tensors and, for attention, its KV cache.
uint64_t resident_bytes_of(const ModelGraph& graph, const CompileOptions& options, size_t i);
ResidentSet make_resident_set(const ModelGraph& graph, const CompileOptions& options,
                              std::vector<bool> resident);
ResidentSet empty_resident_set(const ModelGraph& graph);

// Chooses the slot count (1..kMaxSlots) that fits the budget and is fastest, and fills
// slots, slot_bytes and seconds; leaves seconds infinite when the placements do not fit.
inline constexpr int kMaxSlots = 4;
void finish_candidate(const TierCosts& tc, uint64_t budget, const ResidentSet& rs, Candidate* c);

// The fixed strategies on a resident set (resident sub-layers are gpu_resident in all).
Candidate build_strategy(Strategy s, const TierCosts& tc, uint64_t budget, const ResidentSet& rs);
// Best feasible of GPU-only, Static and Dynamic.
Candidate best_fixed(const TierCosts& tc, uint64_t budget, const ResidentSet& rs);
// The candidate a forced strategy (o.strategy ≠ auto) builds; auto: best_fixed.
Candidate strategy_candidate(const CompileOptions& o, const TierCosts& tc, uint64_t budget,
                             const ResidentSet& rs);
// Local search from `start`: moves all non-resident sub-layers of one kind, then flips one
// sub-layer at a time, keeping improvements. `kinds` is the kind of each sub-layer.
Candidate local_search(const TierCosts& tc, uint64_t budget, const ResidentSet& rs,
                       const std::vector<SubLayerKind>& kinds, Candidate start);
// The fastest of `starts` and of a local search from each of them: the fixed strategies
// sit in different basins, so searching from the best one alone misses plans.
Candidate search_from_starts(const TierCosts& tc, uint64_t budget, const ResidentSet& rs,
                             const std::vector<SubLayerKind>& kinds,
                             const std::vector<Candidate>& starts);
// Names a chosen candidate by what it does: nothing on the GPU reads "cpu-only",
// everything on the GPU "gpu-only", nothing streamed "static", whatever its origin;
// otherwise the origin's name.
Strategy describe(const Candidate& c);

// Greedy resident sets for a budget: attention + KV first, then by benefit per byte at
// tier `order_tier` (an index into `tiers`), filled leaving several reserves for
// streaming slots.
std::vector<ResidentSet> resident_candidates(const ModelGraph& graph, const CompileOptions& options,
                                             const std::vector<TierCosts>& tiers, uint64_t budget,
                                             size_t order_tier = 0);
// llama.cpp-style: the first N whole layers (attention with KV, and FFN/MoE), N max.
ResidentSet layers_resident_set(const ModelGraph& graph, const CompileOptions& options,
                                const std::vector<TierCosts>& tiers, uint64_t budget);
// The one set a strategy shares across all tiers of a budget (what forced strategies
// use): of resident_candidates (the layers set for `layers`), the least time per token
// summed over tiers under `strategy` (auto: the best fixed strategy).
ResidentSet shared_resident_set(const ModelGraph& graph, const CompileOptions& options,
                                const std::vector<TierCosts>& tiers, uint64_t budget,
                                Strategy strategy);

// Resident offsets of one plan: per sub-layer, each tensor's offset and the KV cache's
// (kNoOffset when not resident), and where the resident region ends (aligned).
struct ResidentOffsets {
  std::vector<std::vector<uint64_t>> tensor;
  std::vector<uint64_t> kv;
  uint64_t end = 0;
};
// The compact layout of one set: sub-layers by (rank, index), each one's tensors then its
// KV cache. `rank` empty: sub-layer order.
ResidentOffsets compact_offsets(const ModelGraph& graph, const CompileOptions& options,
                                const ResidentSet& rs, const std::vector<int>& rank);

// Turns a candidate into a Plan: stream order, VRAM layout (resident buffers at `at`,
// scratch after them; checked against the budget), the simulation's figures at the
// range's end and start.
Result<Plan> finalize_plan(const ModelGraph& graph, const ContextCosts& cc, size_t tier_index,
                           int threads, uint64_t budget, const ResidentSet& rs,
                           const ResidentOffsets& at, const Candidate& c);

//===-- resident experts (compiler/lib/Planner/HotExperts.cpp) ----------------===//

// Aligned VRAM of one resident expert: its slice of each expert tensor, one buffer each.
uint64_t hot_expert_bytes(const SubLayerInfo& s);
// The ids of s's `count` hottest experts, ascending (as an artifact records them).
std::vector<int32_t> hot_expert_ids(const SubLayerInfo& s, int64_t count);

//===-- expert-level MoE (compiler/lib/Planner/ExpertPlacement.cpp) ---------===//

// The cost of MoE sub-layer s (whole: its whole-block costs at `costs.tier`) with `hot`
// experts resident, the next `copied` copied on demand and the rest on the CPU: the copy
// is the router, norms and shared expert plus the expected routed copied experts (priced
// at the whole block's copy rate); the CPU's experts (the whole block's CPU time in
// proportion to their expected bytes, plus the hidden state both ways) run at the same
// time as the copy and the device's experts, so the pass waits for the slower side.
SubLayerCost split_cost(const SubLayerCost& whole, const SubLayerInfo& s,
                        const SubLayerCosts& costs, int64_t hot, int64_t copied);
// `costs` with every split sub-layer of `split` priced by split_cost (quantized).
SubLayerCosts split_costs(const ModelGraph& graph, const SubLayerCosts& costs,
                          const ExpertSplit& split);
// A split from its per-sub-layer counts (as the IR and artifacts carry them): fills its
// bytes and its costs at tc's tier. Empty `level`: the empty split.
ExpertSplit make_split(const ModelGraph& graph, const TierCosts& tc, std::vector<bool> level,
                       std::vector<int64_t> hot, std::vector<int64_t> copied);
// The costs a candidate is simulated with: tc's, with its split's where it has one.
SubLayerCosts candidate_costs(const TierCosts& tc, const Candidate& c);
// Aligned VRAM of one resident expert: its slice of each expert tensor.
uint64_t resident_expert_bytes(const SubLayerInfo& s);
// The resident experts of c's split as kExpert buffers from *offset on (advanced past
// them), and plan->experts: what each expert-level block keeps, copies and runs on the CPU.
void place_resident_experts(const ModelGraph& graph, const TierCosts& tc, const Candidate& c,
                            Plan* plan, uint64_t* offset);
// `base` with its non-resident MoE blocks expert-level where that is faster: hot experts
// in the VRAM left beside its resident set, fixed buffers and slots (chosen greedily by
// time saved per byte), and per layer the split of the others between copies and the
// CPU that the estimator prices fastest; `base` itself when nothing is faster.
Candidate expert_level(const ModelGraph& graph, const TierCosts& tc, uint64_t budget,
                       const ResidentSet& rs, const Candidate& base);

//===-- the steps -------------------------------------------------------------===//

// 1. Costs per context range and tier, every time rounded to whole nanoseconds (the IR's
//    unit, so the passes read back exactly what the direct path plans with). `options`
//    must be normalized (resolved_options).
std::vector<ContextCosts> costs_per_context(const ModelGraph& graph, const MachineModel& machine,
                                            const CompileOptions& options);
// The kernel scratch to reserve: the option when set, else the machine's figure.
uint64_t kernel_workspace_of(const MachineModel& machine, const CompileOptions& o);
// Options as plan_grid resolves them: tiers and budgets sorted, contexts ending at n_ctx,
// threads and kernel scratch from the machine; errors name what is wrong.
Result<CompileOptions> resolved_options(const ModelGraph& graph, const MachineModel& machine,
                                        const CompileOptions& options);
// The costs of one context range given its per-tier SubLayerCosts (the passes rebuild
// them from the IR): fills the fixed bytes of each tier.
ContextCosts context_costs_from(const ModelGraph& graph, const CompileOptions& options,
                                int64_t context, int64_t start, std::vector<SubLayerCosts> at_end,
                                std::vector<SubLayerCosts> at_start);

// 2. The resident sets one (budget, context) is planned on: auto takes every greedy set
//    (each tier's priority order × slot reserves), the layers prefix and the empty set; a
//    forced strategy its one shared set. Budget 0: the empty set.
std::vector<ResidentSet> candidate_sets(const ModelGraph& graph, const ContextCosts& cc,
                                        uint64_t budget);

// 3. The fixed-strategy candidates of one (set, tier), feasible ones only, in the order
//    static, dynamic, gpu-only (auto) or the forced strategy's one; budget 0: CPU only.
std::vector<Candidate> fixed_candidates(const CompileOptions& options, const TierCosts& tc,
                                        uint64_t budget, const ResidentSet& rs);

// 4. Which (set, tier) pairs the local search runs on, from the best fixed seconds of
//    each ([set][tier], infinite when none fits): each tier's two best sets, and the sets
//    best at the first and the last tier at every tier (tiers tend to share those).
//    Nothing when a strategy is forced or the budget is 0.
struct SetTier {
  size_t set = 0, tier = 0;
  bool operator<(const SetTier& o) const { return set != o.set ? set < o.set : tier < o.tier; }
};
std::vector<SetTier> search_shortlist(const CompileOptions& options, uint64_t budget,
                                      const std::vector<std::vector<double>>& best_fixed_seconds);
// The search of one pair: a `search` candidate when it beats every start, else none.
std::optional<Candidate> search_pair(const ModelGraph& graph, const TierCosts& tc, uint64_t budget,
                                     const ResidentSet& rs, const std::vector<Candidate>& starts);

// 5. What one (budget, context) keeps: the distinct resident sets its tiers use and each
//    tier's plan on one of them.
struct BudgetChoice {
  std::vector<ResidentSet> sets;
  std::vector<int> set_of_tier;
  std::vector<Candidate> plan_of_tier;
};
// The CPU-only plans of a context range (the chain every budget's plans improve on).
BudgetChoice cpu_only_choice(const ModelGraph& graph, const ContextCosts& cc);
// The candidates of one (budget, context): per set, per tier, the best candidate found
// (steps 3 and 4; infinite seconds where none fits).
struct SetOptions {
  ResidentSet set;
  std::vector<Candidate> best; // per tier
};
// Picks, per tier, a set and its plan. A forced strategy: its one set everywhere. Auto:
// among these options and the smaller budget's chosen plans (carried over, so no tier is
// ever slower than at a smaller budget or CPU only), the assignment of sets to tiers with
// the least total time of the workload — the passes it runs plus a priced switch wherever
// consecutive passes use different sets; a tier the workload does not run takes the set
// that costs least for one pass between two decode passes (switches included). Cells
// where a forced strategy is faster because of shared sets are added to `trades`.
BudgetChoice select_plans(const ModelGraph& graph, const ContextCosts& cc, uint64_t budget,
                          std::vector<SetOptions> options, const BudgetChoice& smaller,
                          const LinkPricing& link, std::vector<Trade>* trades);

// 6. Each budget's plans laid out in its arena and the switches between them.
//    `rank` (layout_ranks) orders resident buffers so that sets of consecutive budgets
//    nest at the same offsets where they can.
struct LaidOutBudget {
  std::vector<std::vector<Plan>> plans; // [context][tier]
  std::vector<PlanSwitch> switches;
};
Result<LaidOutBudget> lay_out_budget(const ModelGraph& graph, const std::vector<ContextCosts>& ccs,
                                     int threads, uint64_t budget,
                                     const std::vector<BudgetChoice>& choices, // per context
                                     const std::vector<int>& rank, const LinkPricing& link);
// Per budget (ascending) and sub-layer: from which budget on, among consecutive ones, the
// sub-layer has been resident in some plan of the budget (-1: not resident).
std::vector<std::vector<int>> layout_ranks(
    const std::vector<std::vector<BudgetChoice>>& choices_per_budget);
// The switches between a budget's laid-out plans ([context][tier]), priced for the
// workload with `link`.
std::vector<PlanSwitch> switches_between(const ModelGraph& graph,
                                         const std::vector<ContextCosts>& ccs,
                                         const std::vector<std::vector<Plan>>& plans,
                                         const LinkPricing& link);
// The CPU-only plans ([context][tier]).
Result<std::vector<std::vector<Plan>>> cpu_only_plans(const ModelGraph& graph,
                                                      const std::vector<ContextCosts>& ccs,
                                                      int threads);

// The workload as passes: (tier index, count) in the order a request runs them (prompt
// chunks of the largest tier, the remainder's tier, then decode), equal neighbours
// merged, and the cached positions at the switch after each entry.
struct WorkloadStep {
  size_t tier = 0;
  int64_t passes = 0;
  int64_t positions_after = 0;
};
std::vector<WorkloadStep> workload_steps(const CompileOptions& options, int64_t context);
// What a switch moves: weights uploaded, and KV bytes per cached position each way.
struct SwitchBytes {
  uint64_t weights_up = 0;
  uint64_t kv_up_per_position = 0, kv_down_per_position = 0;
  // Of those, the sliding-window layers' rings of `ring` rows (kv_ring_positions).
  uint64_t kv_ring_up_per_position = 0, kv_ring_down_per_position = 0;
  int64_t ring = 0;
  uint64_t state_up = 0, state_down = 0; // recurrent layers' states, whole, per sequence
  int64_t state_slots = 1;               // the sequences whose states move (parallel)
  // Its time with `positions` cached positions at the link's pricing.
  double seconds(int64_t positions, const LinkPricing& link) const;
};
// From set `from` to set `to` when the layout keeps what both hold in place: the weights
// that enter are uploaded, the KV caches that enter or leave move their positions (a
// recurrent layer's, its state).
SwitchBytes switch_bytes(const ModelGraph& graph, const CompileOptions& options,
                         const ResidentSet& from, const ResidentSet& to);

} // namespace pshard::planner::detail
