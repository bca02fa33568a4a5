// pshard-select-plans: per (budget, context range), a resident set and a plan for every
// tier (planner::detail::select_plans): the assignment of sets to tiers with the least
// workload time, never slower at any tier than the smaller budget's choice (or CPU only).
// The chosen sets and plans are written as the budget's selected ones; trades where
// sharing a set made a tier slower than a forced strategy become pshard.trade ops.
#include "PlannerBridge.h"
#include "pshard/Dialect/PShard/Transforms/Passes.h"

using namespace mlir;
namespace pd = pshard::planner::detail;

namespace pshard::ir {
#define GEN_PASS_DEF_SELECTPLANSPASS
#include "pshard/Dialect/PShard/Transforms/Passes.h.inc"

namespace {

struct SelectPlansPass : impl::SelectPlansPassBase<SelectPlansPass> {
  using Base::Base;

  void runOnOperation() override {
    for (ScheduleOp schedule : getOperation().getOps<ScheduleOp>())
      if (failed(select(schedule)))
        return signalPassFailure();
  }

  LogicalResult select(ScheduleOp schedule) {
    FailureOr<ScheduleState> state = ScheduleState::load(schedule, strategy);
    if (failed(state))
      return failure();
    // Budgets ascend within each context range: each choice bounds the next budget's.
    for (size_t k = 0; k < state->contexts.size(); ++k) {
      const pd::ContextCosts& cc = state->contexts[k];
      pd::BudgetChoice smaller = pd::cpu_only_choice(state->graph, cc);
      for (BudgetOp budget : schedule.getBody().front().getOps<BudgetOp>()) {
        if (state->contextIndexOf(budget) != k)
          continue;
        FailureOr<pd::BudgetChoice> chosen = selectBudget(*state, cc, budget, smaller);
        if (failed(chosen))
          return failure();
        smaller = std::move(*chosen);
      }
    }
    return success();
  }

  FailureOr<pd::BudgetChoice> selectBudget(const ScheduleState& state, const pd::ContextCosts& cc,
                                           BudgetOp budget, const pd::BudgetChoice& smaller) {
    Block& body = budget.getBody().front();
    const std::vector<pd::ResidentSet> sets = state.residentSetsOf(budget);
    std::vector<pd::SetOptions> options;
    for (const pd::ResidentSet& rs : sets)
      options.push_back({rs, std::vector<pd::Candidate>(cc.tiers.size())});
    // Per (set, tier) the first candidate with the least time: a fixed strategy wins a tie
    // with a search result that comes after it.
    for (PlanOp plan : body.getOps<PlanOp>()) {
      if (plan.getSelected())
        return plan.emitOpError("is already selected; plans are selected once");
      const size_t t = state.tierIndexOf(plan.getTier());
      if (t == cc.tiers.size() || plan.getSet() >= sets.size())
        return plan.emitOpError("is for tier ") << plan.getTier() << " or a set its budget lacks";
      pd::Candidate c = state.finishedCandidateOf(budget, plan, sets[plan.getSet()]);
      if (c.seconds < options[plan.getSet()].best[t].seconds)
        options[plan.getSet()].best[t] = std::move(c);
    }
    std::vector<planner::Trade> trades;
    pd::BudgetChoice choice = pd::select_plans(state.graph, cc, budget.getBudget(),
                                               std::move(options), smaller, state.link, &trades);
    for (size_t t = 0; t < choice.plan_of_tier.size(); ++t)
      if (!choice.plan_of_tier[t].feasible())
        return budget.emitOpError("has no plan that fits tier ")
               << cc.tiers[t].tier << "; raise the budget";

    // The choice replaces the candidates (or follows them, with keep-candidates).
    size_t first_set = 0;
    if (keepCandidates) {
      first_set = sets.size();
    } else {
      for (Operation& op : llvm::make_early_inc_range(body))
        op.erase();
    }
    OpBuilder b = OpBuilder::atBlockEnd(&body);
    const int64_t threads =
        static_cast<int64_t>(budget->getParentOfType<ScheduleOp>().getThreads());
    for (size_t s = 0; s < choice.sets.size(); ++s)
      writeResidentSet(b, budget.getLoc(), state.graph, first_set + s, choice.sets[s]);
    for (size_t t = 0; t < choice.plan_of_tier.size(); ++t) {
      PlanOp plan = writeCandidate(b, budget.getLoc(), cc.tiers[t].tier,
                                   first_set + static_cast<size_t>(choice.set_of_tier[t]), threads,
                                   choice.plan_of_tier[t]);
      plan.setSelected(true);
    }
    for (const planner::Trade& trade : trades)
      writeTrade(b, budget.getLoc(), trade);
    return choice;
  }
};

} // namespace
} // namespace pshard::ir
