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
  planner::CompileOptions options;
  std::vector<planner::detail::TierCosts> tiers; // empty before pshard-annotate-costs

  static mlir::FailureOr<ScheduleState> load(ScheduleOp schedule, llvm::StringRef strategy);

  // The tier's costs; null when the schedule has no costs for it.
  const planner::detail::TierCosts* costsOf(int64_t tier) const;
  // The budget's resident set as the planner's mask.
  planner::detail::ResidentSet residentSetOf(BudgetOp budget) const;
  // A plan's placements and slots as a planner candidate.
  planner::detail::Candidate candidateOf(PlanOp plan) const;
};

// Writers. Times become integer nanoseconds.
uint64_t toNs(double seconds);
TierOp writeTier(mlir::OpBuilder& b, mlir::Location loc, const planner::ModelGraph& graph,
                 const planner::detail::TierCosts& tc);
PlanOp writeCandidate(mlir::OpBuilder& b, mlir::Location loc, int64_t tier, int64_t threads,
                      const planner::detail::Candidate& c);
// Replaces `op`'s plan fields and layout with a finalized planner::Plan.
void writeFinalPlan(PlanOp op, const planner::ModelGraph& graph, const planner::Plan& plan);

} // namespace pshard::ir
