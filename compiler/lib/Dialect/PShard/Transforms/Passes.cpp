// Registration of the planning passes and of the pipeline that runs them in order
// (IREE's buildStreamTransformPassPipeline is the model: one function builds it, one
// registration exposes it to pshard-opt as --pshard-plan).
#include "pshard/Dialect/PShard/Transforms/Passes.h"

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"

using llvm::SmallVector;

namespace pshard::ir {
namespace {
#define GEN_PASS_REGISTRATION
#include "pshard/Dialect/PShard/Transforms/Passes.h.inc"
} // namespace

void buildPlanningPipeline(mlir::OpPassManager& pm, const PlanningPipelineOptions& options) {
  // The generated option structs hold list options as ArrayRefs: keep their storage
  // alive until the passes have copied them.
  SmallVector<int64_t> tiers(options.tiers.begin(), options.tiers.end());
  SmallVector<int64_t> contexts(options.contexts.begin(), options.contexts.end());
  SmallVector<std::string> budgets(options.budgets.begin(), options.budgets.end());

  AnnotateCostsPassOptions costs;
  costs.profile = options.profile;
  costs.tiers = tiers;
  costs.contexts = contexts;
  costs.workload = options.workload;
  costs.threads = options.threads;
  costs.kernelWorkspace = options.kernelWorkspace;
  costs.expertLevel = options.expertLevel;
  pm.addPass(createAnnotateCostsPass(costs));

  ChooseResidentSetPassOptions resident;
  resident.budgets = budgets;
  resident.strategy = options.strategy;
  pm.addPass(createChooseResidentSetPass(resident));

  pm.addPass(createGenerateCandidatesPass({options.strategy}));
  pm.addPass(createSearchPlacementsPass({options.strategy}));
  pm.addPass(createSelectPlansPass({options.keepCandidates, options.strategy}));
  pm.addPass(createLayoutVramPass());
}

void registerPShardPasses() {
  registerPShardTransformsPasses();
  mlir::PassPipelineRegistration<PlanningPipelineOptions>(
      "pshard-plan",
      "Plan a pshard.model: costs, resident sets, candidates, search, selection, layout",
      buildPlanningPipeline);
}

} // namespace pshard::ir
