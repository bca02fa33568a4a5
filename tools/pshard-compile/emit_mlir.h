// pshard-compile through the MLIR pass pipeline (compiler/lib/Dialect/PShard/Transforms):
// --emit mlir prints the planned pshard IR, --pipeline mlir writes the artifact from it
// (the same file the direct path writes). Only built with the compiler's MLIR part
// (PSHARD_BUILD_COMPILER); this header has no MLIR in it, so the CLI11 main that calls it
// compiles either way.
//
//   EmitMlirRequest r{.model_path = "m.gguf", .profile_path = "laptop.pshprof"};
//   PSHARD_RETURN_IF_ERROR(emit_mlir(r));   // IR on stdout (or r.out_path)
//   PSHARD_ASSIGN_OR_RETURN(planner::PlanGrid grid, plan_with_mlir(r, machine.summary()));
#pragma once

#include "pshard/Planner/Plan.h"
#include "runtime/core/status.h"

#include <string>

namespace pshard {
struct RoutingProfile;
}

namespace pshard::tools {

struct EmitMlirRequest {
  std::string model_path;
  std::string profile_path;
  std::string out_path;            // empty: stdout
  std::string strategy = "auto";   // as --strategy takes it
  planner::CompileOptions options; // budgets (empty: auto), tiers, contexts, n_ctx, kv_type,
                                   // threads, workload, kernel scratch
  const RoutingProfile* routing = nullptr; // --routing, or null (uniform)
};

Status emit_mlir(const EmitMlirRequest& request);
Result<planner::PlanGrid> plan_with_mlir(const EmitMlirRequest& request,
                                         const planner::MachineSummary& machine);

} // namespace pshard::tools
