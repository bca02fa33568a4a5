//===- PShardModelOps.td - a model at sub-layer granularity -*- tablegen -*-===//
//
// What the importer writes from GGUF metadata: `pshard.model` and, in execution order,
// its sub-layers, each listing its tensors (`pshard.tensor`) and how it multiplies by
// them (`pshard.matmul`). Everything the planner needs is here, so that the planning
// passes work on textual IR alone (lit tests) and never reopen the GGUF file.
//
//===----------------------------------------------------------------------===//

#ifndef PSHARD_DIALECT_PSHARD_IR_PSHARDMODELOPS_TD
#define PSHARD_DIALECT_PSHARD_IR_PSHARDMODELOPS_TD

include "pshard/Dialect/PShard/IR/PShardBase.td"
include "pshard/Dialect/PShard/IR/PShardEnums.td"
include "pshard/Dialect/PShard/IR/PShardInterfaces.td"
include "mlir/IR/SymbolInterfaces.td"

def PShard_ModelOp : PShard_Op<"model", [
    Symbol, IsolatedFromAbove, SingleBlock, NoTerminator]> {
  let summary = "A model: its sub-layers in execution order";
  let description = [{
    One GGUF model as the planner sees it. `fingerprint` identifies the file (hex,
    from its metadata and tensor table) so that an artifact is never used with another
    model; `size` is the file's byte size; `context` and `kv` are the context length
    and KV-cache element type the plans are made for; `hparams` summarizes the
    hyperparameters (`n_layer`, `n_embd`, `n_head`, ...), from which activation and
    workspace sizes follow.

    The body holds exactly one `pshard.embed`, then per layer `i` = 0, 1, ... one
    `pshard.attn` followed by one `pshard.ffn` or `pshard.moe`, then one `pshard.head`.

    ```mlir
    pshard.model @tiny fingerprint "5e1f0a2b4c6d8e90" size 1048576 context 256 kv f16
        hparams {arch = "llama", n_layer = 1, n_embd = 64, ...} {
      pshard.embed "embed" row_bytes 68 weights {q8_0 = 34816} flops 0 bytes 68 { ... }
      pshard.attn "attn[0]" layer 0 heads 4 x 16 kv_values 64 kv 128 weights {...} ...
      pshard.ffn "ffn[0]" layer 0 weights {q8_0 = 26112} flops 49152 bytes 26624 { ... }
      pshard.head "head" weights {q8_0 = 34816} flops 65536 bytes 34816 { ... }
    }
    ```
  }];
  let arguments = (ins
    SymbolNameAttr:$sym_name,
    StrAttr:$fingerprint,
    PShard_CountAttr:$file_size,
    PShard_CountAttr:$n_ctx,
    PShard_WeightType:$kv_type,
    DictionaryAttr:$hparams);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = [{
    $sym_name `fingerprint` $fingerprint `size` $file_size `context` $n_ctx
    `kv` $kv_type `hparams` custom<CountDict>($hparams) attr-dict-with-keyword $body
  }];
  let hasRegionVerifier = 1;
  let extraClassDeclaration = [{
    /// The sub-layers in execution order.
    auto getSubLayers() {
      return getBody().front().getOps<::pshard::ir::SubLayerOpInterface>();
    }
    /// An integer of `hparams`, or `fallback` when absent.
    int64_t getHParam(::llvm::StringRef key, int64_t fallback = 0);
  }];
}

// The shared shape of embed / attn / ffn / moe / head. `kindArgs` and `kindFormat` add
// what only one kind has; `overrides` names the interface methods it answers itself.
class PShard_SubLayerOp<string mnemonic, dag kindArgs, string kindFormat,
                        list<string> overrides = []>
    : PShard_Op<mnemonic, [
        HasParent<"ModelOp">, SingleBlock, NoTerminator,
        DeclareOpInterfaceMethods<PShard_SubLayerOpInterface, overrides>]> {
  let arguments = !con((ins StrAttr:$name), kindArgs, (ins
    DictionaryAttr:$weights,
    PShard_CountAttr:$flops,
    PShard_CountAttr:$bytes));
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = "$name " # kindFormat # [{
    `weights` custom<CountDict>($weights) `flops` $flops `bytes` $bytes
    attr-dict-with-keyword $body
  }];
  let hasVerifier = 1;
}

def PShard_EmbedOp : PShard_SubLayerOp<"embed",
    (ins PShard_CountAttr:$row_bytes), "`row_bytes` $row_bytes"> {
  let summary = "The token embedding: gathers one row per new token";
  let description = [{
    Reads only the rows of the tokens in the batch (`row_bytes` each), so it is cheap
    on the CPU whatever the vocabulary size. `weights` sums the tensors by type; `flops`
    and `bytes` are per new token at tier 1 and the model's full context (here: none,
    and one row).

    ```mlir
    pshard.embed "embed" row_bytes 68 weights {q8_0 = 34816} flops 0 bytes 68 {
      pshard.tensor "token_embd.weight" q8_0 [64, 512] offset 1536 bytes 34816
    }
    ```
  }];
}

def PShard_AttnOp : PShard_SubLayerOp<"attn",
    (ins PShard_CountAttr:$layer, PShard_CountAttr:$n_head, PShard_CountAttr:$head_dim,
         PShard_CountAttr:$kv_values, PShard_CountAttr:$kv,
         OptionalAttr<PShard_CountAttr>:$window, UnitAttr:$recurrent),
    "`layer` $layer `heads` $n_head `x` $head_dim `kv_values` $kv_values `kv` $kv "
    "(`window` $window^)? (`recurrent` $recurrent^)?",
    ["getLayerIndex", "getKvBytesPerToken"]> {
  let summary = "The attention block of one layer, with its KV cache";
  let description = [{
    Norm, Q/K/V/O projections and attention over the cached context. `heads` gives
    `n_head x head_dim` (attention adds 4·n_head·head_dim FLOPs per token and cached
    position); `kv_values` is the number of K and V values cached per position and
    `kv` their bytes in the model's KV type — what a resident attention block adds to
    VRAM per position of context. `window` (Gemma's sliding-window layers) is how many
    cached positions a query reads; absent: all of them. `recurrent` (Qwen3-Next's Gated
    DeltaNet layers) marks a recurrence in attention's place: its state, sized by the
    model's `ssm_*` hyperparameters, is the same whatever the context, and `kv` is 0.

    ```mlir
    pshard.attn "attn[0]" layer 0 heads 4 x 16 kv_values 64 kv 128
        weights {f32 = 256, q8_0 = 17408} flops 49152 bytes 50000 {
      pshard.tensor "blk.0.attn_norm.weight" f32 [64] offset 36352 bytes 256
      pshard.tensor "blk.0.attn_q.weight" q8_0 [64, 64] offset 36608 bytes 4352
      pshard.matmul q8_0 64 x 64 bytes 4352 count 4 of 4
    }
    ```
  }];
}

def PShard_FfnOp : PShard_SubLayerOp<"ffn",
    (ins PShard_CountAttr:$layer), "`layer` $layer", ["getLayerIndex"]> {
  let summary = "The dense feed-forward block of one layer";
  let description = [{
    Norm and the gate/up/down projections. The usual candidate for CPU execution when
    VRAM is short: much weight, little compute per byte at small tiers.

    ```mlir
    pshard.ffn "ffn[0]" layer 0 weights {f32 = 256, q8_0 = 26112} flops 49152 bytes 26400 {
      pshard.tensor "blk.0.ffn_up.weight" q8_0 [64, 128] offset 54016 bytes 8704
      pshard.matmul q8_0 128 x 64 bytes 8704 count 2 of 2
      pshard.matmul q8_0 64 x 128 bytes 8704 count 1 of 1
    }
    ```
  }];
}

def PShard_MoeOp : PShard_SubLayerOp<"moe",
    (ins PShard_CountAttr:$layer, PShard_CountAttr:$experts_used,
         PShard_CountAttr:$experts, PShard_CountAttr:$expert_bytes,
         PShard_CountAttr:$shared_bytes, OptionalAttr<F64ArrayAttr>:$routing),
    "`layer` $layer `experts` $experts_used `of` $experts `expert_bytes` $expert_bytes "
    "`shared_bytes` $shared_bytes (`routing` $routing^)?", ["getLayerIndex"]> {
  let summary = "A mixture-of-experts feed-forward block of one layer";
  let description = [{
    A router picks `experts_used` of `experts` experts per token; `expert_bytes` is one
    expert's gate+up+down slices and `shared_bytes` what every token reads (router and
    norms). One token reads `experts_used` experts, many tokens nearly all of them, so
    the best placement differs by tier. `routing`, when a routing profile was given, is
    each expert's per-token probability of being chosen (summing to `experts_used`); the
    cost model expects the distinct experts a pass touches from it.

    ```mlir
    pshard.moe "moe[0]" layer 0 experts 2 of 8 expert_bytes 26112 shared_bytes 2432
        weights {f32 = 2304, q8_0 = 209024} flops 104448 bytes 54656 {
      pshard.tensor "blk.0.ffn_gate_inp.weight" f32 [64, 8] offset 4096 bytes 2048
      pshard.matmul q8_0 128 x 64 bytes 8704 count 4 of 16
    }
    ```
  }];
}

def PShard_HeadOp : PShard_SubLayerOp<"head", (ins), ""> {
  let summary = "The output norm and the vocabulary projection";
  let description = [{
    Computes logits for the last token of a batch only, so its cost does not grow with
    the tier (its matmul is marked `last_token`).

    ```mlir
    pshard.head "head" weights {f32 = 256, q8_0 = 34816} flops 65536 bytes 35072 {
      pshard.tensor "output.weight" q8_0 [64, 512] offset 90000 bytes 34816
      pshard.matmul q8_0 512 x 64 bytes 34816 count 1 of 1 last_token
    }
    ```
  }];
}

def PShard_TensorOp : PShard_Op<"tensor", [
    ParentOneOf<["EmbedOp", "AttnOp", "FfnOp", "MoeOp", "HeadOp"]>]> {
  let summary = "One GGUF tensor of a sub-layer, located in the file";
  let description = [{
    A weight tensor by its GGUF name, type and dimensions (`dims[0]` is the row), at
    `offset` bytes from the start of the file, `bytes` long. The artifact refers to
    weights this way; their data is never copied into it.

    ```mlir
    pshard.tensor "blk.0.attn_q.weight" q8_0 [64, 64] offset 36608 bytes 4352
    ```
  }];
  let arguments = (ins StrAttr:$name, PShard_WeightType:$type,
                       DenseI64ArrayAttr:$dims, PShard_CountAttr:$offset,
                       PShard_CountAttr:$bytes);
  let assemblyFormat = "$name $type $dims `offset` $offset `bytes` $bytes attr-dict";
  let hasVerifier = 1;
}

def PShard_MatmulOp : PShard_Op<"matmul", [
    ParentOneOf<["AttnOp", "FfnOp", "MoeOp", "HeadOp"]>]> {
  let summary = "A group of equal matrices a sub-layer multiplies each token by";
  let description = [{
    Each token is multiplied by `count` matrices of `rows x cols` (`bytes` each),
    chosen among `pool` (the experts of a MoE tensor; `pool` = `count` when dense).
    The estimator prices a sub-layer from these groups and the profile's achieved
    FLOP/s for the weight type and matrix size. `last_token` marks a group applied to
    the batch's last token only (the head); `gate_up` the routed experts' gate or up
    matrices, which a grouped GPU kernel runs fused in one launch (their down matrices
    in another).

    ```mlir
    pshard.matmul q4_0 1536 x 2048 bytes 1769472 count 8 of 128 gate_up
    ```
  }];
  let arguments = (ins PShard_WeightType:$type, PShard_CountAttr:$rows,
                       PShard_CountAttr:$cols, PShard_CountAttr:$matrix_bytes,
                       PShard_CountAttr:$count, PShard_CountAttr:$pool,
                       UnitAttr:$last_token, UnitAttr:$gate_up);
  let assemblyFormat = [{
    $type $rows `x` $cols `bytes` $matrix_bytes `count` $count `of` $pool
    (`last_token` $last_token^)? (`gate_up` $gate_up^)? attr-dict
  }];
  let hasVerifier = 1;
}

#endif // PSHARD_DIALECT_PSHARD_IR_PSHARDMODELOPS_TD
