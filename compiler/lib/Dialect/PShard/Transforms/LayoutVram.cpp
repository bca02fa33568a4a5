// pshard-layout-vram: every buffer of a plan at an offset in one VRAM arena, through the
// planner's finalize_plan (the same layout pshard-compile's direct path writes), with the
// stream order, prefetch depth and the simulation's final times.
#include "PlannerBridge.h"
#include "pshard/Dialect/PShard/Transforms/Passes.h"

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
    for (BudgetOp budget : schedule.getBody().front().getOps<BudgetOp>()) {
      const pd::ResidentSet rs = state->residentSetOf(budget);
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
