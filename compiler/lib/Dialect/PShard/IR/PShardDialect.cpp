// The pshard dialect's registration, and the one translation unit that instantiates the
// generated op, enum and interface definitions (they are large; compiling them once
// keeps the build fast). Verifiers live in PShardModelOps.cpp / PShardScheduleOps.cpp.
#include "pshard/Dialect/PShard/IR/PShardDialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "mlir/IR/OpImplementation.h"
#include "pshard/Dialect/PShard/IR/PShardOps.h"

using namespace mlir;
using namespace pshard::ir;

#include "pshard/Dialect/PShard/IR/PShardEnums.cpp.inc"
#include "pshard/Dialect/PShard/IR/PShardInterfaces.cpp.inc"
#include "pshard/Dialect/PShard/IR/PShardOpsDialect.cpp.inc"

void PShardDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "pshard/Dialect/PShard/IR/PShardOps.cpp.inc"
      >();
}

// `custom<CountDict>`: a dictionary whose 64-bit integers print without `: i64` (the
// parser's default integer type), so byte counts read as plain numbers.
static ParseResult parseCountDict(OpAsmParser& parser, DictionaryAttr& dict) {
  return parser.parseAttribute(dict);
}

static void printCountDict(OpAsmPrinter& printer, Operation*, DictionaryAttr dict) {
  printer << "{";
  llvm::interleaveComma(dict, printer, [&](NamedAttribute entry) {
    printer.printKeywordOrString(entry.getName().getValue());
    printer << " = ";
    auto integer = entry.getValue().dyn_cast<IntegerAttr>();
    if (integer && integer.getType().isSignlessInteger(64))
      printer << integer.getInt();
    else
      printer.printAttribute(entry.getValue());
  });
  printer << "}";
}

#define GET_OP_CLASSES
#include "pshard/Dialect/PShard/IR/PShardOps.cpp.inc"
