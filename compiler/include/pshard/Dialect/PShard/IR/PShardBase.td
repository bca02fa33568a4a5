//===- PShardBase.td - the pshard dialect and its base op class -*- tablegen -*-===//
//
// The `pshard` dialect describes one model at sub-layer granularity (the unit the
// planner places: embed, attn[i], ffn[i] / moe[i], head) and, once the planning passes
// have run, the plans chosen for it per (VRAM budget, token tier). Nothing in it holds
// tensor data: sub-layers refer to GGUF tensors by name and carry sizes and costs only.
//
//===----------------------------------------------------------------------===//

#ifndef PSHARD_DIALECT_PSHARD_IR_PSHARDBASE_TD
#define PSHARD_DIALECT_PSHARD_IR_PSHARDBASE_TD

include "mlir/IR/OpBase.td"

def PShard_Dialect : Dialect {
  let name = "pshard";
  let summary = "A model at sub-layer granularity and its VRAM-constrained plans";
  let description = [{
    The `pshard` dialect is the planner compiler's document. An importer writes one
    `pshard.model` from a GGUF file's metadata: its sub-layers in execution order, with
    weight bytes per weight type, FLOPs and bytes moved per token, KV-cache bytes per
    token and expert counts. The planning passes then add a `pshard.schedule` beside
    it: predicted costs per token tier, a resident set per budget, and per
    (budget, tier) the winning `pshard.plan` with its VRAM layout. The emitter turns
    that into the `*.pshard` FlatBuffers artifact the runtime reads.

    ```mlir
    pshard.model @tiny fingerprint "5e1f0a2b4c6d8e90" context 256 hparams {...} {
      pshard.embed "embed" weights {q8_0 = 69632} tensors ["token_embd.weight"] ...
      pshard.attn "attn[0]" layer 0 ...
      pshard.ffn "ffn[0]" layer 0 ...
      pshard.head "head" ...
    }
    pshard.schedule @tiny_plans for @tiny ... { ... }
    ```
  }];
  let cppNamespace = "::pshard::ir";
  let useFoldAPI = kEmitFoldAdaptorFolder;
}

// Every pshard op: verifiers are written in C++ (PShardOps.cpp) because the rules
// (execution order, budgets, layouts) span several attributes.
class PShard_Op<string mnemonic, list<Trait> traits = []>
    : Op<PShard_Dialect, mnemonic, traits>;

// A non-negative 64-bit count (bytes, FLOPs, nanoseconds). The range check is in the
// predicate so that every op gets it without writing it again.
def PShard_CountAttr : ConfinedAttr<I64Attr, [IntNonNegative]>;

#endif // PSHARD_DIALECT_PSHARD_IR_PSHARDBASE_TD
