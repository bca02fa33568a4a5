// pshard-annotate-costs: the estimator's per-sub-layer times for every tier at each
// context range's end and start, written as a pshard.schedule beside each model with the
// workload and PCIe pricing switches are priced with. Every later pass plans from these
// numbers alone.
#include "PlannerBridge.h"
#include "pshard/Dialect/PShard/Transforms/Passes.h"
#include "pshard/Import/ModelGraphIR.h"

#include "llvm/Support/Format.h"

#include <map>

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
    planner::CompileOptions requested;
    requested.n_ctx = contextOf(model);
    requested.kv_type = kvTypeOf(model);
    requested.tiers.assign(tierList.begin(), tierList.end());
    requested.contexts.assign(contexts.begin(), contexts.end());
    requested.threads = static_cast<int>(threads);
    if (kernelWorkspace >= 0)
      requested.kernel_workspace_bytes = static_cast<uint64_t>(kernelWorkspace);
    if (!workload.empty()) {
      Result<planner::Workload> w = planner::parse_workload(workload);
      if (!w.ok())
        return model.emitOpError(w.status().message());
      requested.workload = *w;
    }
    Result<planner::CompileOptions> resolved =
        planner::detail::resolved_options(*graph, machine, requested);
    if (!resolved.ok())
      return model.emitOpError(resolved.status().message());
    const planner::CompileOptions& options = *resolved;
    const uint64_t kernel = *options.kernel_workspace_bytes;
    const planner::LinkPricing link = planner::link_pricing(machine);

    const planner::MachineSummary summary = machine.summary();
    std::string fingerprint;
    llvm::raw_string_ostream(fingerprint)
        << llvm::format_hex_no_prefix(summary.profile_fingerprint, 16);
    OpBuilder b(model.getContext());
    b.setInsertionPointAfter(model);
    const SmallVector<int64_t> linkFigures = {
        static_cast<int64_t>(link.h2d_latency_ns), static_cast<int64_t>(link.h2d_ns_per_mib),
        static_cast<int64_t>(link.d2h_latency_ns), static_cast<int64_t>(link.d2h_ns_per_mib)};
    auto schedule = b.create<ScheduleOp>(
        model.getLoc(), name, model.getSymName(), summary.name, fingerprint,
        machine.has_gpu() ? machine.vram_bytes() : 0, options.threads, tierList, options.contexts,
        options.workload.prompt_tokens, options.workload.generated_tokens, linkFigures,
        // printed only when there is kernel scratch
        kernel > 0 ? b.getI64IntegerAttr(static_cast<int64_t>(kernel)) : IntegerAttr());
    if (!expertLevel)
      schedule.setWholeMoe(true);
    b.setInsertionPointToStart(&schedule.getBody().emplaceBlock());
    // Every tier at each range's end and start, by context (a start that is another
    // range's end is written once).
    std::map<int64_t, const std::vector<planner::detail::TierCosts>*> byContext;
    const std::vector<planner::detail::ContextCosts> costs =
        planner::detail::costs_per_context(*graph, machine, options);
    for (const planner::detail::ContextCosts& cc : costs) {
      byContext.emplace(cc.context, &cc.tiers);
      byContext.emplace(cc.start, &cc.start_tiers);
    }
    for (const auto& [context, tiers] : byContext)
      for (const planner::detail::TierCosts& tc : *tiers)
        writeTier(b, model.getLoc(), *graph, context, tc);
    return success();
  }
};

} // namespace
} // namespace pshard::ir
