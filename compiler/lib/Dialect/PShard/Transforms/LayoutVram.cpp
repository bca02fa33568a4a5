// pshard-layout-vram: every buffer of each selected plan at an offset in its budget's VRAM
// arena (planner::detail::lay_out_budget, the layout pshard-compile's direct path
// writes): the budget's resident sets laid out jointly so a buffer two plans hold sits at
// one offset, then each plan's slots, activations and workspace; with the stream order,
// prefetch depth, the simulation's final times and the switches between the plans.
#include "PlannerBridge.h"
#include "pshard/Dialect/PShard/Transforms/Passes.h"

#include <algorithm>
#include <map>
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
    // Every budget's choices first (per context range): the layout ranks depend on all.
    std::map<uint64_t, std::vector<BudgetOp>> byBudget;
    for (BudgetOp budget : schedule.getBody().front().getOps<BudgetOp>())
      byBudget[budget.getBudget()].push_back(budget);
    std::vector<std::vector<pd::BudgetChoice>> choices;
    for (auto& [bytes, ops] : byBudget) {
      if (ops.size() != state->contexts.size())
        return ops.front().emitOpError("has plans for ")
               << ops.size() << " of the schedule's " << state->contexts.size()
               << " context ranges";
      std::sort(ops.begin(), ops.end(),
                [](BudgetOp a, BudgetOp b) { return a.getContext() < b.getContext(); });
      choices.emplace_back();
      for (BudgetOp op : ops) {
        FailureOr<pd::BudgetChoice> c = state->choiceOf(op);
        if (failed(c))
          return failure();
        choices.back().push_back(std::move(*c));
      }
    }
    const std::vector<std::vector<int>> ranks = pd::layout_ranks(choices);
    size_t b = 0;
    for (auto& [bytes, ops] : byBudget) {
      Result<pd::LaidOutBudget> laid = pd::lay_out_budget(state->graph, state->contexts, threads,
                                                          bytes, choices[b], ranks[b], state->link);
      if (!laid.ok())
        return ops.front().emitOpError("cannot be laid out: ") << laid.status().message();
      for (size_t k = 0; k < ops.size(); ++k) {
        Block& body = ops[k].getBody().front();
        for (SwitchOp old : llvm::make_early_inc_range(body.getOps<SwitchOp>()))
          old.erase();
        for (PlanOp plan : body.getOps<PlanOp>())
          if (plan.getSelected())
            writeFinalPlan(plan, state->graph, laid->plans[k][state->tierIndexOf(plan.getTier())]);
        OpBuilder builder = OpBuilder::atBlockEnd(&body);
        for (const planner::PlanSwitch& s : laid->switches)
          if (s.from_context == static_cast<int64_t>(ops[k].getContext()))
            writeSwitch(builder, ops[k].getLoc(), s);
      }
      ++b;
    }
    return success();
  }
};

} // namespace
} // namespace pshard::ir
