//===- Passes.td - the planning passes -----------------------*- tablegen -*-===//
//
// The planner as a pipeline over the pshard dialect. Each pass does one step of
// pshard::planner's work on the IR and writes its result back as ops, so any step can
// be run, inspected and tested alone with pshard-opt. The arithmetic (roofline, event
// simulation, resident sets, search, selection, layout) lives in pshard_planner, one
// function per pass (compiler/lib/Planner/PlannerInternal.h), so pshard-compile's direct
// path and this pipeline write the same artifact; the passes own the IR. In order:
//
//   pshard-annotate-costs        pshard.schedule + pshard.tier/pshard.cost per
//                                (context, tier)
//   pshard-choose-resident-set   pshard.budget per (budget, context range), with its
//                                candidate pshard.resident_set ops
//   pshard-generate-candidates   pshard.plan per fixed strategy per (set, tier)
//   pshard-search-placements     pshard.plan `search` for the shortlisted (set, tier)
//   pshard-select-plans          a set and plan per tier, selected; pshard.trade ops
//   pshard-layout-vram           pshard.buffer ops: every plan's VRAM arena;
//                                pshard.switch ops between a budget's plans
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
    `pshard.tier` per tier at each context range's end and start (`contexts`: the
    ranges' upper bounds; the model's context is always the last) with one
    `pshard.cost` per sub-layer: the roofline
    `max(flops / achieved FLOP/s, bytes / achieved bandwidth) + overhead` on the CPU
    (idle, and under load while copies run) and on the GPU, and the time to copy what
    a streamed pass needs over PCIe (idle, and while the CPU computes). The machine
    comes from a profile (`*.pshprof`), or `fixed` for pshard::planner's
    FixedMachineParams defaults (hand-checkable numbers for tests). The schedule also
    records the `workload` switches will be priced against and the machine's PCIe
    pricing (`link`).

    ```mlir
    // pshard-opt --pshard-annotate-costs="profile=fixed tiers=1,16"
    pshard.model @tiny ... context 256 ... { ... }
    // adds:
    pshard.schedule @tiny_plans for @tiny machine "fixed" profile "0000000000000000"
        vram 8589934592 threads 8 tiers [1, 16] contexts [256] workload 1024 : 256
        link [0, 87381, 0, 87381] {
      pshard.tier 1 context 1 h2d_hidden_ns 21 ... { ... }
      pshard.tier 16 context 1 ... { ... }
      pshard.tier 1 context 256 h2d_hidden_ns 21 ... {
        pshard.cost "embed" cpu_ns 5 cpu_loaded_ns 5 gpu_ns 0 copy_ns 2901 ...
        ...
      }
      pshard.tier 16 context 256 ... { ... }
    }
    ```
  }];
  let options = [
    Option<"profile", "profile", "std::string", /*default=*/"\"fixed\"",
           "Machine profile (*.pshprof), or `fixed` for hand-made constants">,
    ListOption<"tiers", "tiers", "int64_t",
               "Token tiers, ascending (default 1,4,16,64,256)">,
    ListOption<"contexts", "contexts", "int64_t",
               "Upper bounds of the context ranges planned apart (default: the model's "
               "context only)">,
    Option<"workload", "workload", "std::string", /*default=*/"\"\"",
           "PROMPT:GENERATED tokens switches are priced for (default 1024:256)">,
    Option<"threads", "threads", "int64_t", /*default=*/"0",
           "CPU threads (0: the machine's default)">,
    Option<"kernelWorkspace", "kernel-workspace", "int64_t", /*default=*/"-1",
           "Kernel scratch bytes every GPU plan reserves (-1: the profile's figure)">,
    Option<"expertLevel", "expert-level", "bool", /*default=*/"true",
           "MoE blocks may be placed expert by expert (false: whole blocks only; the "
           "schedule records it as `whole_moe`)">,
  ];
}

def ChooseResidentSetPass : Pass<"pshard-choose-resident-set", "::mlir::ModuleOp"> {
  let summary = "Choose, per VRAM budget and context range, the candidate resident sets";
  let description = [{
    Adds one `pshard.budget` per (budget, context range) to each costed
    `pshard.schedule`, holding the resident sets its plans will be built on. Each set
    takes attention blocks (with their KV cache, sized for the range) first, then other
    sub-layers by predicted benefit per byte at one tier, leaving room for 0, 1 or 2
    streaming slots; under `auto` every tier's order contributes sets, plus the
    llama.cpp-style prefix of whole layers and the empty set, and the later passes
    give each tier the set that serves the workload best. A forced strategy gets the
    one set it shares over all tiers (`layers`: the prefix of whole layers). Budget 0
    is CPU-only. A budget above 0 that cannot hold the smallest GPU plan is an error
    naming the minimum.

    ```mlir
    // pshard-opt --pshard-choose-resident-set="budgets=0,64K"
    pshard.schedule @tiny_plans ... contexts [256] ... {
      pshard.tier 1 context 256 ... { ... }
      // adds:
      pshard.budget 0 context 256 {
        pshard.resident_set 0 []
      }
      pshard.budget 65536 context 256 {
        pshard.resident_set 0 ["attn[0]"]
        pshard.resident_set 1 ["embed", "attn[0]"]
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
    In every `pshard.budget`, adds one `pshard.plan` per tier, resident set and
    strategy: `static` (everything not resident on the CPU), `dynamic` (the rest split
    so that copies overlap CPU work) and `gpu_only` (everything else streamed to the
    GPU); the forced strategy alone when one is forced. Each gets the slot count that
    fits and is fastest, and the event simulation's predicted time. Strategies that do
    not fit the budget are left out; budget 0 gets one `cpu_only` plan per tier.

    ```mlir
    // pshard-opt --pshard-generate-candidates
    pshard.budget 65536 context 256 {
      pshard.resident_set 0 ["attn[0]"]
      // adds, for each tier and set:
      pshard.plan tier 1 set 0 static placements "CRCC" order [] ...
      pshard.plan tier 1 set 0 dynamic placements "CRSC" order [2] ...
      pshard.plan tier 1 set 0 gpu_only placements "SRSS" order [0, 2, 3] ...
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
    For the (resident set, tier) pairs of each budget most likely to be kept — each
    tier's two fastest sets by their fixed strategies, and the sets fastest at the
    first and the last tier at every tier — starts from each candidate plan in turn
    and moves non-resident sub-layers between `C` and `S` — all of one kind at once,
    then one at a time — keeping each change the event simulation predicts faster. The
    best result is added as a `search` plan when it beats every candidate of its pair,
    so the search can only add an option, never lose one. Does nothing when a strategy
    is forced.

    ```mlir
    // pshard-opt --pshard-search-placements
    pshard.budget 65536 context 256 {
      pshard.resident_set 0 ["attn[0]"]
      pshard.plan tier 1 set 0 static placements "CRCC" ... time_ns 5000 ...
      // adds:
      pshard.plan tier 1 set 0 search placements "CRSC" order [2] ... time_ns 4200 ...
    }
    ```
  }];
  let options = [
    Option<"strategy", "strategy", "std::string", /*default=*/"\"auto\"",
           "auto to search; any forced strategy skips the search">,
  ];
}

def SelectPlansPass : Pass<"pshard-select-plans", "::mlir::ModuleOp"> {
  let summary = "Give every tier a resident set and its plan";
  let description = [{
    Per context range and budget, ascending: each (set, tier) competes with its
    fastest candidate (the earliest on a tie, so a fixed strategy wins over an equal
    search result), and the smaller budget's selected plans compete too (they fit).
    A forced strategy keeps its one set. Under `auto` each tier gets the set — and its
    plan — of the assignment with the least total time over the schedule's workload:
    the prompt in chunks of the largest tier, then decode, with a switch priced at the
    schedule's PCIe rate wherever consecutive passes use different sets; a tier the
    workload does not run takes the set that costs least for one pass between two
    decode passes. No tier is slower than at the smaller budget (or CPU only). The
    chosen sets and plans replace the candidates (which `keep-candidates` keeps
    before them, unselected); a tier slower than a forced strategy because it shares
    a set gets a `pshard.trade`.

    ```mlir
    // pshard-opt --pshard-select-plans
    pshard.budget 65536 context 256 {
      pshard.resident_set 0 ["attn[0]"]
      pshard.plan tier 1 set 0 static ... time_ns 5000 ...
      pshard.plan tier 1 set 0 search ... time_ns 4200 ...
    }
    // becomes:
    pshard.budget 65536 context 256 {
      pshard.resident_set 0 ["attn[0]"]
      pshard.plan tier 1 set 0 search ... time_ns 4200 ... selected
    }
    ```
  }];
  let options = [
    Option<"keepCandidates", "keep-candidates", "bool", /*default=*/"false",
           "Keep the sets and plans that were not selected">,
    Option<"strategy", "strategy", "std::string", /*default=*/"\"auto\"",
           "auto assigns sets to tiers and names each selected plan by what it does (all "
           "on the GPU: gpu_only, nothing streamed: static); a forced strategy keeps its "
           "one set and its name">,
  ];
}

def LayoutVramPass : Pass<"pshard-layout-vram", "::mlir::ModuleOp"> {
  let summary = "Place every buffer of each plan in one VRAM arena";
  let description = [{
    For every selected plan, lays out resident tensors and KV caches, streaming slots,
    activations and workspace in one arena, each aligned to 256 bytes. A budget's
    resident sets are laid out jointly: a buffer two plans hold sits at one offset in
    both, so a switch between them leaves it in place and uploads only what the other
    adds. Fills in the plan's stream order, `vram` (the arena size) and final simulated
    times at the range's end and start, lists the buffers as `pshard.buffer` ops, and
    adds a `pshard.switch` for every switch between the budget's plans that moves
    anything. An arena larger than the budget is an error.

    ```mlir
    // pshard-opt --pshard-layout-vram
    pshard.plan tier 1 set 0 dynamic placements "CRSC" ... vram 0 selected {
    }
    // becomes:
    pshard.plan tier 1 set 0 dynamic placements "CRSC" ... vram 70144 selected {
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
