// pshard-generate-candidates: the reference system's fixed strategies — Static, Dynamic,
// GPU-only — as pshard.plan ops for every (resident set, tier) of every budget
// (planner::detail::fixed_candidates).
#include "PlannerBridge.h"
#include "pshard/Dialect/PShard/Transforms/Passes.h"

using namespace mlir;
namespace pd = pshard::planner::detail;

namespace pshard::ir {
#define GEN_PASS_DEF_GENERATECANDIDATESPASS
#include "pshard/Dialect/PShard/Transforms/Passes.h.inc"

namespace {

struct GenerateCandidatesPass : impl::GenerateCandidatesPassBase<GenerateCandidatesPass> {
  using Base::Base;

  void runOnOperation() override {
    for (ScheduleOp schedule : getOperation().getOps<ScheduleOp>())
      if (failed(generate(schedule)))
        return signalPassFailure();
  }

  LogicalResult generate(ScheduleOp schedule) {
    FailureOr<ScheduleState> state = ScheduleState::load(schedule, strategy);
    if (failed(state))
      return failure();
    const int64_t threads = static_cast<int64_t>(schedule.getThreads());
    for (BudgetOp budget : schedule.getBody().front().getOps<BudgetOp>()) {
      if (!budget.getBody().front().getOps<PlanOp>().empty())
        return budget.emitOpError("already has plans; candidates are generated once");
      const pd::ContextCosts* cc = state->costsOf(budget);
      if (!cc)
        return budget.emitOpError("is for context ")
               << budget.getContext() << ", which has no costs";
      const std::vector<pd::ResidentSet> sets = state->residentSetsOf(budget);
      OpBuilder b = OpBuilder::atBlockEnd(&budget.getBody().front());
      for (const pd::TierCosts& tc : cc->tiers) {
        bool any = false;
        for (size_t s = 0; s < sets.size(); ++s)
          for (const pd::Candidate& c :
               pd::fixed_candidates(cc->options, tc, budget.getBudget(), sets[s])) {
            writeCandidate(b, budget.getLoc(), tc.tier, s, threads, c);
            any = true;
          }
        if (!any)
          return budget.emitOpError("has no plan that fits tier ")
                 << tc.tier
                 << (state->options.strategy == planner::Strategy::kAuto
                         ? ""
                         : " with the forced strategy")
                 << "; raise the budget";
      }
    }
    return success();
  }
};

} // namespace
} // namespace pshard::ir
