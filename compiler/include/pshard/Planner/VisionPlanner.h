// VLMOpt, planned: the vision phase of a VLM per (budget, image-size tier), placed with the
// language model's machinery — every vision sub-layer resident, streamed or on the CPU,
// priced by the same roofline over the machine profile and timed by the same event
// simulation (simulate_seconds) — with a tiled attention whose tile the budget decides.
//
//   PSHARD_ASSIGN_OR_RETURN(auto tiers, planner::parse_image_tiers("720p,1440p", vision));
//   PSHARD_ASSIGN_OR_RETURN(planner::VisionPlan p,
//       planner::plan_vision(vision, *machine, /*budget=*/2ull << 30, tiers[1], {}));
//   p.arena_bytes;      // ≤ budget: the vision phase's peak VRAM
//
// The phases share the arena in time, never in space: the vision phase runs before the
// language phase allocates, in the whole arena, so a budget holds a VLM when it holds the
// larger phase (VlmMinimum::vlmopt), not their sum. What that costs — re-uploading the
// language plan's resident weights after an image — is recorded with each plan.
// The baseline it is compared with (what llama.cpp-style runtimes allocate): every vision
// weight resident, untiled attention (all heads' scores over the whole span), and the
// vision buffers beside the language model's (VlmMinimum::baseline).
#pragma once

#include "pshard/Planner/MachineModel.h"
#include "pshard/Planner/Plan.h"
#include "pshard/Planner/VisionGraph.h"

#include <cstdint>
#include <string>
#include <vector>

namespace pshard::planner {

// An image-size tier: plans made for N patches serve every image of at most N.
struct ImageTier {
  std::string name; // "1440p" (a 16:9 frame of that height), or the patch count
  int64_t patches = 0;
};

// "480p,720p,1080p,1440p" (16:9 frames, preprocessed as the runtime does: capped to the
// projector's image_size, rounded to the merged patch) or patch counts ("4096,16K");
// ascending by patches. Named sizes: 360p, 480p, 720p, 1080p, 1440p, 2160p.
Result<std::vector<ImageTier>> parse_image_tiers(const std::string& text, const VisionGraph& g);

struct VisionPlanOptions {
  int threads = 0;                      // 0: the machine's default
  uint64_t kernel_workspace_bytes = 0;  // the backend's fixed kernel scratch (as CompileOptions)
  uint64_t language_resident_bytes = 0; // re-uploaded after the phase (priced, not placed)
};

struct VisionPlan {
  uint64_t budget_bytes = 0;
  ImageTier tier;
  std::string strategy;              // "resident", "gpu-only", "static", "search", "cpu-only"
  std::vector<Placement> placements; // one per VisionGraph::sublayers
  std::vector<int32_t> stream_order; // streamed sub-layers in copy order
  int32_t stream_slot_count = 0;
  uint64_t stream_slot_bytes = 0;
  int64_t attention_tile = 0; // keys (and queries) per tile; 0: no GPU attention
  uint64_t resident_bytes = 0, activation_bytes = 0, workspace_bytes = 0;
  uint64_t arena_bytes = 0; // the phase's peak VRAM, ≤ budget_bytes
  double predicted_ms = 0;  // one image of tier.patches
  double cpu_busy_ms = 0, gpu_busy_ms = 0, copy_busy_ms = 0;
  double language_reload_ms = 0; // re-uploading the language resident set afterwards
};

// The smallest arena a GPU vision plan fits (one streaming slot of the largest sub-layer,
// activations, the smallest tile's scratch, kernel workspace), and the baseline's.
uint64_t vision_minimum_budget(const VisionGraph& g, int64_t patches,
                               uint64_t kernel_workspace_bytes);
uint64_t vision_baseline_budget(const VisionGraph& g, int64_t patches,
                                uint64_t kernel_workspace_bytes);

// Minimum budgets of a whole VLM request (an image of `patches`, then the language model).
struct VlmMinimum {
  uint64_t language = 0, vision = 0, vision_baseline = 0;
  uint64_t vlmopt() const { return std::max(language, vision); }
  uint64_t baseline() const { return language + vision_baseline; }
};
VlmMinimum vlm_minimum(const VisionGraph& g, int64_t patches, uint64_t language_minimum,
                       uint64_t kernel_workspace_bytes);

// The fastest vision plan within `budget` (a CPU-only plan when no GPU plan fits, or the
// machine has no GPU).
VisionPlan plan_vision(const VisionGraph& g, const MachineModel& machine, uint64_t budget,
                       const ImageTier& tier, const VisionPlanOptions& options);

// The baseline's plan: every sub-layer resident, untiled attention, in its own budget.
VisionPlan plan_vision_baseline(const VisionGraph& g, const MachineModel& machine,
                                const ImageTier& tier, const VisionPlanOptions& options);

// The vision phase of an artifact: a plan per (budget, tier), budget-major, over the
// language grid's budgets (budget 0 gets CPU-only plans). Each budget's reload is priced
// with its decode plan's resident weights (the grid's first tier at the full context).
struct VisionPhasePlans {
  const VisionGraph* graph = nullptr;
  std::vector<uint64_t> budgets;
  std::vector<ImageTier> tiers;
  std::vector<VisionPlan> plans; // [budget index * tiers.size() + tier index]
  const VisionPlan& at(size_t budget, size_t tier) const {
    return plans[budget * tiers.size() + tier];
  }
};
VisionPhasePlans plan_vision_phase(const VisionGraph& g, const MachineModel& machine,
                                   const PlanGrid& grid, const std::vector<ImageTier>& tiers);
// Every plan within its budget and one placement per sub-layer; the grid's shape.
Status validate_vision_phase(const VisionPhasePlans& phase);

// Table 8 of the paper as markdown, a row per tier: minimum VRAM without VLMOpt (with
// the baseline's predicted vision ms) and with it, and the predicted vision-phase ms with
// VLMOpt at each budget, marked "(cpu)" where no GPU vision plan fits, "(baseline OOM)"
// where the baseline does not fit, and "OOM" below the language model's minimum.
std::string vision_table(const VisionGraph& g, const MachineModel& machine,
                         const std::vector<ImageTier>& tiers, const std::vector<uint64_t>& budgets,
                         uint64_t language_minimum, const VisionPlanOptions& options);

} // namespace pshard::planner
