//===- PShardOps.td - all pshard ops, for one tablegen run ---*- tablegen -*-===//
//
// add_mlir_dialect runs mlir-tblgen on one file; the ops are split by topic into the
// files included here.
//
//===----------------------------------------------------------------------===//

#ifndef PSHARD_DIALECT_PSHARD_IR_PSHARDOPS_TD
#define PSHARD_DIALECT_PSHARD_IR_PSHARDOPS_TD

include "pshard/Dialect/PShard/IR/PShardModelOps.td"
include "pshard/Dialect/PShard/IR/PShardScheduleOps.td"

#endif // PSHARD_DIALECT_PSHARD_IR_PSHARDOPS_TD
