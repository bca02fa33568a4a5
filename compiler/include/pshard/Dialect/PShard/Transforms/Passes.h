// The planning passes over the pshard dialect and the pipeline that strings them
// together (Passes.td documents each). Registration for pshard-opt:
//
//   pshard::ir::registerPShardPasses();   // every pass, and the pshard-plan pipeline
//
// and in code:
//
//   mlir::PassManager pm(&context);
//   pshard::ir::PlanningPipelineOptions options;
//   options.profile = "laptop.pshprof";
//   pshard::ir::buildPlanningPipeline(pm, options);
//   if (mlir::failed(pm.run(module))) ...
#pragma once

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassOptions.h"

#include <memory>

namespace pshard::ir {

#define GEN_PASS_DECL
#include "pshard/Dialect/PShard/Transforms/Passes.h.inc"

// The options of the whole pipeline; each is handed to the passes that take it.
struct PlanningPipelineOptions : mlir::PassPipelineOptions<PlanningPipelineOptions> {
  Option<std::string> profile{*this, "profile",
                              llvm::cl::desc("Machine profile (*.pshprof), or `fixed`"),
                              llvm::cl::init("fixed")};
  ListOption<int64_t> tiers{*this, "tiers", llvm::cl::desc("Token tiers (default 1,4,16,64,256)")};
  ListOption<int64_t> contexts{*this, "contexts",
                               llvm::cl::desc("Context ranges' upper bounds (default: the model's)")};
  Option<std::string> workload{*this, "workload",
                               llvm::cl::desc("PROMPT:GENERATED tokens (default 1024:256)"),
                               llvm::cl::init("")};
  ListOption<std::string> budgets{*this, "budgets",
                                  llvm::cl::desc("VRAM budgets (bytes, K/M/G) or auto")};
  Option<int64_t> threads{*this, "threads", llvm::cl::desc("CPU threads (0: machine default)"),
                          llvm::cl::init(0)};
  Option<int64_t> kernelWorkspace{
      *this, "kernel-workspace",
      llvm::cl::desc("Kernel scratch bytes every GPU plan reserves (-1: the profile's)"),
      llvm::cl::init(-1)};
  Option<std::string> strategy{*this, "strategy",
                               llvm::cl::desc("auto, gpu-only, static, dynamic or layers"),
                               llvm::cl::init("auto")};
  Option<bool> expertLevel{*this, "expert-level",
                           llvm::cl::desc("MoE blocks may be placed expert by expert"),
                           llvm::cl::init(true)};
  Option<bool> keepCandidates{*this, "keep-candidates",
                              llvm::cl::desc("Keep the plans that were not selected"),
                              llvm::cl::init(false)};
};

// annotate-costs -> choose-resident-set -> generate-candidates -> search-placements ->
// select-plans -> layout-vram, each on the whole module.
void buildPlanningPipeline(mlir::OpPassManager& pm, const PlanningPipelineOptions& options);

// Registers every pass (pshard-annotate-costs, ...) and the pipeline `pshard-plan`.
void registerPShardPasses();

} // namespace pshard::ir
