// pshard-choose-resident-set: one pshard.budget per (VRAM budget, context range), holding
// the resident sets its plans are built on (planner::detail::candidate_sets).
#include "PlannerBridge.h"
#include "pshard/Dialect/PShard/Transforms/Passes.h"
#include "pshard/Planner/Planner.h"

using namespace mlir;

namespace pshard::ir {
#define GEN_PASS_DEF_CHOOSERESIDENTSETPASS
#include "pshard/Dialect/PShard/Transforms/Passes.h.inc"

namespace {

struct ChooseResidentSetPass : impl::ChooseResidentSetPassBase<ChooseResidentSetPass> {
  using Base::Base;

  void runOnOperation() override {
    for (ScheduleOp schedule : getOperation().getOps<ScheduleOp>())
      if (failed(choose(schedule)))
        return signalPassFailure();
  }

  // The budgets the option asks for, ascending; `auto` is the planner's ladder up to the
  // VRAM the schedule's machine has.
  FailureOr<std::vector<uint64_t>> budgetsFor(ScheduleOp schedule, const ScheduleState& state) {
    std::vector<uint64_t> out;
    bool automatic = budgets.empty();
    for (const std::string& text : budgets) {
      if (text == "auto") {
        automatic = true;
      } else if (std::optional<uint64_t> bytes = parseBudget(text)) {
        out.push_back(*bytes);
      } else {
        return schedule.emitOpError("cannot read budget '")
               << text << "': give bytes with an optional K, M or G suffix, or auto";
      }
    }
    if (automatic) {
      planner::FixedMachineParams params;
      params.has_gpu = schedule.getVram() > 0;
      params.vram_bytes = schedule.getVram();
      std::vector<uint64_t> ladder =
          planner::auto_budgets(state.graph, planner::FixedMachineModel(params), state.options);
      if (ladder.empty())
        return schedule.emitOpError("the machine's ")
               << schedule.getVram() << " bytes of VRAM are below the minimum budget of "
               << planner::minimum_budget(state.graph, state.options)
               << " bytes; give budgets explicitly, or 0 for CPU only";
      out.insert(out.end(), ladder.begin(), ladder.end());
    }
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    return out;
  }

  LogicalResult choose(ScheduleOp schedule) {
    Block& body = schedule.getBody().front();
    if (!body.getOps<BudgetOp>().empty())
      return schedule.emitOpError("already has budgets; resident sets are chosen once");
    FailureOr<ScheduleState> state = ScheduleState::load(schedule, strategy);
    if (failed(state))
      return failure();
    if (state->contexts.empty())
      return schedule.emitOpError("has no costs: run pshard-annotate-costs first");
    FailureOr<std::vector<uint64_t>> list = budgetsFor(schedule, *state);
    if (failed(list))
      return failure();
    const uint64_t minimum = planner::minimum_budget(state->graph, state->options);
    OpBuilder b = OpBuilder::atBlockEnd(&body);
    for (uint64_t budget : *list) {
      if (budget > 0 && schedule.getVram() == 0)
        return schedule.emitOpError("budget ")
               << budget << " asks for VRAM but the machine has no GPU; use 0 (CPU only)";
      if (budget > 0 && budget < minimum)
        return schedule.emitOpError("budget ")
               << budget << " cannot hold the smallest plan: the minimum budget is " << minimum
               << " bytes for this model at context " << state->options.n_ctx << " and tiers up to "
               << state->options.tiers.back()
               << " (one attention block with its KV cache, activations and workspace)";
      for (const planner::detail::ContextCosts& cc : state->contexts) {
        auto op = b.create<BudgetOp>(schedule.getLoc(), budget, cc.context);
        OpBuilder inside = OpBuilder::atBlockEnd(&op.getBody().emplaceBlock());
        const auto sets = planner::detail::candidate_sets(state->graph, cc, budget);
        for (size_t i = 0; i < sets.size(); ++i)
          writeResidentSet(inside, schedule.getLoc(), state->graph, i, sets[i]);
      }
    }
    return success();
  }
};

} // namespace
} // namespace pshard::ir
