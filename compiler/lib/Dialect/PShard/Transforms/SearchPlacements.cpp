// pshard-search-placements: local search — moving whole kinds of sub-layers, then one
// sub-layer at a time, between the CPU and GPU streaming — from every fixed-strategy
// candidate of the (resident set, tier) pairs planner::detail::search_shortlist picks;
// the result joins the candidates as a `search` plan when it beats them all.
#include "PlannerBridge.h"
#include "pshard/Dialect/PShard/Transforms/Passes.h"

#include <map>

using namespace mlir;
namespace pd = pshard::planner::detail;

namespace pshard::ir {
#define GEN_PASS_DEF_SEARCHPLACEMENTSPASS
#include "pshard/Dialect/PShard/Transforms/Passes.h.inc"

namespace {

struct SearchPlacementsPass : impl::SearchPlacementsPassBase<SearchPlacementsPass> {
  using Base::Base;

  void runOnOperation() override {
    for (ScheduleOp schedule : getOperation().getOps<ScheduleOp>())
      if (failed(search(schedule)))
        return signalPassFailure();
  }

  LogicalResult search(ScheduleOp schedule) {
    WalkResult searched = schedule.walk([](PlanOp plan) {
      if (plan.getStrategy() != Strategy::Search)
        return WalkResult::advance();
      plan.emitOpError("is already a search result; placements are searched once");
      return WalkResult::interrupt();
    });
    if (searched.wasInterrupted())
      return failure();
    FailureOr<ScheduleState> state = ScheduleState::load(schedule, strategy);
    if (failed(state))
      return failure();
    for (BudgetOp budget : schedule.getBody().front().getOps<BudgetOp>())
      if (failed(searchBudget(*state, budget)))
        return failure();
    return success();
  }

  LogicalResult searchBudget(const ScheduleState& state, BudgetOp budget) {
    const pd::ContextCosts* cc = state.costsOf(budget);
    if (!cc)
      return budget.emitOpError("is for context ") << budget.getContext() << ", which has no costs";
    const std::vector<pd::ResidentSet> sets = state.residentSetsOf(budget);
    const size_t n_tiers = cc->tiers.size();
    // The candidates of each (set, tier) in order, their seconds recomputed (so that
    // nanosecond rounding in the IR cannot make an equal plan look faster).
    std::map<pd::SetTier, std::pair<std::vector<pd::Candidate>, PlanOp>> pairs;
    std::vector<std::vector<double>> best(sets.size(),
                                          std::vector<double>(n_tiers, pd::Candidate().seconds));
    for (PlanOp plan : budget.getBody().front().getOps<PlanOp>()) {
      const size_t t = state.tierIndexOf(plan.getTier());
      if (t == n_tiers || plan.getSet() >= sets.size())
        return plan.emitOpError("is for tier ") << plan.getTier() << " or a set its budget lacks";
      pd::Candidate c = state.finishedCandidateOf(budget, plan, sets[plan.getSet()]);
      best[plan.getSet()][t] = std::min(best[plan.getSet()][t], c.seconds);
      auto& entry = pairs[{plan.getSet(), t}];
      entry.first.push_back(std::move(c));
      entry.second = plan;
    }
    for (const pd::SetTier& p : pd::search_shortlist(cc->options, budget.getBudget(), best)) {
      auto& [starts, last] = pairs[p];
      std::optional<pd::Candidate> found =
          pd::search_pair(state.graph, cc->tiers[p.tier], budget.getBudget(), sets[p.set], starts);
      if (!found)
        continue;
      OpBuilder b(last.getContext());
      b.setInsertionPointAfter(last);
      writeCandidate(b, last.getLoc(), cc->tiers[p.tier].tier, p.set,
                     static_cast<int64_t>(last.getThreads()), *found);
    }
    return success();
  }
};

} // namespace
} // namespace pshard::ir
