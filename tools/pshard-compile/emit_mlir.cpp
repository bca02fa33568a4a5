// pshard-compile through the MLIR pipeline (see emit_mlir.h): import the GGUF's metadata
// as a pshard.model, run the planning pipeline with the tool's options, then print the
// module or read the plan grid back out of it. Diagnostics are collected into the
// returned Status, so the tool reports them as it reports every other error.
#include "tools/pshard-compile/emit_mlir.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"
#include "pshard/Dialect/PShard/Transforms/PlanGridFromIR.h"
#include "pshard/Dialect/PShard/Transforms/Passes.h"
#include "pshard/Import/GgufImporter.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/raw_ostream.h"

namespace pshard::tools {
namespace {

// The module, planned; `diagnostics` collects what the passes said.
Result<mlir::OwningOpRef<mlir::ModuleOp>> planned_module(const EmitMlirRequest& request,
                                                         mlir::MLIRContext& context,
                                                         llvm::raw_string_ostream& os) {
  const planner::CompileOptions& o = request.options;
  ir::ModelImportOptions import;
  import.n_ctx = o.n_ctx;
  import.kv_type = o.kv_type;
  import.routing = request.routing;
  mlir::OwningOpRef<mlir::ModuleOp> module = ir::importGguf(&context, request.model_path, import);
  if (!module)
    return invalid_argument("cannot import '" + request.model_path + "': " + os.str());

  ir::PlanningPipelineOptions pipeline;
  pipeline.profile = request.profile_path;
  pipeline.tiers = llvm::ArrayRef<int64_t>(o.tiers);
  pipeline.contexts = llvm::ArrayRef<int64_t>(o.contexts);
  pipeline.workload = std::to_string(o.workload.prompt_tokens) + ":" +
                      std::to_string(o.workload.generated_tokens);
  std::vector<std::string> budgets; // none: the pass's auto ladder
  for (uint64_t budget : o.budgets)
    budgets.push_back(std::to_string(budget));
  pipeline.budgets = llvm::ArrayRef<std::string>(budgets);
  pipeline.threads = o.threads;
  pipeline.kernelWorkspace =
      o.kernel_workspace_bytes ? static_cast<int64_t>(*o.kernel_workspace_bytes) : -1;
  pipeline.strategy = request.strategy;
  pipeline.expertLevel = o.expert_level;
  mlir::PassManager pm(&context);
  ir::buildPlanningPipeline(pm, pipeline);
  if (mlir::failed(pm.run(*module)))
    return invalid_argument("planning '" + request.model_path + "' failed: " + os.str());
  return module;
}

// An MLIR context whose diagnostics go to `os`.
struct Context {
  explicit Context(llvm::raw_string_ostream& os)
      : handler(&context, [&os](mlir::Diagnostic& d) {
          os << d.getLocation() << ": " << d << "\n";
          for (const mlir::Diagnostic& note : d.getNotes())
            os << "  note: " << note << "\n";
          return mlir::success();
        }) {
    context.getOrLoadDialect<ir::PShardDialect>();
    context.printOpOnDiagnostic(false);
  }
  mlir::MLIRContext context;
  mlir::ScopedDiagnosticHandler handler;
};

} // namespace

Status emit_mlir(const EmitMlirRequest& request) {
  std::string diagnostics;
  llvm::raw_string_ostream os(diagnostics);
  Context c(os);
  PSHARD_ASSIGN_OR_RETURN(mlir::OwningOpRef<mlir::ModuleOp> module,
                          planned_module(request, c.context, os));
  if (request.out_path.empty()) {
    module->print(llvm::outs());
    return Status::ok_status();
  }
  std::error_code error;
  llvm::raw_fd_ostream out(request.out_path, error, llvm::sys::fs::OF_Text);
  if (error)
    return invalid_argument("cannot write '" + request.out_path + "': " + error.message());
  module->print(out);
  return Status::ok_status();
}

Result<planner::PlanGrid> plan_with_mlir(const EmitMlirRequest& request,
                                         const planner::MachineSummary& machine) {
  std::string diagnostics;
  llvm::raw_string_ostream os(diagnostics);
  Context c(os);
  PSHARD_ASSIGN_OR_RETURN(mlir::OwningOpRef<mlir::ModuleOp> module,
                          planned_module(request, c.context, os));
  for (ir::ScheduleOp schedule : module->getOps<ir::ScheduleOp>()) {
    mlir::FailureOr<planner::PlanGrid> grid = ir::planGridFromIR(schedule, request.strategy, machine);
    if (mlir::failed(grid))
      return internal_error("reading the plans of '" + request.model_path +
                            "' back from the IR failed: " + os.str());
    grid->options.pshard_version = request.options.pshard_version;
    return std::move(*grid);
  }
  return internal_error("the planning pipeline made no schedule for '" + request.model_path + "'");
}

} // namespace pshard::tools
