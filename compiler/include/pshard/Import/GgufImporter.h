// GGUF metadata -> a module holding one `pshard.model`. Only the header and tensor table
// are read (gguf::OpenMode::kMetadataOnly): importing a 100 GB model costs its header.
//
//   mlir::MLIRContext context;
//   context.getOrLoadDialect<pshard::ir::PShardDialect>();
//   mlir::OwningOpRef<mlir::ModuleOp> module =
//       pshard::ir::importGguf(&context, "model.gguf", {.n_ctx = 4096});
//   if (!module) return 1;   // the error was emitted through the context's diagnostics
#pragma once

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "pshard/Import/ModelGraphIR.h"

#include <string>

namespace pshard::ir {

mlir::OwningOpRef<mlir::ModuleOp> importGguf(mlir::MLIRContext* context, const std::string& path,
                                             const ModelImportOptions& options);

// The same from a graph already built (pshard-compile has one; tests use synthetic ones).
mlir::OwningOpRef<mlir::ModuleOp> importModelGraph(mlir::MLIRContext* context,
                                                   const planner::ModelGraph& graph,
                                                   const ModelImportOptions& options);

} // namespace pshard::ir
