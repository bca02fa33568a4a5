// pshard-generate-candidates: the reference system's fixed strategies — Static, Dynamic,
// GPU-only — as pshard.plan ops for every (budget, tier), on the budget's resident set.
#include "PlannerBridge.h"
#include "pshard/Dialect/PShard/Transforms/Passes.h"
#include "pshard/Planner/Estimator.h"

using namespace mlir;
namespace pd = pshard::planner::detail;

namespace pshard::ir {
#define GEN_PASS_DEF_GENERATECANDIDATESPASS
#include "pshard/Dialect/PShard/Transforms/Passes.h.inc"

namespace {

// best_fixed's order, so that on a tie pshard-select-plans keeps what plan_grid keeps.
constexpr planner::Strategy kFixedStrategies[] = {
    planner::Strategy::kStatic, planner::Strategy::kDynamic, planner::Strategy::kGpuOnly};

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
      if (!budget.getBody().front().empty())
        return budget.emitOpError("already has plans; candidates are generated once");
      const pd::ResidentSet rs = state->residentSetOf(budget);
      OpBuilder b = OpBuilder::atBlockEnd(&budget.getBody().front());
      for (const pd::TierCosts& tc : state->tiers) {
        std::vector<pd::Candidate> found = candidates(*state, tc, budget.getBudget(), rs);
        if (found.empty())
          return budget.emitOpError("has no plan that fits tier ")
                 << tc.tier
                 << (state->options.strategy == planner::Strategy::kAuto
                         ? ""
                         : " with the forced strategy")
                 << "; raise the budget";
        for (const pd::Candidate& c : found)
          writeCandidate(b, budget.getLoc(), tc.tier, threads, c);
      }
    }
    return success();
  }

  // The feasible candidates of one (budget, tier): CPU only for budget 0, else every fixed
  // strategy (auto) or the forced one.
  std::vector<pd::Candidate> candidates(const ScheduleState& state, const pd::TierCosts& tc,
                                        uint64_t budget, const pd::ResidentSet& rs) {
    std::vector<pd::Candidate> out;
    if (budget == 0) {
      pd::Candidate c;
      c.strategy = planner::Strategy::kCpuOnly;
      c.placements.assign(rs.resident.size(), planner::Placement::kCpu);
      c.seconds = planner::simulate_seconds(tc.costs, c.placements, 0, 0);
      out.push_back(std::move(c));
      return out;
    }
    if (state.options.strategy != planner::Strategy::kAuto) {
      pd::Candidate c = pd::strategy_candidate(state.options, tc, budget, rs);
      if (c.feasible())
        out.push_back(std::move(c));
      return out;
    }
    for (planner::Strategy s : kFixedStrategies) {
      pd::Candidate c = pd::build_strategy(s, tc, budget, rs);
      if (c.feasible())
        out.push_back(std::move(c));
    }
    return out;
  }
};

} // namespace
} // namespace pshard::ir
