// pshard-compile --emit mlir: the same planning, through the MLIR pass pipeline
// (compiler/lib/Dialect/PShard/Transforms), printed as pshard IR. Only built with the
// compiler's MLIR part (PSHARD_BUILD_COMPILER); this header has no MLIR in it, so the
// CLI11 main that calls it compiles either way.
//
//   EmitMlirRequest r{.model_path = "m.gguf", .profile_path = "laptop.pshprof"};
//   PSHARD_RETURN_IF_ERROR(emit_mlir(r));   // IR on stdout (or r.out_path)
#pragma once

#include "pshard/Planner/Plan.h"
#include "runtime/core/status.h"

#include <string>

namespace pshard::tools {

struct EmitMlirRequest {
  std::string model_path;
  std::string profile_path;
  std::string out_path;            // empty: stdout
  std::string strategy = "auto";   // as --strategy takes it
  planner::CompileOptions options; // budgets (empty: auto), tiers, n_ctx, kv_type, threads
};

Status emit_mlir(const EmitMlirRequest& request);

} // namespace pshard::tools
