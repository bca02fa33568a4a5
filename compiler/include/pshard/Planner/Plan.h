// Plans and the plan grid: what the planner decides and the schedule artifact stores.
//
// A Plan is one (budget, context range, tier): where every sub-layer's weights live and
// where it runs, the order of weight copies, the streaming slots, and the VRAM layout —
// every buffer the runtime allocates on the GPU at an offset inside ONE arena whose size
// never exceeds the budget. A PlanGrid is budgets × context ranges × tiers of plans, the
// switches between the plans of each budget with their bytes and predicted time, plus
// what they were made from (compile options, model and profile fingerprints).
//
//   const Plan& p = grid.at(/*budget_index=*/0, /*tier_index=*/0);   // the full context
//   for (size_t i = 0; i < p.placements.size(); ++i)
//     std::cout << graph.sublayers[i].name << " " << placement_name(p.placements[i]) << "\n";
//
// Layout invariants (checked by validate_plan): buffers do not overlap, each lies inside
// [0, arena_bytes), arena_bytes ≤ budget_bytes; weights/KV buffers exist exactly for
// gpu_resident sub-layers; streamed sub-layers fit their slot. Each plan has its own
// resident set; within a budget a buffer that two plans keep resident sits at the same
// offset in both wherever the layout allows (then a switch between them uploads only
// what the second adds), and every switch that moves anything is listed with its bytes.
#pragma once

#include "runtime/core/status.h"
#include "runtime/model/kv_types.h"
#include "runtime/schedule/model_fingerprint.h"
#include "runtime/tensor/tensor_type.h"
#include "pshard/Planner/MachineModel.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace pshard::planner {

struct ModelGraph;

enum class Placement : uint8_t {
  kGpuResident = 0, // weights pinned in VRAM for the whole run; executes on the GPU
  kGpuStreamed = 1, // weights copied into a streaming slot before use; executes on the GPU
  kCpu = 2,         // executes on the CPU from system RAM
};
const char* placement_name(Placement p); // "gpu_resident", "gpu_streamed", "cpu"
inline bool on_gpu(Placement p) { return p != Placement::kCpu; }

enum class BufferKind : uint8_t {
  kWeights = 0,     // one resident tensor (sub-layer and tensor index set)
  kKvCache = 1,     // the KV cache of one resident attention sub-layer, Plan::context positions
  kStreamSlot = 2,  // a streaming slot (slot index set)
  kActivations = 3, // activations of one pass at this tier
  kWorkspace = 4,   // kernel scratch (tiled attention scores)
  kExpert = 5,      // one resident expert of an expert-level MoE (sub-layer set; tensor:
                    // the expert id): its slice of each expert tensor, each aligned
};
const char* buffer_kind_name(BufferKind k); // "weights", "kv_cache", "stream_slot", …

struct VramBuffer {
  BufferKind kind = BufferKind::kWeights;
  int32_t sublayer = -1; // weights / kv_cache: the sub-layer's index; else -1
  int32_t tensor = -1;   // weights: index into SubLayerInfo::tensors; stream_slot: slot index
  uint64_t offset = 0;   // bytes from the arena's start (aligned to kVramAlignment)
  uint64_t size = 0;
};

inline constexpr uint64_t kVramAlignment = 256;

// Strategy names as stored in artifacts and accepted by --strategy.
enum class Strategy : uint8_t { kAuto, kGpuOnly, kStatic, kDynamic, kLayers, kSearch, kCpuOnly };
const char* strategy_name(Strategy s); // "auto", "gpu-only", "static", "dynamic", "layers",
                                       // "search", "cpu-only"
Result<Strategy> parse_strategy(const std::string& name);

// An expert-level MoE block of a plan: the router, norms and shared expert are streamed
// as the sub-layer's unit; of its routed experts `resident` stay in VRAM, `copied` are
// copied on demand (only those a pass routes to), every other one runs on the CPU at the
// same time as the device's. Ids ascending.
struct PlanExperts {
  int32_t sublayer = -1;
  std::vector<int32_t> resident, copied;
  uint64_t resident_bytes = 0;      // VRAM of the resident experts (aligned, in the budget)
  uint64_t expected_copy_bytes = 0; // expected bytes a pass copies (unit + routed copied)
  double expected_cpu_experts = 0;  // expected distinct experts a pass runs on the CPU
};

struct Plan {
  uint64_t budget_bytes = 0;
  int64_t tier = 1;                 // up to this many new tokens per pass
  int64_t context = 0;              // the context range's upper bound: resident KV caches
                                    // hold this many positions, costs are priced here
  int64_t context_start = 1;        // the smallest context the range serves
  std::string strategy;             // which strategy produced it (strategy_name)
  std::vector<Placement> placements; // one per sub-layer, graph order
  std::vector<int32_t> stream_order; // gpu_streamed sub-layers in copy order
  int32_t prefetch_depth = 0;       // copies may run this many streamed sub-layers ahead
  int32_t stream_slot_count = 0;
  uint64_t stream_slot_bytes = 0;   // each slot; holds the largest streamed need at this tier
  std::vector<VramBuffer> vram_layout;
  uint64_t arena_bytes = 0;         // = peak VRAM of the plan
  int32_t cpu_threads = 1;
  // The estimator's prediction for one pass of `tier` tokens at `context` positions, and
  // at `context_start` (the runtime interpolates between them for the context it runs at).
  double predicted_ms_per_pass = 0;
  double predicted_ms_at_context_start = 0;
  double predicted_tokens_per_s = 0;
  double cpu_busy_ms = 0, gpu_busy_ms = 0, copy_busy_ms = 0;
  std::vector<PlanExperts> experts; // expert-level MoE blocks; absent: placed whole

  uint64_t peak_vram_bytes() const { return arena_bytes; }
  int count(Placement p) const;
};

// What a user's requests look like, for pricing switches between plans: a prompt of
// `prompt_tokens` run in chunks of the largest tier, then `generated_tokens` decode
// passes, one switch each way per request where the plans' resident sets differ.
struct Workload {
  int64_t prompt_tokens = 1024;
  int64_t generated_tokens = 256;
};
// "PROMPT:GENERATED" token counts, e.g. "1024:256" (K suffixes allowed: "4K:512").
Result<Workload> parse_workload(const std::string& text);

// How the compiler prices a residency switch: host->device and device->host copies as
// latency + bytes × rate, fitted to the profile's PCIe figures under load. Integers, so
// the artifact and the IR carry exactly the numbers the planner used.
struct LinkPricing {
  uint64_t h2d_latency_ns = 0, h2d_ns_per_mib = 0;
  uint64_t d2h_latency_ns = 0, d2h_ns_per_mib = 0;
  double h2d_seconds(uint64_t bytes) const; // 0 for 0 bytes
  double d2h_seconds(uint64_t bytes) const;
};
LinkPricing link_pricing(const MachineModel& machine); // all zero without a GPU

struct CompileOptions {
  std::vector<uint64_t> budgets;   // bytes; empty = auto ladder up to the profiled VRAM
  std::vector<int64_t> tiers = {1, 4, 16, 64, 256};
  int64_t n_ctx = 4096;            // the longest context planned for
  // Upper bounds of the context ranges planned separately, ascending; the last is
  // n_ctx (plan_grid appends it when missing). Empty: one range, n_ctx.
  std::vector<int64_t> contexts;
  Workload workload;
  TensorType kv_type = kDefaultKvType; // KV cache elements (K and V alike), as the runtime keeps them
  // Sequences served at once (pshard-compile --parallel): resident KV caches hold n_ctx
  // positions for each (the device KV pages of a batch), activations the logits of
  // min(tier, parallel) rows.
  int64_t parallel = 1;
  int threads = 0;                 // 0: the machine's default
  Strategy strategy = Strategy::kAuto;
  // Expert-level MoE placement (auto only): hot experts resident, the others copied on
  // demand or run on the CPU beside the device. Off: MoE blocks are placed whole.
  bool expert_level = true;
  int max_budgets = 10;            // auto ladder length
  // Kernel scratch every GPU plan reserves in its workspace buffer. Unset: the machine's
  // figure (MachineModel::kernel_workspace_bytes; plan_grid fills it in). 0 plans for a
  // backend without kernel scratch (the emulated GPU; the CUDA backend refuses them).
  std::optional<uint64_t> kernel_workspace_bytes;
  // Rows of the sliding-window layers' caches (kv_ring_positions). Unset: from the
  // compiled context and the largest tier; plan_grid fills it in, so the plans of one
  // tier or context (plan_fixed_strategy, plan_at_context) keep the grid's rings.
  std::optional<int64_t> kv_ring;
  std::string pshard_version;      // filled by the tool; stored in the artifact
};

// The rows of a sliding-window layer's cache for one sequence at the compiled context
// and tiers (runtime/model/kv_ring.h, the runtime's own rule): position p at row p % ring,
// so a device cache and its moves hold at most that many positions. With several
// sequences (parallel), the rows of those layers' page pool (window_pool_pages, pages of
// kKvPageTokens). 0: whole caches (no window, or no fewer rows than whole caches).
int64_t kv_ring_positions(const ModelGraph& graph, const CompileOptions& options);

// Moving between two plans of one budget (a tier change, or the context crossing a
// range): what the runtime copies. Weights that enter are uploaded, weights that leave
// are dropped; KV caches that enter or leave (or change size) move their cached
// positions between host and device, a recurrent layer's its whole state. Only switches that move
// something are listed.
struct PlanSwitch {
  int64_t from_context = 0, from_tier = 0;
  int64_t to_context = 0, to_tier = 0;
  uint64_t upload_bytes = 0;  // weights copied to the device
  uint64_t evict_bytes = 0;   // weights the device drops (no copy)
  uint64_t kv_upload_bytes_per_position = 0;   // KV rows host -> device, per cached position
  uint64_t kv_download_bytes_per_position = 0; // KV rows device -> host, per cached position
  // Of those, the sliding-window layers' rings (kv_ring_positions): at most a ring each.
  uint64_t kv_ring_upload_bytes_per_position = 0;
  uint64_t kv_ring_download_bytes_per_position = 0;
  // Recurrent layers' states (Qwen3-Next's) that enter or leave: fixed bytes, whatever the
  // positions cached, of one sequence (priced for each of CompileOptions::parallel).
  uint64_t state_upload_bytes = 0, state_download_bytes = 0;
  int64_t priced_positions = 0; // the cached positions predicted_ms assumes (the workload's)
  double predicted_ms = 0;
};

// A (budget, context, tier) whose plan is slower than a forced strategy's because it
// shares a resident set with other tiers: its own set would win the pass but lose more on
// the workload's switches. pshard-compile prints these.
struct Trade {
  uint64_t budget_bytes = 0;
  int64_t context = 0, tier = 0;
  double auto_ms = 0;            // the chosen plan
  std::string forced_strategy;   // the forced strategy that is faster at this cell
  double forced_ms = 0;
  double own_ms = 0;             // the fastest plan on a set of this tier's own
  double workload_ms = 0;        // the workload's total with the chosen sets
  double workload_own_ms = 0;    // and with this tier on its own set
};

// Trades in (budget, context, tier) order, as pshard-compile prints them.
void sort_trades(std::vector<Trade>* trades);

struct PlanGrid {
  std::vector<uint64_t> budgets;        // ascending
  std::vector<int64_t> tiers;           // ascending
  std::vector<int64_t> contexts;        // ascending upper bounds; the last is options.n_ctx
  // [budget index][context index][tier index]
  std::vector<std::vector<std::vector<Plan>>> plans;
  std::vector<std::vector<PlanSwitch>> switches; // per budget
  // The CPU-only plans ([context index][tier index]) every budget's plans are never
  // slower than; the runtime's plan when it has no device memory.
  std::vector<std::vector<Plan>> cpu_only;
  std::vector<Trade> trades;
  LinkPricing link;
  CompileOptions options;               // as resolved (budgets, threads, contexts filled in)
  ModelFingerprint model_fingerprint;
  MachineSummary machine;
  uint64_t minimum_budget_bytes = 0;    // the smallest budget a GPU plan fits

  // The plan at the full context (the last range), or at context range `context_index`.
  const Plan& at(size_t budget_index, size_t tier_index) const {
    return plans[budget_index].back()[tier_index];
  }
  const Plan& at(size_t budget_index, size_t tier_index, size_t context_index) const {
    return plans[budget_index][context_index][tier_index];
  }
};

// Checks the layout invariants above for one plan; the error names the broken one.
Status validate_plan(const ModelGraph& graph, const CompileOptions& options, const Plan& plan);
// validate_plan on every plan plus the grid's shape, and that every recorded switch
// names two plans of its budget.
Status validate_grid(const ModelGraph& graph, const PlanGrid& grid);

} // namespace pshard::planner
