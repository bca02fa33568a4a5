// Between pshard_planner's ModelGraph and the pshard dialect's `pshard.model`, both ways.
// The importer writes a model op from a graph; the planning passes read the graph back
// from the op, so that textual IR alone (a lit test, `pshard-opt`) is enough to plan.
//
//   mlir::OpBuilder b(module.getBodyRegion());
//   pshard::ir::ModelOp op = pshard::ir::buildModelOp(b, loc, graph, {.n_ctx = 4096});
//   mlir::FailureOr<pshard::planner::ModelGraph> back = pshard::ir::readModelGraph(op);
//
// The round trip keeps every field the planner uses (tensors, matmul groups, attention
// geometry, experts, hyperparameters, fingerprint); a read error is emitted on the op.
#pragma once

#include "mlir/IR/Builders.h"
#include "mlir/Support/LogicalResult.h"
#include "pshard/Dialect/PShard/IR/PShardOps.h"
#include "pshard/Planner/ModelGraph.h"

#include <string>

namespace pshard::ir {

struct ModelImportOptions {
  int64_t n_ctx = 4096;                  // the context the plans are made for
  TensorType kv_type = TensorType::kF32; // the runtime's KV cache element type
  std::string sym_name;                  // empty: from the model's name
  const RoutingProfile* routing = nullptr; // importGguf: applied to the graph (--routing)
};

// The symbol a model gets by default: its general.name with anything but letters,
// digits and '_' replaced by '_' ("Llama 3.2 1B" -> "Llama_3_2_1B"); "model" if empty.
std::string defaultModelSymbol(const planner::ModelGraph& graph);

ModelOp buildModelOp(mlir::OpBuilder& builder, mlir::Location loc, const planner::ModelGraph& graph,
                     const ModelImportOptions& options);

mlir::FailureOr<planner::ModelGraph> readModelGraph(ModelOp model);

// The context and KV type a model op was imported for, as the planner takes them.
int64_t contextOf(ModelOp model);
TensorType kvTypeOf(ModelOp model);

} // namespace pshard::ir
