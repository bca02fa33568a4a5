// pshard-layout-vram: every buffer of a plan at an offset in one VRAM arena, through the
// planner's finalize_plan (the same layout pshard-compile's direct path writes), with the
// stream order, prefetch depth and the simulation's final times.
#include "PlannerBridge.h"
#include "pshard/Dialect/PShard/Transforms/Passes.h"

#include <algorithm>
#include <vector>

using namespace mlir;
namespace pd = pshard::planner::detail;

namespace pshard::ir {
#define GEN_PASS_DEF_LAYOUTVRAMPASS
#include "pshard/Dialect/PShard/Transforms/Passes.h.inc"

namespace {

struct LayoutVramPass : impl::LayoutVramPassBase<LayoutVramPass> {
  using Base::Base;

  void runOnOperation() override {
    for (ScheduleOp schedule : getOperation().getOps<ScheduleOp>())
      if (failed(layout(schedule)))
        return signalPassFailure();
  }

  LogicalResult layout(ScheduleOp schedule) {
    FailureOr<ScheduleState> state = ScheduleState::load(schedule, "auto");
    if (failed(state))
      return failure();
    const int threads = static_cast<int>(schedule.getThreads());
    // Every budget's resident set first: their layout ranks depend on all of them.
    std::vector<BudgetOp> budgets;
    for (BudgetOp budget : schedule.getBody().front().getOps<BudgetOp>())
      budgets.push_back(budget);
    std::stable_sort(budgets.begin(), budgets.end(), [](BudgetOp a, BudgetOp b) {
      return a.getBudget() < b.getBudget();
    });
    std::vector<pd::ResidentSet> sets;
    for (BudgetOp budget : budgets)
      sets.push_back(state->residentSetOf(budget));
    pd::assign_layout_ranks(sets);
    for (size_t b = 0; b < budgets.size(); ++b) {
      BudgetOp budget = budgets[b];
      const pd::ResidentSet& rs = sets[b];
      for (PlanOp plan : budget.getBody().front().getOps<PlanOp>()) {
        const pd::TierCosts* tc = state->costsOf(static_cast<int64_t>(plan.getTier()));
        if (!tc)
          return plan.emitOpError("is for tier ") << plan.getTier() << ", which has no costs";
        Result<planner::Plan> laid =
            pd::finalize_plan(state->graph, state->options, threads, *tc, budget.getBudget(), rs,
                              state->candidateOf(plan));
        if (!laid.ok())
          return plan.emitOpError("cannot be laid out: ") << laid.status().message();
        writeFinalPlan(plan, state->graph, *laid);
      }
    }
    return success();
  }
};

} // namespace
} // namespace pshard::ir
