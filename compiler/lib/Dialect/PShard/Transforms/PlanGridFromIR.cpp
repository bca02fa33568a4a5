// IR -> PlanGrid (see PlanGridFromIR.h).
#include "pshard/Dialect/PShard/Transforms/PlanGridFromIR.h"

#include "PlannerBridge.h"

#include <algorithm>
#include <map>

using namespace mlir;
namespace pd = pshard::planner::detail;

namespace pshard::ir {

FailureOr<planner::PlanGrid> planGridFromIR(ScheduleOp schedule, StringRef strategy,
                                            const planner::MachineSummary& machine) {
  FailureOr<ScheduleState> state = ScheduleState::load(schedule, strategy);
  if (failed(state))
    return failure();
  const int threads = static_cast<int>(schedule.getThreads());
  planner::PlanGrid grid;
  grid.options = state->options;
  grid.budgets = state->options.budgets;
  grid.tiers = state->options.tiers;
  grid.contexts = state->options.contexts;
  grid.model_fingerprint = state->graph.fingerprint;
  grid.machine = machine;
  grid.minimum_budget_bytes =
      pd::minimum_budget_with(state->graph, state->options, *state->options.kernel_workspace_bytes);
  grid.link = state->link;
  Result<std::vector<std::vector<planner::Plan>>> cpu =
      pd::cpu_only_plans(state->graph, state->contexts, threads);
  if (!cpu.ok())
    return schedule.emitOpError(cpu.status().message());
  grid.cpu_only = std::move(*cpu);

  std::map<uint64_t, std::vector<BudgetOp>> byBudget;
  for (BudgetOp budget : schedule.getBody().front().getOps<BudgetOp>())
    byBudget[budget.getBudget()].push_back(budget);
  for (auto& [bytes, ops] : byBudget) {
    std::sort(ops.begin(), ops.end(),
              [](BudgetOp a, BudgetOp b) { return a.getContext() < b.getContext(); });
    std::vector<std::vector<planner::Plan>> rows;
    for (size_t k = 0; k < ops.size(); ++k) {
      FailureOr<pd::BudgetChoice> choice = state->choiceOf(ops[k]);
      if (failed(choice))
        return failure();
      std::vector<planner::Plan> row;
      for (PlanOp plan : ops[k].getBody().front().getOps<PlanOp>()) {
        if (!plan.getSelected())
          continue;
        const size_t t = state->tierIndexOf(plan.getTier());
        const pd::ResidentSet& rs = choice->sets[static_cast<size_t>(choice->set_of_tier[t])];
        Result<planner::Plan> p =
            pd::finalize_plan(state->graph, state->contexts[k], t, threads, bytes, rs,
                              state->offsetsOf(plan), choice->plan_of_tier[t]);
        if (!p.ok())
          return plan.emitOpError(p.status().message());
        row.push_back(std::move(*p));
      }
      std::stable_sort(row.begin(), row.end(), [](const planner::Plan& a, const planner::Plan& b) {
        return a.tier < b.tier;
      });
      rows.push_back(std::move(row));
      for (TradeOp trade : ops[k].getBody().front().getOps<TradeOp>())
        grid.trades.push_back(tradeOf(trade));
    }
    grid.switches.push_back(pd::switches_between(state->graph, state->contexts, rows, state->link));
    grid.plans.push_back(std::move(rows));
  }
  planner::sort_trades(&grid.trades);
  return grid;
}

} // namespace pshard::ir
