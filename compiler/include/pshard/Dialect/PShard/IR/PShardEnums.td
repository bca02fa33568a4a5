//===- PShardEnums.td - weight types, strategies -------------*- tablegen -*-===//
//
// Enums print as bare keywords (`q4_0`, `dynamic`) so the IR reads like the tables in
// the design notes. Values follow the external numbering where there is one.
//
//===----------------------------------------------------------------------===//

#ifndef PSHARD_DIALECT_PSHARD_IR_PSHARDENUMS_TD
#define PSHARD_DIALECT_PSHARD_IR_PSHARDENUMS_TD

include "mlir/IR/EnumAttr.td"

// The weight types pshard runs, numbered as GGUF numbers them (runtime/tensor/
// tensor_type.h), so that a cast converts between the two.
def PShard_WeightType : I32EnumAttr<"WeightType", "a GGUF weight type", [
    I32EnumAttrCase<"f32", 0>,
    I32EnumAttrCase<"f16", 1>,
    I32EnumAttrCase<"q4_0", 2>,
    I32EnumAttrCase<"q4_1", 3>,
    I32EnumAttrCase<"q5_0", 6>,
    I32EnumAttrCase<"q5_1", 7>,
    I32EnumAttrCase<"q8_0", 8>,
    I32EnumAttrCase<"q2_k", 10>,
    I32EnumAttrCase<"q3_k", 11>,
    I32EnumAttrCase<"q4_k", 12>,
    I32EnumAttrCase<"q5_k", 13>,
    I32EnumAttrCase<"q6_k", 14>,
    I32EnumAttrCase<"iq4_nl", 20>,
    I32EnumAttrCase<"iq4_xs", 23>,
    I32EnumAttrCase<"bf16", 30>,
    I32EnumAttrCase<"mxfp4", 39>,
  ]> {
  let cppNamespace = "::pshard::ir";
}

// How a plan was built: the reference system's fixed strategies, llama.cpp-style layer
// offload, the placement search that starts from them, or no GPU at all. Numbered as
// pshard::planner::Strategy (0 there is `auto`, never a plan's strategy).
def PShard_Strategy : I32EnumAttr<"Strategy", "a plan-building strategy", [
    I32EnumAttrCase<"GpuOnly", 1, "gpu_only">,
    I32EnumAttrCase<"Static", 2, "static">, // `static` is a C++ keyword
    I32EnumAttrCase<"Dynamic", 3, "dynamic">,
    I32EnumAttrCase<"Layers", 4, "layers">,
    I32EnumAttrCase<"Search", 5, "search">,
    I32EnumAttrCase<"CpuOnly", 6, "cpu_only">,
  ]> {
  let cppNamespace = "::pshard::ir";
}

// What a `pshard.buffer` of a VRAM layout holds.
def PShard_BufferKind : I32EnumAttr<"BufferKind", "a kind of VRAM buffer", [
    I32EnumAttrCase<"weights", 0>,
    I32EnumAttrCase<"kv_cache", 1>,
    I32EnumAttrCase<"stream_slot", 2>,
    I32EnumAttrCase<"activations", 3>,
    I32EnumAttrCase<"workspace", 4>,
    I32EnumAttrCase<"expert", 5>,
  ]> {
  let cppNamespace = "::pshard::ir";
}

#endif // PSHARD_DIALECT_PSHARD_IR_PSHARDENUMS_TD
