// pshard-annotate-costs: the estimator's per-sub-layer times for every tier, written as
// a pshard.schedule beside each model. Every later pass plans from these numbers alone.
#include "PlannerBridge.h"
#include "pshard/Dialect/PShard/Transforms/Passes.h"
#include "pshard/Import/ModelGraphIR.h"

#include "llvm/Support/Format.h"

using namespace mlir;

namespace pshard::ir {
#define GEN_PASS_DEF_ANNOTATECOSTSPASS
#include "pshard/Dialect/PShard/Transforms/Passes.h.inc"

namespace {

constexpr int64_t kDefaultTiers[] = {1, 4, 16, 64, 256};

struct AnnotateCostsPass : impl::AnnotateCostsPassBase<AnnotateCostsPass> {
  using Base::Base;

  void runOnOperation() override {
    SmallVector<ModelOp> models(getOperation().getOps<ModelOp>());
    if (models.empty())
      return;
    SmallVector<int64_t> tierList(tiers.begin(), tiers.end());
    if (tierList.empty())
      tierList.assign(std::begin(kDefaultTiers), std::end(kDefaultTiers));
    // Errors about the options point at the first model: the module has no location of
    // its own in a parsed file.
    Operation* anchor = models.front();
    for (size_t i = 0; i < tierList.size(); ++i)
      if (tierList[i] < 1 || (i > 0 && tierList[i] <= tierList[i - 1])) {
        anchor->emitError("tiers must be positive and strictly ascending");
        return signalPassFailure();
      }
    FailureOr<std::unique_ptr<LoadedMachine>> machine = loadMachine(profile, anchor);
    if (failed(machine))
      return signalPassFailure();
    for (ModelOp model : models)
      if (failed(annotate(model, tierList, *(*machine)->model)))
        return signalPassFailure();
  }

  LogicalResult annotate(ModelOp model, ArrayRef<int64_t> tierList,
                         const planner::MachineModel& machine) {
    std::string name = (model.getSymName() + "_plans").str();
    if (SymbolTable::lookupNearestSymbolFrom(model, StringAttr::get(model.getContext(), name)))
      return model.emitOpError("already has a schedule @") << name << "; costs are annotated once";
    FailureOr<planner::ModelGraph> graph = readModelGraph(model);
    if (failed(graph))
      return failure();
    planner::CompileOptions options;
    options.n_ctx = contextOf(model);
    options.kv_type = kvTypeOf(model);
    options.tiers.assign(tierList.begin(), tierList.end());
    options.threads = threads > 0 ? static_cast<int>(threads) : machine.default_threads();
    if (kernelWorkspace >= 0)
      options.kernel_workspace_bytes = static_cast<uint64_t>(kernelWorkspace);
    const uint64_t kernel = options.kernel_workspace_bytes.value_or(
        machine.has_gpu() ? machine.kernel_workspace_bytes() : 0);

    const planner::MachineSummary summary = machine.summary();
    std::string fingerprint;
    llvm::raw_string_ostream(fingerprint)
        << llvm::format_hex_no_prefix(summary.profile_fingerprint, 16);
    OpBuilder b(model.getContext());
    b.setInsertionPointAfter(model);
    auto schedule = b.create<ScheduleOp>(model.getLoc(), name, model.getSymName(), summary.name,
                                         fingerprint, machine.has_gpu() ? machine.vram_bytes() : 0,
                                         options.threads, tierList,
                                         // printed only when there is kernel scratch
                                         kernel > 0 ? b.getI64IntegerAttr(static_cast<int64_t>(kernel))
                                                    : IntegerAttr());
    b.setInsertionPointToStart(&schedule.getBody().emplaceBlock());
    for (const planner::detail::TierCosts& tc :
         planner::detail::costs_per_tier(*graph, machine, options))
      writeTier(b, model.getLoc(), *graph, tc);
    return success();
  }
};

} // namespace
} // namespace pshard::ir
