// The planned IR as the planner's PlanGrid: what pshard-compile --pipeline mlir writes
// as the artifact. The selected plans, their resident sets and offsets come from the IR;
// the figures derived from them (predicted times, switches, CPU-only plans) are computed
// by the same planner functions the direct path uses, so both paths write the same file.
//
//   mlir::FailureOr<planner::PlanGrid> grid =
//       pshard::ir::planGridFromIR(schedule, "auto", machine->summary());
#pragma once

#include "mlir/Support/LogicalResult.h"
#include "pshard/Dialect/PShard/IR/PShardOps.h"
#include "pshard/Planner/Plan.h"

#include "llvm/ADT/StringRef.h"

namespace pshard::ir {

// `schedule` must have run the whole pshard-plan pipeline with `strategy`.
mlir::FailureOr<planner::PlanGrid> planGridFromIR(ScheduleOp schedule, llvm::StringRef strategy,
                                                  const planner::MachineSummary& machine);

} // namespace pshard::ir
