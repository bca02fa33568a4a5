// pshard-select-plans: the fastest plan of each (budget, tier) is the one the runtime
// gets. It is chosen among candidates that include every fixed strategy, so it is never
// predicted slower than any of them.
#include "PlannerBridge.h"
#include "pshard/Dialect/PShard/Transforms/Passes.h"

#include "llvm/ADT/MapVector.h"

using namespace mlir;
namespace pd = pshard::planner::detail;

namespace pshard::ir {
#define GEN_PASS_DEF_SELECTPLANSPASS
#include "pshard/Dialect/PShard/Transforms/Passes.h.inc"

namespace {

struct SelectPlansPass : impl::SelectPlansPassBase<SelectPlansPass> {
  using Base::Base;

  void runOnOperation() override {
    getOperation().walk([&](BudgetOp budget) { select(budget); });
  }

  void select(BudgetOp budget) {
    // Per tier, the first plan with the least predicted time: a fixed strategy wins a tie
    // with a search result that comes after it.
    llvm::MapVector<uint64_t, PlanOp> best;
    SmallVector<PlanOp> plans(budget.getBody().front().getOps<PlanOp>());
    for (PlanOp plan : plans) {
      auto [it, inserted] = best.insert({plan.getTier(), plan});
      if (!inserted && plan.getTimeNs() < it->second.getTimeNs())
        it->second = plan;
    }
    for (PlanOp plan : plans) {
      bool chosen = best.lookup(plan.getTier()) == plan;
      if (chosen) {
        plan.setSelected(true);
        // Name the choice by what it does, as plan_grid does when it searched: all on
        // the GPU reads gpu_only, nothing streamed static, whatever found it.
        if (strategy == "auto" && plan.getStrategy() != Strategy::CpuOnly) {
          pd::Candidate c;
          c.strategy = static_cast<planner::Strategy>(static_cast<uint32_t>(plan.getStrategy()));
          c.placements = placementsOf(plan.getPlacements());
          plan.setStrategy(static_cast<Strategy>(static_cast<uint32_t>(pd::describe(c))));
        }
      } else if (keepCandidates)
        plan.setSelected(false);
      else
        plan.erase();
    }
  }
};

} // namespace
} // namespace pshard::ir
