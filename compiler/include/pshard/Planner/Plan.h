// Plans and the plan grid: what the planner decides and the schedule artifact stores.
//
// A Plan is one (budget, tier): where every sub-layer's weights live and where it runs,
// the order of weight copies, the streaming slots, and the VRAM layout — every buffer
// the runtime allocates on the GPU at an offset inside ONE arena whose size never
// exceeds the budget. A PlanGrid is budgets × tiers of plans plus what they were made
// from (compile options, model and profile fingerprints).
//
//   const Plan& p = grid.at(/*budget_index=*/0, /*tier_index=*/0);
//   for (size_t i = 0; i < p.placements.size(); ++i)
//     std::cout << graph.sublayers[i].name << " " << placement_name(p.placements[i]) << "\n";
//
// Layout invariants (checked by validate_plan): buffers do not overlap, each lies inside
// [0, arena_bytes), arena_bytes ≤ budget_bytes; weights/KV buffers exist exactly for
// gpu_resident sub-layers; streamed sub-layers fit their slot. For one budget every tier
// has the same resident set at the same offsets, so a tier switch never reloads weights.
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
  kKvCache = 1,     // the KV cache of one resident attention sub-layer, n_ctx positions
  kStreamSlot = 2,  // a streaming slot (slot index set)
  kActivations = 3, // activations of one pass at this tier
  kWorkspace = 4,   // kernel scratch (tiled attention scores)
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

struct Plan {
  uint64_t budget_bytes = 0;
  int64_t tier = 1;                 // up to this many new tokens per pass
  std::string strategy;             // which strategy produced it (strategy_name)
  std::vector<Placement> placements; // one per sub-layer, graph order
  std::vector<int32_t> stream_order; // gpu_streamed sub-layers in copy order
  int32_t prefetch_depth = 0;       // copies may run this many streamed sub-layers ahead
  int32_t stream_slot_count = 0;
  uint64_t stream_slot_bytes = 0;   // each slot; holds the largest streamed need at this tier
  std::vector<VramBuffer> vram_layout;
  uint64_t arena_bytes = 0;         // = peak VRAM of the plan
  int32_t cpu_threads = 1;
  // The estimator's prediction for one pass of `tier` tokens at n_ctx context.
  double predicted_ms_per_pass = 0;
  double predicted_tokens_per_s = 0;
  double cpu_busy_ms = 0, gpu_busy_ms = 0, copy_busy_ms = 0;

  uint64_t peak_vram_bytes() const { return arena_bytes; }
  int count(Placement p) const;
};

struct CompileOptions {
  std::vector<uint64_t> budgets;   // bytes; empty = auto ladder up to the profiled VRAM
  std::vector<int64_t> tiers = {1, 4, 16, 64, 256};
  int64_t n_ctx = 4096;
  TensorType kv_type = kDefaultKvType; // KV cache elements (K and V alike), as the runtime keeps them
  int threads = 0;                 // 0: the machine's default
  Strategy strategy = Strategy::kAuto;
  int max_budgets = 10;            // auto ladder length
  // Kernel scratch every GPU plan reserves in its workspace buffer. Unset: the machine's
  // figure (MachineModel::kernel_workspace_bytes; plan_grid fills it in). 0 plans for a
  // backend without kernel scratch (the emulated GPU; the CUDA backend refuses them).
  std::optional<uint64_t> kernel_workspace_bytes;
  std::string pshard_version;      // filled by the tool; stored in the artifact
};

struct PlanGrid {
  std::vector<uint64_t> budgets;        // ascending
  std::vector<int64_t> tiers;           // ascending
  std::vector<std::vector<Plan>> plans; // [budget index][tier index]
  CompileOptions options;               // as resolved (budgets, threads filled in)
  ModelFingerprint model_fingerprint;
  MachineSummary machine;
  uint64_t minimum_budget_bytes = 0;    // the smallest budget a GPU plan fits

  const Plan& at(size_t budget_index, size_t tier_index) const {
    return plans[budget_index][tier_index];
  }
};

// Checks the layout invariants above for one plan; the error names the broken one.
Status validate_plan(const ModelGraph& graph, const CompileOptions& options, const Plan& plan);
// validate_plan on every plan plus: the same resident buffers at the same offsets across
// the tiers of each budget.
Status validate_grid(const ModelGraph& graph, const PlanGrid& grid);

} // namespace pshard::planner
