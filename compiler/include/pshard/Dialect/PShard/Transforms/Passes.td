//===- Passes.td - the planning passes -----------------------*- tablegen -*-===//
//
// The planner as a pipeline over the pshard dialect. Each pass does one step of
// pshard::planner's work on the IR and writes its result back as ops, so any step can
// be run, inspected and tested alone with pshard-opt. The arithmetic (roofline, event
// simulation, resident sets, search, layout) lives in pshard_planner; the passes own
// the IR. In pipeline order:
//
//   pshard-annotate-costs        pshard.schedule + pshard.tier/pshard.cost per tier
//   pshard-choose-resident-set   pshard.budget per budget, with its resident set
//   pshard-generate-candidates   pshard.plan per fixed strategy per (budget, tier)
//   pshard-search-placements     pshard.plan `search` per (budget, tier)
//   pshard-select-plans          marks the fastest plan per (budget, tier) selected
//   pshard-layout-vram           pshard.buffer ops: every plan's VRAM arena
//
// Times in the IR are integer nanoseconds; sizes are bytes.
//
//===----------------------------------------------------------------------===//

#ifndef PSHARD_DIALECT_PSHARD_TRANSFORMS_PASSES_TD
#define PSHARD_DIALECT_PSHARD_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def AnnotateCostsPass : Pass<"pshard-annotate-costs", "::mlir::ModuleOp"> {
  let summary = "Predict every sub-layer's CPU, GPU and copy time per token tier";
  let description = [{
    For each `pshard.model` without a schedule, adds a `pshard.schedule` holding one
    `pshard.tier` per tier with one `pshard.cost` per sub-layer: the roofline
    `max(flops / achieved FLOP/s, bytes / achieved bandwidth) + overhead` on the CPU
    (idle, and under load while copies run) and on the GPU, and the time to copy what
    a streamed pass needs over PCIe (idle, and while the CPU computes). The machine
    comes from a profile (`*.pshprof`), or `fixed` for pshard::planner's
    FixedMachineParams defaults (hand-checkable numbers for tests).

    ```mlir
    // pshard-opt --pshard-annotate-costs="profile=fixed tiers=1,16"
    pshard.model @tiny ... { ... }
    // adds:
    pshard.schedule @tiny_plans for @tiny machine "fixed" profile "0000000000000000"
        vram 8589934592 threads 8 tiers [1, 16] {
      pshard.tier 1 h2d_hidden_ns 21 ... {
        pshard.cost "embed" cpu_ns 5 cpu_loaded_ns 5 gpu_ns 0 copy_ns 2901 ...
        ...
      }
      pshard.tier 16 ... { ... }
    }
    ```
  }];
  let options = [
    Option<"profile", "profile", "std::string", /*default=*/"\"fixed\"",
           "Machine profile (*.pshprof), or `fixed` for hand-made constants">,
    ListOption<"tiers", "tiers", "int64_t",
               "Token tiers, ascending (default 1,4,16,64,256)">,
    Option<"threads", "threads", "int64_t", /*default=*/"0",
           "CPU threads (0: the machine's default)">,
    Option<"kernelWorkspace", "kernel-workspace", "int64_t", /*default=*/"-1",
           "Kernel scratch bytes every GPU plan reserves (-1: the profile's figure)">,
  ];
}

def ChooseResidentSetPass : Pass<"pshard-choose-resident-set", "::mlir::ModuleOp"> {
  let summary = "Choose, per VRAM budget, the sub-layers that stay resident";
  let description = [{
    Adds one `pshard.budget` per budget to each costed `pshard.schedule`. The resident
    set takes attention blocks (with their KV cache) first, then other sub-layers by
    predicted benefit per byte, leaving room for streaming slots; the candidate sets
    are compared by their plans' time over all tiers. One set serves every tier of a
    budget, so a tier switch never reloads weights. With `strategy=layers` it is the
    llama.cpp-style prefix of whole layers instead. Budget 0 is CPU-only. A budget
    above 0 that cannot hold the smallest GPU plan is an error naming the minimum.

    ```mlir
    // pshard-opt --pshard-choose-resident-set="budgets=0,64K"
    pshard.schedule @tiny_plans ... {
      pshard.tier 1 ... { ... }
      // adds:
      pshard.budget 0 resident [] {
      }
      pshard.budget 65536 resident ["attn[0]"] {
      }
    }
    ```
  }];
  let options = [
    ListOption<"budgets", "budgets", "std::string",
               "VRAM budgets: bytes with an optional K/M/G suffix, or `auto` for a "
               "ladder up to the machine's VRAM (default auto)">,
    Option<"strategy", "strategy", "std::string", /*default=*/"\"auto\"",
           "auto, or a strategy to force (layers picks its own resident set)">,
  ];
}

def GenerateCandidatesPass : Pass<"pshard-generate-candidates", "::mlir::ModuleOp"> {
  let summary = "Build the fixed strategies' plans for every (budget, tier)";
  let description = [{
    In every `pshard.budget`, adds one `pshard.plan` per tier and strategy on the
    budget's resident set: `gpu_only` (everything else streamed to the GPU), `static`
    (everything else on the CPU) and `dynamic` (the rest split so that copies overlap
    CPU work); `layers` when forced. Each gets the slot count that fits and is
    fastest, and the event simulation's predicted time. Strategies that do not fit the
    budget are left out; budget 0 gets one `cpu_only` plan per tier.

    ```mlir
    // pshard-opt --pshard-generate-candidates
    pshard.budget 65536 resident ["attn[0]"] {
      // adds, for each tier:
      pshard.plan tier 1 gpu_only placements "SRSS" order [0, 2, 3] ...
      pshard.plan tier 1 static placements "CRCC" order [] ...
      pshard.plan tier 1 dynamic placements "CRSC" order [2] ...
    }
    ```
  }];
  let options = [
    Option<"strategy", "strategy", "std::string", /*default=*/"\"auto\"",
           "auto (gpu-only, static and dynamic), or one strategy to build">,
  ];
}

def SearchPlacementsPass : Pass<"pshard-search-placements", "::mlir::ModuleOp"> {
  let summary = "Search per-sub-layer placements beyond the fixed strategies";
  let description = [{
    For every (budget, tier), starts from each candidate plan in turn and moves
    non-resident sub-layers between `C` and `S` — all of one kind at once, then one at
    a time — keeping each change the event simulation predicts faster. The best result
    is added as a `search` plan when it beats every candidate, so the search can only
    add an option, never lose one. Does nothing when a strategy is forced.

    ```mlir
    // pshard-opt --pshard-search-placements
    pshard.budget 65536 resident ["attn[0]"] {
      pshard.plan tier 1 static placements "CRCC" ... time_ns 5000 ...
      // adds:
      pshard.plan tier 1 search placements "CRSC" order [2] ... time_ns 4200 ...
    }
    ```
  }];
  let options = [
    Option<"strategy", "strategy", "std::string", /*default=*/"\"auto\"",
           "auto to search; any forced strategy skips the search">,
  ];
}

def SelectPlansPass : Pass<"pshard-select-plans", "::mlir::ModuleOp"> {
  let summary = "Keep the fastest plan per (budget, tier)";
  let description = [{
    Marks the plan with the least predicted time of each (budget, tier) `selected`
    (the earliest on a tie, so a fixed strategy wins over an equal search result) and
    drops the others unless `keep-candidates` is set. The selected plan is therefore
    never predicted slower than any fixed strategy.

    ```mlir
    // pshard-opt --pshard-select-plans
    pshard.plan tier 1 static ... time_ns 5000 ...
    pshard.plan tier 1 search ... time_ns 4200 ...
    // becomes:
    pshard.plan tier 1 search ... time_ns 4200 ... selected
    ```
  }];
  let options = [
    Option<"keepCandidates", "keep-candidates", "bool", /*default=*/"false",
           "Keep the plans that were not selected">,
    Option<"strategy", "strategy", "std::string", /*default=*/"\"auto\"",
           "auto names each selected plan by what it does (all on the GPU: gpu_only, "
           "nothing streamed: static); a forced strategy keeps its name">,
  ];
}

def LayoutVramPass : Pass<"pshard-layout-vram", "::mlir::ModuleOp"> {
  let summary = "Place every buffer of each plan in one VRAM arena";
  let description = [{
    For every plan, lays out resident tensors and KV caches (at the same offsets in
    every tier of a budget), streaming slots, activations and workspace in one arena,
    each aligned to 256 bytes, fills in the plan's stream order, `vram` (the arena
    size) and final simulated times, and lists the buffers as `pshard.buffer` ops. An
    arena larger than the budget is an error.

    ```mlir
    // pshard-opt --pshard-layout-vram
    pshard.plan tier 1 dynamic placements "CRSC" ... vram 0 selected {
    }
    // becomes:
    pshard.plan tier 1 dynamic placements "CRSC" ... vram 70144 selected {
      pshard.buffer weights of "attn[0]" index 0 at 0 size 256
      pshard.buffer kv_cache of "attn[0]" at 256 size 32768
      pshard.buffer stream_slot index 0 at 33024 size 26112
      pshard.buffer activations at 59136 size 8192
      pshard.buffer workspace at 67328 size 2816
    }
    ```
  }];
}

#endif // PSHARD_DIALECT_PSHARD_TRANSFORMS_PASSES_TD
