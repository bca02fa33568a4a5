// plan_grid: budgets × tiers of plans. See Planner.h for the steps; this file strings
// them together and owns the budget ladder and the minimum-budget check.
#include "PlannerInternal.h"

#include <algorithm>
#include <cmath>

namespace pshard::planner {

using detail::Candidate;
using detail::ResidentSet;
using detail::TierCosts;

namespace {

constexpr uint64_t kLadderStep = 64ull << 20; // auto budgets are multiples of 64 MiB
constexpr double kVramHeadroom = 0.9;         // the driver, display and context need the rest

std::string mib(uint64_t bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f MiB", static_cast<double>(bytes) / (1 << 20));
  return buf;
}

std::string kernel_note(uint64_t kernel_workspace) {
  return kernel_workspace == 0 ? std::string()
                               : ", of which " + mib(kernel_workspace) +
                                     " is the GPU backend's kernel scratch";
}

// The kernel scratch to reserve: the option when set, else the machine's figure.
uint64_t kernel_workspace_of(const MachineModel& machine, const CompileOptions& o) {
  return o.kernel_workspace_bytes.value_or(machine.has_gpu() ? machine.kernel_workspace_bytes()
                                                             : 0);
}

TierCosts costs_of_tier(const ModelGraph& graph, const MachineModel& machine,
                        const CompileOptions& o, int64_t tier) {
  const uint64_t kernel = kernel_workspace_of(machine, o);
  return {tier, estimate_costs(graph, machine, tier, o.n_ctx, o.kv_type, o.threads),
          detail::gpu_fixed_bytes_of(graph, tier, kernel),
          detail::workspace_bytes_of(graph, tier, kernel)};
}

Status normalize(const ModelGraph& graph, CompileOptions* o) {
  if (graph.sublayers.empty())
    return invalid_argument("the model graph has no sub-layers");
  if (o->n_ctx < 1)
    return invalid_argument("the context length must be at least 1 (got " + std::to_string(o->n_ctx) + ")");
  if (o->tiers.empty())
    return invalid_argument("no tiers given: pass at least one, e.g. --tiers 1,4,16,64,256");
  std::sort(o->tiers.begin(), o->tiers.end());
  o->tiers.erase(std::unique(o->tiers.begin(), o->tiers.end()), o->tiers.end());
  if (o->tiers.front() < 1)
    return invalid_argument("tiers are token counts and must be ≥ 1");
  std::sort(o->budgets.begin(), o->budgets.end());
  o->budgets.erase(std::unique(o->budgets.begin(), o->budgets.end()), o->budgets.end());
  return Status::ok_status();
}

std::vector<TierCosts> tier_costs(const ModelGraph& graph, const MachineModel& machine,
                                  const CompileOptions& o) {
  std::vector<TierCosts> out;
  for (int64_t tier : o.tiers)
    out.push_back(costs_of_tier(graph, machine, o, tier));
  return out;
}

Candidate candidate_for(const CompileOptions& o, const TierCosts& tc, uint64_t budget,
                        const ResidentSet& rs) {
  switch (o.strategy) {
  case Strategy::kGpuOnly:
  case Strategy::kStatic:
  case Strategy::kDynamic:
    return detail::build_strategy(o.strategy, tc, budget, rs);
  case Strategy::kLayers: {
    Candidate c = detail::build_strategy(Strategy::kStatic, tc, budget, rs);
    c.strategy = Strategy::kLayers;
    return c;
  }
  default:
    return detail::best_fixed(tc, budget, rs);
  }
}

// Time per token summed over tiers: decode (tier 1) weighs most, as it does for users.
double objective(const CompileOptions& o, const std::vector<TierCosts>& tiers, uint64_t budget,
                 const ResidentSet& rs) {
  double total = 0;
  for (const auto& tc : tiers)
    total += candidate_for(o, tc, budget, rs).seconds / static_cast<double>(tc.tier);
  return total;
}

ResidentSet choose_resident_set(const ModelGraph& graph, const CompileOptions& o,
                                const std::vector<TierCosts>& tiers, uint64_t budget) {
  if (o.strategy == Strategy::kLayers)
    return detail::layers_resident_set(graph, o, tiers, budget);
  std::vector<ResidentSet> options = detail::resident_candidates(graph, o, tiers, budget);
  if (o.strategy == Strategy::kAuto)
    options.push_back(detail::layers_resident_set(graph, o, tiers, budget));
  size_t best = 0;
  double best_objective = std::numeric_limits<double>::infinity();
  for (size_t i = 0; i < options.size(); ++i) {
    const double v = objective(o, tiers, budget, options[i]);
    if (v < best_objective) {
      best_objective = v;
      best = i;
    }
  }
  return std::move(options[best]);
}

// The resident set of every budget (none for budget 0), with their layout ranks.
std::vector<ResidentSet> resident_sets(const ModelGraph& graph, const CompileOptions& o,
                                       const std::vector<TierCosts>& tiers) {
  std::vector<ResidentSet> sets;
  for (uint64_t budget : o.budgets)
    sets.push_back(budget == 0 ? detail::make_resident_set(
                                     graph, o, std::vector<bool>(graph.sublayers.size(), false))
                               : choose_resident_set(graph, o, tiers, budget));
  detail::assign_layout_ranks(sets);
  return sets;
}

Result<std::vector<Plan>> plan_budget(const ModelGraph& graph, const CompileOptions& o,
                                      const std::vector<TierCosts>& tiers, uint64_t budget,
                                      const ResidentSet& rs) {
  std::vector<Plan> plans;
  const size_t n = graph.sublayers.size();
  if (budget == 0) { // the CPU-only fallback
    for (const auto& tc : tiers) {
      Candidate c;
      c.strategy = Strategy::kCpuOnly;
      c.placements.assign(n, Placement::kCpu);
      PSHARD_ASSIGN_OR_RETURN(Plan p, detail::finalize_plan(graph, o, o.threads, tc, 0, rs, c));
      plans.push_back(std::move(p));
    }
    return plans;
  }
  std::vector<SubLayerKind> kinds;
  for (const auto& s : graph.sublayers)
    kinds.push_back(s.kind);
  for (const auto& tc : tiers) {
    Candidate c = candidate_for(o, tc, budget, rs);
    if (o.strategy == Strategy::kAuto) {
      // c is the best of these three, so it is among the starts.
      std::vector<Candidate> starts;
      for (Strategy s : {Strategy::kStatic, Strategy::kDynamic, Strategy::kGpuOnly})
        starts.push_back(detail::build_strategy(s, tc, budget, rs));
      c = detail::search_from_starts(tc, budget, rs, kinds, starts);
      c.strategy = detail::describe(c);
    }
    if (!c.feasible())
      return internal_error("no feasible plan for budget " + mib(budget) + ", tier " +
                            std::to_string(tc.tier) + " although it is above the minimum");
    PSHARD_ASSIGN_OR_RETURN(Plan p, detail::finalize_plan(graph, o, o.threads, tc, budget, rs, c));
    plans.push_back(std::move(p));
  }
  return plans;
}

} // namespace

uint64_t minimum_budget(const ModelGraph& graph, const CompileOptions& options) {
  return detail::minimum_budget_with(graph, options, options.kernel_workspace_bytes.value_or(0));
}

uint64_t minimum_budget(const ModelGraph& graph, const MachineModel& machine,
                        const CompileOptions& options) {
  return detail::minimum_budget_with(graph, options, kernel_workspace_of(machine, options));
}

namespace detail {

uint64_t workspace_bytes_of(const ModelGraph& graph, int64_t tier, uint64_t kernel_workspace) {
  return graph.attention_workspace_bytes(tier) + kernel_workspace;
}

uint64_t gpu_fixed_bytes_of(const ModelGraph& graph, int64_t tier, uint64_t kernel_workspace) {
  return align_up(graph.activation_bytes(tier)) +
         align_up(workspace_bytes_of(graph, tier, kernel_workspace));
}

uint64_t minimum_budget_with(const ModelGraph& graph, const CompileOptions& options,
                             uint64_t kernel_workspace) {
  uint64_t smallest_attention = 0;
  bool found = false;
  for (size_t i = 0; i < graph.sublayers.size(); ++i)
    if (graph.sublayers[i].kind == SubLayerKind::kAttention) {
      const uint64_t b = detail::resident_bytes_of(graph, options, i);
      smallest_attention = found ? std::min(smallest_attention, b) : b;
      found = true;
    }
  uint64_t fixed = 0;
  for (int64_t tier : options.tiers)
    fixed = std::max(fixed, gpu_fixed_bytes_of(graph, tier, kernel_workspace));
  return smallest_attention + fixed;
}

} // namespace detail

std::vector<uint64_t> auto_budgets(const ModelGraph& graph, const MachineModel& machine,
                                   const CompileOptions& options) {
  if (!machine.has_gpu())
    return {0};
  const uint64_t lo =
      (minimum_budget(graph, machine, options) + kLadderStep - 1) / kLadderStep * kLadderStep;
  auto hi = static_cast<uint64_t>(static_cast<double>(machine.vram_bytes()) * kVramHeadroom) /
            kLadderStep * kLadderStep;
  if (hi < lo)
    return {};
  // Past full residency a larger budget buys nothing: the ladder ends at the rung that
  // holds every sub-layer with its KV cache and the largest tier's scratch.
  const uint64_t kernel = kernel_workspace_of(machine, options);
  uint64_t full = 0, fixed = 0;
  for (size_t i = 0; i < graph.sublayers.size(); ++i)
    full += detail::align_up(detail::resident_bytes_of(graph, options, i));
  for (int64_t tier : options.tiers)
    fixed = std::max(fixed, detail::gpu_fixed_bytes_of(graph, tier, kernel));
  hi = std::min(hi, std::max(lo, (full + fixed + kLadderStep - 1) / kLadderStep * kLadderStep));
  const int m = std::max(options.max_budgets, 1);
  std::vector<uint64_t> out;
  for (int i = 0; i < m; ++i) {
    const double f = m == 1 ? 1.0 : static_cast<double>(i) / (m - 1);
    const double b = static_cast<double>(lo) * std::pow(static_cast<double>(hi) / static_cast<double>(lo), f);
    const uint64_t rounded = std::max(lo, static_cast<uint64_t>(b) / kLadderStep * kLadderStep);
    if (out.empty() || rounded > out.back())
      out.push_back(rounded);
  }
  return out;
}

Result<PlanGrid> plan_grid(const ModelGraph& graph, const MachineModel& machine,
                           const CompileOptions& options_in) {
  CompileOptions o = options_in;
  PSHARD_RETURN_IF_ERROR(normalize(graph, &o));
  if (o.threads <= 0)
    o.threads = machine.default_threads();
  o.kernel_workspace_bytes = kernel_workspace_of(machine, o);
  const uint64_t minimum = minimum_budget(graph, o);
  const std::string context = " for this model (" + graph.name + ") at context " +
                              std::to_string(o.n_ctx) + " and tiers up to " +
                              std::to_string(o.tiers.back());
  if (o.budgets.empty()) {
    o.budgets = auto_budgets(graph, machine, o);
    if (o.budgets.empty())
      return Status(StatusCode::kOutOfMemory,
                    "the GPU's " + mib(machine.vram_bytes()) + " of VRAM is below the minimum budget " +
                        mib(minimum) + context + "; lower -c or the largest tier, or use --budgets 0");
  }
  for (uint64_t b : o.budgets) {
    if (b > 0 && !machine.has_gpu())
      return invalid_argument("budget " + mib(b) + " asks for VRAM, but the profile has no GPU; "
                              "use --budgets 0 (CPU only) or a profile measured with a GPU");
    if (b > 0 && b < minimum)
      return Status(StatusCode::kOutOfMemory,
                    "budget " + mib(b) + " (" + std::to_string(b) + " B) cannot hold even the " +
                        "smallest plan: the minimum budget is " + mib(minimum) + " (" +
                        std::to_string(minimum) + " B)" + context +
                        " (one attention block with its KV cache, activations and workspace" +
                        kernel_note(*o.kernel_workspace_bytes) +
                        "); raise the budget, lower -c, or use 0 for a CPU-only plan");
  }

  PlanGrid grid;
  grid.budgets = o.budgets;
  grid.tiers = o.tiers;
  grid.options = o;
  grid.model_fingerprint = graph.fingerprint;
  grid.machine = machine.summary();
  grid.minimum_budget_bytes = minimum;
  const std::vector<TierCosts> tiers = tier_costs(graph, machine, o);
  const std::vector<ResidentSet> sets = resident_sets(graph, o, tiers);
  for (size_t b = 0; b < o.budgets.size(); ++b) {
    PSHARD_ASSIGN_OR_RETURN(std::vector<Plan> row,
                            plan_budget(graph, o, tiers, o.budgets[b], sets[b]));
    grid.plans.push_back(std::move(row));
  }
  return grid;
}

Result<Plan> plan_fixed_strategy(const ModelGraph& graph, const MachineModel& machine,
                                 const CompileOptions& options, Strategy strategy, uint64_t budget,
                                 int64_t tier, const std::vector<bool>& resident) {
  if (resident.size() != graph.sublayers.size())
    return invalid_argument("the resident set has " + std::to_string(resident.size()) +
                            " entries for " + std::to_string(graph.sublayers.size()) + " sub-layers");
  CompileOptions o = options;
  if (o.threads <= 0)
    o.threads = machine.default_threads();
  const TierCosts tc = costs_of_tier(graph, machine, o, tier);
  const ResidentSet rs = detail::make_resident_set(graph, o, resident);
  Candidate c = detail::build_strategy(strategy == Strategy::kLayers ? Strategy::kStatic : strategy,
                                       tc, budget, rs);
  c.strategy = strategy;
  if (!c.feasible())
    return Status(StatusCode::kOutOfMemory, std::string("strategy ") + strategy_name(strategy) +
                                                " does not fit budget " + mib(budget) +
                                                " with this resident set");
  return detail::finalize_plan(graph, o, o.threads, tc, budget, rs, c);
}

} // namespace pshard::planner

// plan_grid's steps exposed one by one for the MLIR passes (see PlannerInternal.h).
namespace pshard::planner::detail {

std::vector<TierCosts> costs_per_tier(const ModelGraph& graph, const MachineModel& machine,
                                      const CompileOptions& options) {
  return tier_costs(graph, machine, options);
}

ResidentSet pick_resident_set(const ModelGraph& graph, const CompileOptions& options,
                              const std::vector<TierCosts>& tiers, uint64_t budget) {
  return choose_resident_set(graph, options, tiers, budget);
}

Candidate strategy_candidate(const CompileOptions& options, const TierCosts& tc, uint64_t budget,
                             const ResidentSet& rs) {
  return candidate_for(options, tc, budget, rs);
}

} // namespace pshard::planner::detail
