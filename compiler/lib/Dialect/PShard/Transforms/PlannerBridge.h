// What the planning passes share: loading the machine a pass option names, reading a
// schedule's state (model graph, options, per-tier costs) out of the IR, and writing the
// planner's results (costs, candidates, laid-out plans) back as ops. The planner's
// arithmetic stays in pshard_planner; this file only converts.
//
//   FailureOr<ScheduleState> state = ScheduleState::load(schedule, "auto");
//   if (failed(state)) return signalPassFailure();   // errors were emitted on the op
//   for (BudgetOp budget : schedule.getBody().front().getOps<BudgetOp>()) ...
#pragma once

#include "compiler/lib/Planner/PlannerInternal.h"
#include "mlir/IR/Builders.h"
#include "pshard/Dialect/PShard/IR/PShardOps.h"
#include "pshard/Planner/MachineModel.h"
#include "pshard/Planner/ModelGraph.h"
#include "pshard/Planner/Plan.h"

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace pshard::ir {

// A machine model and the profile it reads (which must outlive it).
struct LoadedMachine {
  std::optional<Profile> profile;
  std::unique_ptr<planner::MachineModel> model;
};

// `spec` is a *.pshprof path, or "fixed" for planner::FixedMachineParams' defaults.
mlir::FailureOr<std::unique_ptr<LoadedMachine>> loadMachine(llvm::StringRef spec,
                                                            mlir::Operation* anchor);

// "auto", "gpu-only", "static", "dynamic", "layers" (as pshard-compile --strategy).
mlir::FailureOr<planner::Strategy> parseStrategy(llvm::StringRef name, mlir::Operation* anchor);

// A budget as users write it: bytes with an optional K, M or G suffix (binary units).
std::optional<uint64_t> parseBudget(llvm::StringRef text);

// Placement letters of the IR ('R', 'S', 'C') and back.
char placementLetter(planner::Placement p);
std::vector<planner::Placement> placementsOf(llvm::StringRef letters);
std::string lettersOf(const std::vector<planner::Placement>& placements);

// A schedule's model and options, and its costs when annotated, as the planner wants them.
struct ScheduleState {
  ModelOp model;
  planner::ModelGraph graph;
  planner::CompileOptions options; // resolved as plan_grid resolves them
  planner::LinkPricing link;
  // Per context range (ascending); empty before pshard-annotate-costs.
  std::vector<planner::detail::ContextCosts> contexts;

  static mlir::FailureOr<ScheduleState> load(ScheduleOp schedule, llvm::StringRef strategy);

  // The range a budget op plans for; null when the schedule has no costs for it.
  const planner::detail::ContextCosts* costsOf(BudgetOp budget) const;
  size_t contextIndexOf(BudgetOp budget) const;
  // The index of `tier` in options.tiers (options.tiers.size() when absent).
  size_t tierIndexOf(uint64_t tier) const;
  // The budget's resident sets, in order.
  std::vector<planner::detail::ResidentSet> residentSetsOf(BudgetOp budget) const;
  // A plan's placements and slots as a planner candidate (seconds as the IR says).
  planner::detail::Candidate candidateOf(PlanOp plan) const;
  // With its expert-level split (the `experts` triples) priced at its budget's costs.
  planner::detail::Candidate candidateOf(BudgetOp budget, PlanOp plan) const;
  // A plan's candidate with its seconds recomputed from the costs (so nanosecond
  // rounding in the IR cannot make an equal plan look faster).
  planner::detail::Candidate finishedCandidateOf(BudgetOp budget, PlanOp plan,
                                                 const planner::detail::ResidentSet& rs) const;
  // The selected plans of a budget op as the planner's choice (sets by first use), each
  // with the slots it was selected with.
  mlir::FailureOr<planner::detail::BudgetChoice> choiceOf(BudgetOp budget) const;
  // Where a laid-out plan keeps its resident buffers.
  planner::detail::ResidentOffsets offsetsOf(PlanOp plan) const;
};

// Writers. Times become integer nanoseconds.
TierOp writeTier(mlir::OpBuilder& b, mlir::Location loc, const planner::ModelGraph& graph,
                 int64_t context, const planner::detail::TierCosts& tc);
ResidentSetOp writeResidentSet(mlir::OpBuilder& b, mlir::Location loc,
                               const planner::ModelGraph& graph, size_t index,
                               const planner::detail::ResidentSet& rs);
PlanOp writeCandidate(mlir::OpBuilder& b, mlir::Location loc, int64_t tier, size_t set,
                      int64_t threads, const planner::detail::Candidate& c);
// Replaces `op`'s plan fields and layout with a finalized planner::Plan.
void writeFinalPlan(PlanOp op, const planner::ModelGraph& graph, const planner::Plan& plan);
SwitchOp writeSwitch(mlir::OpBuilder& b, mlir::Location loc, const planner::PlanSwitch& s);
TradeOp writeTrade(mlir::OpBuilder& b, mlir::Location loc, const planner::Trade& t);
// A trade op read back (budget and context from its budget op).
planner::Trade tradeOf(TradeOp op);

} // namespace pshard::ir
