// plan_grid: budgets × context ranges × tiers of plans. See Planner.h for the steps and
// PlannerInternal.h for the function behind each; this file strings them together and
// owns the budget ladder and the minimum-budget check.
#include "PlannerInternal.h"
#include "runtime/model/kv_ring.h"

#include <algorithm>
#include <cmath>

namespace pshard::planner {

using detail::BudgetChoice;
using detail::Candidate;
using detail::ContextCosts;
using detail::ResidentSet;
using detail::SetOptions;
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

// Steps 2 to 5 for one (budget, context): the candidates of every resident set and tier,
// the search over the shortlisted ones, and the selection.
BudgetChoice plan_budget(const ModelGraph& graph, const ContextCosts& cc, uint64_t budget,
                         const BudgetChoice& smaller, const LinkPricing& link,
                         std::vector<Trade>* trades) {
  std::vector<SetOptions> options;
  std::vector<std::vector<std::vector<Candidate>>> fixed; // [set][tier]
  std::vector<std::vector<double>> best_fixed;
  for (ResidentSet& rs : detail::candidate_sets(graph, cc, budget)) {
    SetOptions o{std::move(rs), std::vector<Candidate>(cc.tiers.size())};
    fixed.emplace_back();
    best_fixed.emplace_back();
    for (size_t t = 0; t < cc.tiers.size(); ++t) {
      fixed.back().push_back(detail::fixed_candidates(cc.options, cc.tiers[t], budget, o.set));
      for (const Candidate& c : fixed.back().back())
        if (c.seconds < o.best[t].seconds)
          o.best[t] = c;
      best_fixed.back().push_back(o.best[t].seconds);
    }
    options.push_back(std::move(o));
  }
  for (const detail::SetTier& p : detail::search_shortlist(cc.options, budget, best_fixed))
    if (auto found = detail::search_pair(graph, cc.tiers[p.tier], budget, options[p.set].set,
                                         fixed[p.set][p.tier]))
      options[p.set].best[p.tier] = std::move(*found);
  return detail::select_plans(graph, cc, budget, std::move(options), smaller, link, trades);
}

} // namespace

uint64_t minimum_budget(const ModelGraph& graph, const CompileOptions& options) {
  return detail::minimum_budget_with(graph, options, options.kernel_workspace_bytes.value_or(0));
}

uint64_t minimum_budget(const ModelGraph& graph, const MachineModel& machine,
                        const CompileOptions& options) {
  return detail::minimum_budget_with(graph, options, detail::kernel_workspace_of(machine, options));
}

int64_t kv_ring_positions(const ModelGraph& graph, const CompileOptions& options) {
  if (options.kv_ring)
    return *options.kv_ring;
  if (options.tiers.empty())
    return 0;
  int64_t widest = 0;
  for (const SubLayerInfo& s : graph.sublayers)
    widest = std::max(widest, s.kind == SubLayerKind::kAttention ? s.attn_window : 0);
  // The compiled context, not a shorter range's: the runtime keeps one ring for all.
  const int64_t n_ctx = options.contexts.empty() ? options.n_ctx : options.contexts.back();
  if (options.parallel <= 1)
    return pshard::kv_ring_positions(widest, options.tiers.back(), n_ctx);
  // Several sequences: the sliding-window layers' page pool in the engines' pages.
  const int64_t full = options.parallel * ((n_ctx + kKvPageTokens - 1) / kKvPageTokens);
  const int64_t pool =
      window_pool_pages(widest, kKvPageTokens, options.tiers.back(), options.parallel, full);
  return widest > 0 && pool < full ? pool * kKvPageTokens : 0;
}

namespace detail {

uint64_t workspace_bytes_of(const ModelGraph& graph, int64_t tier, uint64_t kernel_workspace) {
  return graph.attention_workspace_bytes(tier) + kernel_workspace;
}

uint64_t activation_bytes_of(const ModelGraph& graph, int64_t tier, int64_t parallel) {
  return graph.activation_bytes(tier, std::clamp<int64_t>(parallel, 1, tier));
}

uint64_t kv_buffer_bytes_of(const ModelGraph& graph, const SubLayerInfo& s,
                            const CompileOptions& options) {
  const int64_t positions = options.n_ctx * std::max<int64_t>(options.parallel, 1);
  const int64_t ring = s.attn_window > 0 ? kv_ring_positions(graph, options) : 0;
  if (s.recurrent()) // one state per sequence
    return s.state_bytes(options.kv_type) *
           static_cast<uint64_t>(std::max<int64_t>(options.parallel, 1));
  return s.kv_bytes_per_token(options.kv_type) *
         static_cast<uint64_t>(s.kv_positions_held(ring, positions));
}

uint64_t gpu_fixed_bytes_of(const ModelGraph& graph, int64_t tier, uint64_t kernel_workspace,
                            int64_t parallel) {
  return align_up(activation_bytes_of(graph, tier, parallel)) +
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
    fixed = std::max(fixed, gpu_fixed_bytes_of(graph, tier, kernel_workspace, options.parallel));
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
  const uint64_t kernel = detail::kernel_workspace_of(machine, options);
  uint64_t full = 0, fixed = 0;
  for (size_t i = 0; i < graph.sublayers.size(); ++i)
    full += detail::align_up(detail::resident_bytes_of(graph, options, i));
  for (int64_t tier : options.tiers)
    fixed = std::max(fixed, detail::gpu_fixed_bytes_of(graph, tier, kernel, options.parallel));
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
  PSHARD_ASSIGN_OR_RETURN(CompileOptions o, detail::resolved_options(graph, machine, options_in));
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
  grid.contexts = o.contexts;
  grid.options = o;
  grid.model_fingerprint = graph.fingerprint;
  grid.machine = machine.summary();
  grid.minimum_budget_bytes = minimum;
  grid.link = link_pricing(machine);
  const std::vector<ContextCosts> ccs = detail::costs_per_context(graph, machine, o);
  PSHARD_ASSIGN_OR_RETURN(grid.cpu_only, detail::cpu_only_plans(graph, ccs, o.threads));

  // Budgets ascending per context range: each budget's choice bounds the next one's.
  std::vector<std::vector<BudgetChoice>> choices(o.budgets.size());
  for (const ContextCosts& cc : ccs) {
    BudgetChoice smaller = detail::cpu_only_choice(graph, cc);
    for (size_t b = 0; b < o.budgets.size(); ++b) {
      choices[b].push_back(plan_budget(graph, cc, o.budgets[b], smaller, grid.link, &grid.trades));
      smaller = choices[b].back();
    }
  }
  const std::vector<std::vector<int>> ranks = detail::layout_ranks(choices);
  for (size_t b = 0; b < o.budgets.size(); ++b) {
    PSHARD_ASSIGN_OR_RETURN(detail::LaidOutBudget laid,
                            detail::lay_out_budget(graph, ccs, o.threads, o.budgets[b], choices[b],
                                                   ranks[b], grid.link));
    grid.plans.push_back(std::move(laid.plans));
    grid.switches.push_back(std::move(laid.switches));
  }
  sort_trades(&grid.trades);
  return grid;
}

Result<Plan> plan_fixed_strategy(const ModelGraph& graph, const MachineModel& machine,
                                 const CompileOptions& options, Strategy strategy, uint64_t budget,
                                 int64_t tier, const std::vector<bool>& resident) {
  if (resident.size() != graph.sublayers.size())
    return invalid_argument("the resident set has " + std::to_string(resident.size()) +
                            " entries for " + std::to_string(graph.sublayers.size()) + " sub-layers");
  CompileOptions o = options;
  o.tiers = {tier};
  o.contexts.clear();
  PSHARD_ASSIGN_OR_RETURN(o, detail::resolved_options(graph, machine, o));
  const ContextCosts cc = detail::costs_per_context(graph, machine, o).back();
  const ResidentSet rs = detail::make_resident_set(graph, cc.options, resident);
  Candidate c = detail::build_strategy(strategy == Strategy::kLayers ? Strategy::kStatic : strategy,
                                       cc.tiers[0], budget, rs);
  c.strategy = strategy;
  if (!c.feasible())
    return Status(StatusCode::kOutOfMemory, std::string("strategy ") + strategy_name(strategy) +
                                                " does not fit budget " + mib(budget) +
                                                " with this resident set");
  return detail::finalize_plan(graph, cc, 0, o.threads, budget, rs,
                               detail::compact_offsets(graph, cc.options, rs, {}), c);
}

Result<Plan> plan_at_context(const ModelGraph& graph, const MachineModel& machine,
                             const CompileOptions& options, const Plan& plan, int64_t n_ctx) {
  CompileOptions o = options;
  o.tiers = {plan.tier};
  o.contexts.clear();
  o.n_ctx = n_ctx;
  PSHARD_ASSIGN_OR_RETURN(o, detail::resolved_options(graph, machine, o));
  const ContextCosts cc = detail::costs_per_context(graph, machine, o).back();
  const TierCosts& tc = cc.tiers[0];
  const size_t n = graph.sublayers.size();
  // Resident while the set and one slot for the largest streamed need fit the budget.
  std::vector<size_t> order;
  for (size_t i = 0; i < n; ++i)
    if (plan.placements[i] == Placement::kGpuResident && graph.sublayers[i].kind == SubLayerKind::kAttention)
      order.push_back(i);
  for (size_t i = 0; i < n; ++i)
    if (plan.placements[i] == Placement::kGpuResident && graph.sublayers[i].kind != SubLayerKind::kAttention)
      order.push_back(i);
  for (size_t keep = order.size() + 1; keep-- > 0;) {
    std::vector<bool> resident(n, false);
    for (size_t k = 0; k < keep; ++k)
      resident[order[k]] = true;
    const ResidentSet rs = detail::make_resident_set(graph, cc.options, resident);
    Candidate c;
    c.strategy = Strategy::kSearch;
    c.placements = plan.placements;
    for (size_t i = 0; i < n; ++i)
      if (plan.placements[i] == Placement::kGpuResident && !resident[i])
        c.placements[i] = Placement::kGpuStreamed;
    detail::finish_candidate(tc, plan.budget_bytes, rs, &c);
    if (!c.feasible())
      continue;
    c.strategy = detail::describe(c);
    return detail::finalize_plan(graph, cc, 0, o.threads, plan.budget_bytes, rs,
                                 detail::compact_offsets(graph, cc.options, rs, {}), c);
  }
  return Status(StatusCode::kOutOfMemory,
                "the plan for budget " + mib(plan.budget_bytes) + ", tier " +
                    std::to_string(plan.tier) + " cannot run at context " + std::to_string(n_ctx) +
                    ": not even one streaming slot fits beside its scratch");
}

} // namespace pshard::planner
