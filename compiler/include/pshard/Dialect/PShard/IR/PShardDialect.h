// The pshard dialect: a model at sub-layer granularity and its VRAM-constrained plans.
//
//   mlir::MLIRContext context;
//   context.getOrLoadDialect<pshard::ir::PShardDialect>();
//   mlir::OwningOpRef<mlir::ModuleOp> module =
//       mlir::parseSourceFile<mlir::ModuleOp>("model.mlir", &context);
//
// Ops are declared in PShardOps.h; the ODS sources (PShard*.td) document each one.
#pragma once

#include "mlir/IR/Dialect.h"
#include "pshard/Dialect/PShard/IR/PShardOpsDialect.h.inc"
