//===- PShardInterfaces.td - what every sub-layer op answers -*- tablegen -*-===//
//
// Passes treat embed, attn, ffn, moe and head alike (each is one unit of placement),
// so they talk to them through this interface rather than switching on the op kind.
//
//===----------------------------------------------------------------------===//

#ifndef PSHARD_DIALECT_PSHARD_IR_PSHARDINTERFACES_TD
#define PSHARD_DIALECT_PSHARD_IR_PSHARDINTERFACES_TD

include "mlir/IR/OpBase.td"

def PShard_SubLayerOpInterface : OpInterface<"SubLayerOpInterface"> {
  let cppNamespace = "::pshard::ir";
  let description = [{
    One sub-layer of a `pshard.model`: a unit the planner places on the GPU (resident
    or streamed) or on the CPU. Every implementing op has the attributes `name`,
    `weights` (bytes per weight type), `tensors` (GGUF names), `flops` and `bytes`
    (per new token); the methods below give the parts that differ by kind.
  }];

  let methods = [
    InterfaceMethod<"The sub-layer's name, unique in its model (\"attn[3]\").",
      "::llvm::StringRef", "getSubLayerName", (ins), [{}],
      [{ return $_op.getName(); }]>,
    InterfaceMethod<"The transformer layer, or -1 for embed and head.",
      "int64_t", "getLayerIndex", (ins), [{}], [{ return -1; }]>,
    InterfaceMethod<"Bytes of weights per weight type ({q4_0 = N, f32 = M}).",
      "::mlir::DictionaryAttr", "getWeightsByType", (ins), [{}],
      [{ return $_op.getWeights(); }]>,
    InterfaceMethod<"The block holding the `pshard.tensor` and `pshard.matmul` ops.",
      "::mlir::Block *", "getBodyBlock", (ins), [{}],
      [{ return &$_op.getBody().front(); }]>,
    InterfaceMethod<"FLOPs per new token, context-independent part.",
      "int64_t", "getFlopsPerToken", (ins), [{}],
      [{ return static_cast<int64_t>($_op.getFlops()); }]>,
    InterfaceMethod<"Activation bytes read and written per new token.",
      "int64_t", "getBytesPerToken", (ins), [{}],
      [{ return static_cast<int64_t>($_op.getBytes()); }]>,
    InterfaceMethod<"KV-cache bytes per cached token (attention only).",
      "int64_t", "getKvBytesPerToken", (ins), [{}], [{ return 0; }]>,
  ];

  let extraClassDeclaration = [{
    /// Sum of `weights` over all weight types.
    int64_t getTotalWeightBytes();
  }];

  // Names and weights against the tensors are checked once here for every kind, after
  // the nested tensor ops verified (so their attributes can be trusted).
  let verify = [{ return ::pshard::ir::verifySubLayer($_op); }];
  let verifyWithRegions = 1;
}

#endif // PSHARD_DIALECT_PSHARD_IR_PSHARDINTERFACES_TD
