// pshard-opt: runs the pshard planning passes on textual IR (lit tests, debugging).
//
//   pshard-opt model.mlir --pshard-annotate-costs="profile=laptop.pshprof tiers=1,16"
//   pshard-opt model.mlir --pshard-plan="profile=fixed budgets=0,1G"
//   pshard-opt --split-input-file --verify-diagnostics bad.mlir
//
// Only the pshard dialect is registered (and the builtin one, always): the IR never
// needs another, and linking none keeps the tool small and its build fast.
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "pshard/Dialect/PShard/IR/PShardDialect.h"
#include "pshard/Dialect/PShard/Transforms/Passes.h"

int main(int argc, char** argv) {
  mlir::DialectRegistry registry;
  registry.insert<pshard::ir::PShardDialect>();
  pshard::ir::registerPShardPasses();
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "pshard planning passes driver\n", registry));
}
