// pshard-search-placements: local search from every fixed-strategy candidate — moving
// whole kinds of sub-layers, then one sub-layer at a time, between the CPU and GPU
// streaming — as plan_grid does; the best result joins the candidates as a `search` plan
// when the simulation says it beats them all.
#include "PlannerBridge.h"
#include "pshard/Dialect/PShard/Transforms/Passes.h"

#include "llvm/ADT/MapVector.h"

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
    if (strategy != "auto") // a forced strategy is compared as it is, unsearched
      return success();
    FailureOr<ScheduleState> state = ScheduleState::load(schedule, "auto");
    if (failed(state))
      return failure();
    std::vector<planner::SubLayerKind> kinds;
    for (const planner::SubLayerInfo& s : state->graph.sublayers)
      kinds.push_back(s.kind);
    for (BudgetOp budget : schedule.getBody().front().getOps<BudgetOp>()) {
      if (budget.getBudget() == 0) // CPU only: nothing to place
        continue;
      // The candidates of each tier, in order, so the search starts from every one of
      // them: the fixed strategies sit in different basins.
      llvm::MapVector<uint64_t, SmallVector<PlanOp>> perTier;
      for (PlanOp plan : budget.getBody().front().getOps<PlanOp>())
        perTier[plan.getTier()].push_back(plan);
      const pd::ResidentSet rs = state->residentSetOf(budget);
      for (auto& [tier, plans] : perTier) {
        const pd::TierCosts* tc = state->costsOf(static_cast<int64_t>(tier));
        if (!tc)
          return plans.front().emitOpError("is for tier ") << tier << ", which has no costs";
        std::vector<pd::Candidate> starts;
        pd::Candidate best;
        for (PlanOp plan : plans) {
          // Recomputed rather than read back, so that nanosecond rounding in the IR
          // cannot make an equal plan look faster.
          pd::Candidate start = state->candidateOf(plan);
          pd::finish_candidate(*tc, budget.getBudget(), rs, &start);
          if (start.seconds < best.seconds)
            best = start;
          starts.push_back(std::move(start));
        }
        pd::Candidate found = pd::search_from_starts(*tc, budget.getBudget(), rs, kinds, starts);
        if (!(found.seconds < best.seconds)) // no flip helped: the fixed strategies stand
          continue;
        found.strategy = planner::Strategy::kSearch;
        OpBuilder b(plans.back().getContext());
        b.setInsertionPointAfter(plans.back());
        writeCandidate(b, plans.back().getLoc(), static_cast<int64_t>(tier),
                       static_cast<int64_t>(schedule.getThreads()), found);
      }
    }
    return success();
  }
};

} // namespace
} // namespace pshard::ir
