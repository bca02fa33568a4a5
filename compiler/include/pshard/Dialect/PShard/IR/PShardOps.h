// The pshard ops: pshard.model and its sub-layers (embed, attn, ffn, moe, head, with
// their tensors and matmul groups), and the planning results beside it (schedule, tier,
// cost, budget, plan, buffer). See PShardModelOps.td and PShardScheduleOps.td.
//
//   for (pshard::ir::SubLayerOpInterface s : model.getSubLayers())
//     llvm::outs() << s.getSubLayerName() << " " << s.getTotalWeightBytes() << "\n";
#pragma once

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/SymbolTable.h"
#include "pshard/Dialect/PShard/IR/PShardDialect.h"
#include "pshard/Dialect/PShard/IR/PShardEnums.h.inc"

namespace pshard::ir {
// The shared checks of every sub-layer op (names, sizes, weights against tensors); the
// interface's verifier calls it.
mlir::LogicalResult verifySubLayer(mlir::Operation* op);
} // namespace pshard::ir

#include "pshard/Dialect/PShard/IR/PShardInterfaces.h.inc"

#define GET_OP_CLASSES
#include "pshard/Dialect/PShard/IR/PShardOps.h.inc"
