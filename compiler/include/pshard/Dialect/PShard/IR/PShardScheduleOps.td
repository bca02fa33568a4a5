//===- PShardScheduleOps.td - costs, resident sets and plans -*- tablegen -*-===//
//
// What the planning passes add beside a `pshard.model`: one `pshard.schedule` holding
// per-(context, tier) costs (`pshard.tier` / `pshard.cost`, from pshard-annotate-costs)
// and per (budget, context range) a `pshard.budget` with its resident sets
// (`pshard.resident_set`, from pshard-choose-resident-set), the candidate and chosen
// plans (`pshard.plan`) and their VRAM layouts (`pshard.buffer`), the switches between
// the chosen plans (`pshard.switch`) and the trades sharing a set made (`pshard.trade`).
//
// Times are integer nanoseconds and sizes integer bytes, so the IR prints exactly and
// tests can match numbers without float formatting in the way.
//
//===----------------------------------------------------------------------===//

#ifndef PSHARD_DIALECT_PSHARD_IR_PSHARDSCHEDULEOPS_TD
#define PSHARD_DIALECT_PSHARD_IR_PSHARDSCHEDULEOPS_TD

include "pshard/Dialect/PShard/IR/PShardBase.td"
include "pshard/Dialect/PShard/IR/PShardEnums.td"
include "mlir/IR/SymbolInterfaces.td"

def PShard_ScheduleOp : PShard_Op<"schedule", [
    Symbol, IsolatedFromAbove, SingleBlock, NoTerminator]> {
  let summary = "The plans for one model on one machine";
  let description = [{
    Refers to its `pshard.model` by symbol and records the machine the costs came from
    (`machine` name, `profile` fingerprint in hex, `vram` bytes, CPU `threads`), the
    token `tiers` and the upper bounds of the context ranges (`contexts`, the last
    being the model's context) planned for, the `workload` switches are priced
    against (prompt tokens : generated tokens), the PCIe pricing of switches (`link`:
    host-to-device latency ns and ns per MiB, then device-to-host), and the GPU
    backend's fixed `kernel_workspace` in bytes (absent: none) that every GPU plan
    reserves in its workspace buffer; `whole_moe` plans every MoE block whole (no
    expert-level placement). Its body holds the `pshard.tier` ops, ordered by
    (context, tier): every tier at each range's end and start; then one
    `pshard.budget` per (budget, context range), ascending.

    ```mlir
    pshard.schedule @tiny_plans for @tiny machine "fixed" profile "0" vram 8589934592
        threads 8 tiers [1, 16] contexts [256] workload 1024 : 256
        link [5000, 87381, 5000, 87381] {
      pshard.tier 1 context 1 h2d_hidden_ns 21 d2h_hidden_ns 21 ... { ... }
      pshard.tier 1 context 256 h2d_hidden_ns 21 d2h_hidden_ns 21 ... {
        pshard.cost "embed" cpu_ns 2 cpu_loaded_ns 2 gpu_ns 0 copy_ns 2901 ...
      }
      pshard.budget 1073741824 context 256 { ... }
    }
    ```
  }];
  let arguments = (ins SymbolNameAttr:$sym_name, FlatSymbolRefAttr:$model,
                       StrAttr:$machine, StrAttr:$profile, PShard_CountAttr:$vram,
                       PShard_CountAttr:$threads, DenseI64ArrayAttr:$tiers,
                       DenseI64ArrayAttr:$contexts, PShard_CountAttr:$workload_prompt,
                       PShard_CountAttr:$workload_generated, DenseI64ArrayAttr:$link,
                       OptionalAttr<PShard_CountAttr>:$kernel_workspace,
                       UnitAttr:$whole_moe);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = [{
    $sym_name `for` $model `machine` $machine `profile` $profile `vram` $vram
    `threads` $threads `tiers` $tiers `contexts` $contexts
    `workload` $workload_prompt `:` $workload_generated `link` $link
    (`kernel_workspace` $kernel_workspace^)? (`whole_moe` $whole_moe^)?
    attr-dict-with-keyword $body
  }];
  let hasRegionVerifier = 1;
  let extraClassDeclaration = [{
    /// The model this schedule plans for; null when the symbol does not resolve.
    ::pshard::ir::ModelOp getModelOp();
  }];
}

def PShard_TierOp : PShard_Op<"tier", [
    HasParent<"ScheduleOp">, SingleBlock, NoTerminator]> {
  let summary = "Predicted costs of every sub-layer at one token tier and context";
  let description = [{
    One `pshard.cost` per sub-layer of the model, in model order, for a pass of `tier`
    tokens whose attention reads `context` cached positions, plus what crossing PCIe
    costs at this tier: the hidden state of `tier` tokens each way, one token's logits
    back from the GPU, and the token ids to the GPU.

    ```mlir
    pshard.tier 16 context 256 h2d_hidden_ns 341 d2h_hidden_ns 341 d2h_logits_ns 170
        h2d_tokens_ns 5 {
      pshard.cost "attn[0]" cpu_ns 1200 cpu_loaded_ns 1200 gpu_ns 15 copy_ns 1451
          copy_loaded_ns 1451 stream_bytes 17408 slot_bytes 17408
    }
    ```
  }];
  let arguments = (ins PShard_CountAttr:$tier, PShard_CountAttr:$context,
                       PShard_CountAttr:$h2d_hidden_ns,
                       PShard_CountAttr:$d2h_hidden_ns, PShard_CountAttr:$d2h_logits_ns,
                       PShard_CountAttr:$h2d_tokens_ns);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = [{
    $tier `context` $context `h2d_hidden_ns` $h2d_hidden_ns `d2h_hidden_ns` $d2h_hidden_ns
    `d2h_logits_ns` $d2h_logits_ns `h2d_tokens_ns` $h2d_tokens_ns attr-dict-with-keyword
    $body
  }];
  let hasRegionVerifier = 1;
}

def PShard_CostOp : PShard_Op<"cost", [HasParent<"TierOp">]> {
  let summary = "One sub-layer's predicted times at one tier";
  let description = [{
    Roofline times of the sub-layer on the CPU (idle and while copies run), on the GPU,
    and of copying what a streamed pass needs (idle and while the CPU computes);
    `stream_bytes` is what a streamed pass copies (expected experts for MoE),
    `slot_bytes` the most it may need in a streaming slot. `copy_needs_input` marks a
    MoE block whose copy waits for routing. Present only when the profile has the
    figures (schema 1.3): `gpu_graph_saving_ns`, what replaying a device-only decode
    pass as one CUDA graph takes off `gpu_ns`, and `gpu_fixed_ns`, the part of `gpu_ns`
    (grouped expert launches) that does not shrink when the device runs only some experts.

    ```mlir
    pshard.cost "ffn[0]" cpu_ns 2100 cpu_loaded_ns 2100 gpu_ns 10 copy_ns 2176
        copy_loaded_ns 2176 stream_bytes 26112 slot_bytes 26112
    pshard.cost "moe[0]" cpu_ns 9000 cpu_loaded_ns 9000 gpu_ns 60 copy_ns 8000
        copy_loaded_ns 8000 stream_bytes 90112 slot_bytes 90112 gpu_graph_saving_ns 31
        gpu_fixed_ns 45
    ```
  }];
  let arguments = (ins StrAttr:$sublayer, PShard_CountAttr:$cpu_ns,
                       PShard_CountAttr:$cpu_loaded_ns, PShard_CountAttr:$gpu_ns,
                       PShard_CountAttr:$copy_ns, PShard_CountAttr:$copy_loaded_ns,
                       PShard_CountAttr:$stream_bytes, PShard_CountAttr:$slot_bytes,
                       UnitAttr:$copy_needs_input,
                       OptionalAttr<PShard_CountAttr>:$gpu_graph_saving_ns,
                       OptionalAttr<PShard_CountAttr>:$gpu_fixed_ns);
  let assemblyFormat = [{
    $sublayer `cpu_ns` $cpu_ns `cpu_loaded_ns` $cpu_loaded_ns `gpu_ns` $gpu_ns
    `copy_ns` $copy_ns `copy_loaded_ns` $copy_loaded_ns `stream_bytes` $stream_bytes
    `slot_bytes` $slot_bytes (`copy_needs_input` $copy_needs_input^)?
    (`gpu_graph_saving_ns` $gpu_graph_saving_ns^)? (`gpu_fixed_ns` $gpu_fixed_ns^)? attr-dict
  }];
}

def PShard_BudgetOp : PShard_Op<"budget", [
    HasParent<"ScheduleOp">, SingleBlock, NoTerminator]> {
  let summary = "One VRAM budget in one context range: its resident sets and plans";
  let description = [{
    The plans of one VRAM budget (bytes; 0 means CPU only) for the context range
    ending at `context` (resident KV caches hold that many positions). The body lists
    the `pshard.resident_set` ops the plans are built on (numbered in order), the
    `pshard.plan` ops, each placing exactly its set's sub-layers `gpu_resident`, and,
    once laid out, the `pshard.switch` ops between the selected plans and the
    `pshard.trade` ops of cells where sharing a set costs a tier its own best plan.

    ```mlir
    pshard.budget 1073741824 context 4096 {
      pshard.resident_set 0 ["attn[0]", "attn[1]"]
      pshard.plan tier 1 set 0 static placements "CRCRCC" ... selected
    }
    ```
  }];
  let arguments = (ins PShard_CountAttr:$budget, PShard_CountAttr:$context);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = "$budget `context` $context attr-dict-with-keyword $body";
  let hasRegionVerifier = 1;
}

def PShard_ResidentSetOp : PShard_Op<"resident_set", [HasParent<"BudgetOp">]> {
  let summary = "Sub-layers whose weights (and KV cache) stay in VRAM";
  let description = [{
    Candidate `index` of its budget: the sub-layers a plan on it keeps resident. Sets
    are numbered 0, 1, … in the order they appear.

    ```mlir
    pshard.resident_set 1 ["embed", "attn[0]", "ffn[0]"]
    ```
  }];
  let arguments = (ins PShard_CountAttr:$index, StrArrayAttr:$resident);
  let assemblyFormat = "$index $resident attr-dict";
}

def PShard_PlanOp : PShard_Op<"plan", [
    HasParent<"BudgetOp">, SingleBlock, NoTerminator]> {
  let summary = "One plan for one (budget, tier)";
  let description = [{
    On resident set `set` of its budget. `placements` has one letter per sub-layer in
    model order: `R` gpu_resident (weights in VRAM), `S` gpu_streamed (weights copied
    into a streaming slot just before use), `C` cpu. `order` lists the streamed
    sub-layers' indices in copy order; copies run up to `prefetch` streamed sub-layers
    ahead into `slots` slots of `slot_bytes` each. `time_ns` is the estimator's
    predicted time of one pass of `tier` tokens at the range's end, `start_time_ns` at
    its start (0 until laid out), with the busy time of each resource; `vram` is the
    arena size of the layout (0 until pshard-layout-vram ran), whose buffers the body
    lists. `selected` marks the plan the runtime gets for this (budget, context, tier).
    `experts`, when present, lists its expert-level MoE blocks as triples (sub-layer
    index, hot, copied): a streamed MoE block keeping its `hot` hottest experts resident
    (`expert` buffers, index the expert id), copying the next `copied` on demand and
    running the rest on the CPU beside the device.

    ```mlir
    pshard.plan tier 1 set 0 dynamic placements "CRSRCC" order [2] prefetch 1 slots 1 x
        26112 threads 8 time_ns 5230 start_time_ns 4800 busy_ns [4100, 30, 2176]
        vram 70144 selected {
      pshard.buffer weights of "attn[0]" index 0 at 0 size 256
      pshard.buffer stream_slot index 0 at 43776 size 26112
    }
    ```
  }];
  let arguments = (ins PShard_CountAttr:$tier, PShard_CountAttr:$set,
                       PShard_Strategy:$strategy,
                       StrAttr:$placements, DenseI64ArrayAttr:$order,
                       PShard_CountAttr:$prefetch, PShard_CountAttr:$slots,
                       PShard_CountAttr:$slot_bytes, PShard_CountAttr:$threads,
                       PShard_CountAttr:$time_ns, PShard_CountAttr:$start_time_ns,
                       DenseI64ArrayAttr:$busy_ns,
                       PShard_CountAttr:$vram, UnitAttr:$selected,
                       OptionalAttr<DenseI64ArrayAttr>:$experts);
  let regions = (region SizedRegion<1>:$layout);
  let assemblyFormat = [{
    `tier` $tier `set` $set $strategy `placements` $placements `order` $order
    `prefetch` $prefetch `slots` $slots `x` $slot_bytes `threads` $threads
    `time_ns` $time_ns `start_time_ns` $start_time_ns
    `busy_ns` $busy_ns `vram` $vram (`selected` $selected^)? (`experts` $experts^)?
    attr-dict-with-keyword
    $layout
  }];
  let hasVerifier = 1;
  let hasRegionVerifier = 1;
  let extraClassDeclaration = [{
    /// The placement letters of the plan: 'R', 'S' or 'C'.
    static constexpr char kResident = 'R', kStreamed = 'S', kCpu = 'C';
  }];
}

def PShard_BufferOp : PShard_Op<"buffer", [HasParent<"PlanOp">]> {
  let summary = "One buffer of a plan's VRAM arena";
  let description = [{
    What a plan allocates on the GPU, at `offset` bytes inside one arena: a resident
    tensor (`weights of` its sub-layer, `index` of the tensor in the sub-layer), the
    KV cache of a resident attention block, a streaming slot (`index`), the
    activations of one pass, or kernel workspace. Buffers never overlap and the arena
    never exceeds the budget.

    ```mlir
    pshard.buffer kv_cache of "attn[0]" at 4608 size 32768
    pshard.buffer activations at 70144 size 8192
    ```
  }];
  let arguments = (ins PShard_BufferKind:$kind, OptionalAttr<StrAttr>:$sublayer,
                       OptionalAttr<PShard_CountAttr>:$index,
                       PShard_CountAttr:$offset, PShard_CountAttr:$size);
  let assemblyFormat = [{
    $kind (`of` $sublayer^)? (`index` $index^)? `at` $offset `size` $size attr-dict
  }];
}

def PShard_SwitchOp : PShard_Op<"switch", [HasParent<"BudgetOp">]> {
  let summary = "What moving between two selected plans of a budget copies";
  let description = [{
    From the plan of `from_tier` in the range ending at `from_context` (this budget
    op's) to the plan of `to_tier` in the range ending at `to_context`: `upload` bytes
    of weights to the device, `evict` bytes it drops, KV cache bytes per cached
    position up (`kv_up`) and down (`kv_down`), and the predicted time (`time_ns`) at
    the workload's `positions` cached positions. Only switches that move anything are
    listed.

    ```mlir
    pshard.switch tier 1 -> 256 context 4096 -> 4096 upload 419430400 evict 0 kv_up 0
        kv_down 0 positions 1280 time_ns 35000000
    ```
  }];
  let arguments = (ins PShard_CountAttr:$from_tier, PShard_CountAttr:$to_tier,
                       PShard_CountAttr:$from_context, PShard_CountAttr:$to_context,
                       PShard_CountAttr:$upload, PShard_CountAttr:$evict,
                       PShard_CountAttr:$kv_up, PShard_CountAttr:$kv_down,
                       PShard_CountAttr:$positions, PShard_CountAttr:$time_ns);
  let assemblyFormat = [{
    `tier` $from_tier `->` $to_tier `context` $from_context `->` $to_context
    `upload` $upload `evict` $evict `kv_up` $kv_up `kv_down` $kv_down
    `positions` $positions `time_ns` $time_ns attr-dict
  }];
}

def PShard_TradeOp : PShard_Op<"trade", [HasParent<"BudgetOp">]> {
  let summary = "A tier slower than a forced strategy because it shares a resident set";
  let description = [{
    The selected plan of `tier` takes `auto_ns` per pass where the forced strategy
    `forced` takes `forced_ns`, because its own best set (`own_ns`) would cost more in
    switches than it saves: the workload takes `workload_ns` as chosen and
    `own_workload_ns` with the tier on its own set. pshard-compile prints these.

    ```mlir
    pshard.trade tier 16 auto_ns 463348000 forced static forced_ns 460000000
        own_ns 455000000 workload_ns 36000000000 own_workload_ns 36100000000
    ```
  }];
  let arguments = (ins PShard_CountAttr:$tier, PShard_CountAttr:$auto_ns,
                       PShard_Strategy:$forced, PShard_CountAttr:$forced_ns,
                       PShard_CountAttr:$own_ns, PShard_CountAttr:$workload_ns,
                       PShard_CountAttr:$own_workload_ns);
  let assemblyFormat = [{
    `tier` $tier `auto_ns` $auto_ns `forced` $forced `forced_ns` $forced_ns
    `own_ns` $own_ns `workload_ns` $workload_ns `own_workload_ns` $own_workload_ns
    attr-dict
  }];
}

#endif // PSHARD_DIALECT_PSHARD_IR_PSHARDSCHEDULEOPS_TD
