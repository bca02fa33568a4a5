// GGUF -> pshard IR. The file is opened metadata-only and turned into the planner's
// ModelGraph by pshard_planner itself (one reading of the llama layout for both
// pshard-compile paths); this file only wraps the graph in a module.
#include "pshard/Import/GgufImporter.h"

#include "runtime/gguf/gguf_file.h"

using namespace mlir;

namespace pshard::ir {

OwningOpRef<ModuleOp> importModelGraph(MLIRContext* context, const planner::ModelGraph& graph,
                                       const ModelImportOptions& options) {
  context->getOrLoadDialect<PShardDialect>();
  Location loc = FileLineColLoc::get(context, graph.name.empty() ? "model" : graph.name, 0, 0);
  OwningOpRef<ModuleOp> module = ModuleOp::create(loc);
  OpBuilder builder(module->getBodyRegion());
  buildModelOp(builder, loc, graph, options);
  return module;
}

OwningOpRef<ModuleOp> importGguf(MLIRContext* context, const std::string& path,
                                 const ModelImportOptions& options) {
  Location loc = FileLineColLoc::get(context, path, 0, 0);
  Result<std::unique_ptr<gguf::GgufFile>> file =
      gguf::GgufFile::open(path, gguf::OpenMode::kMetadataOnly);
  if (!file.ok()) {
    emitError(loc) << file.status().message();
    return nullptr;
  }
  Result<planner::ModelGraph> graph = planner::build_model_graph(**file);
  if (!graph.ok()) {
    emitError(loc) << graph.status().message();
    return nullptr;
  }
  if (options.routing) {
    if (Status st = planner::apply_routing_profile(*graph, *options.routing); !st.ok()) {
      emitError(loc) << st.message();
      return nullptr;
    }
  }
  OwningOpRef<ModuleOp> module = importModelGraph(context, *graph, options);
  // Point the model's location at the file so that diagnostics name it.
  module->walk([&](ModelOp model) { model->setLoc(loc); });
  return module;
}

} // namespace pshard::ir
