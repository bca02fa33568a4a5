// The vision phase's plans: for one (budget, image tier), candidate placements of the
// vision sub-layers — every one resident if it all fits, else a resident prefix filled
// greedily beside 1 or 2 streaming slots with the rest streamed (GPU-only), on the CPU
// (Static), or flipped one at a time between the two (search) — timed by the event
// simulation; the fastest wins. The attention tile is the largest power of two (from
// kAttentionTile up to the image's patches, at most kMaxTile) whose scratch takes at
// most an eighth of what the activations leave of the budget (and leaves a slot beside
// it): a big budget buys fewer, larger tiles; a small one keeps the scratch at the
// smallest tile's O(tile²).
#include "pshard/Planner/VisionPlanner.h"

#include "VisionInternal.h"

#include <algorithm>

namespace pshard::planner {
namespace {

constexpr int64_t kMaxTile = 4096;

uint64_t align(uint64_t bytes) {
  return (bytes + kVramAlignment - 1) / kVramAlignment * kVramAlignment;
}

uint64_t largest_sublayer(const VisionGraph& g) {
  uint64_t most = 0;
  for (const VisionSubLayerInfo& s : g.sublayers)
    most = std::max(most, s.weight_bytes);
  return most;
}

// `keep`: what must stay beside the scratch (one streaming slot, the kernel workspace).
int64_t choose_tile(const VisionGraph& g, uint64_t budget, int64_t patches, uint64_t keep) {
  const uint64_t act = align(g.activation_bytes(patches));
  const uint64_t left = budget > act ? budget - act : 0;
  int64_t tile = kAttentionTile;
  while (tile * 2 <= std::min(patches, kMaxTile)) {
    const uint64_t scratch = g.attention_scratch_bytes(patches, tile * 2);
    if (scratch > left / 8 || scratch + keep > left)
      break;
    tile *= 2;
  }
  return tile;
}

struct Candidate {
  std::string strategy;
  std::vector<Placement> placements;
  int slots = 0;
};

// The slot holds the largest streamed sub-layer.
uint64_t slot_bytes_of(const VisionGraph& g, const std::vector<Placement>& p) {
  uint64_t most = 0;
  for (size_t i = 0; i < p.size(); ++i)
    if (p[i] == Placement::kGpuStreamed)
      most = std::max(most, g.sublayers[i].weight_bytes);
  return align(most);
}

uint64_t resident_bytes_of(const VisionGraph& g, const std::vector<Placement>& p) {
  uint64_t sum = 0;
  for (size_t i = 0; i < p.size(); ++i)
    if (p[i] == Placement::kGpuResident)
      for (const TensorRef& t : g.sublayers[i].tensors)
        sum += align(t.bytes);
  return sum;
}

VisionPlan finish(const VisionGraph& g, const MachineModel& machine, const SubLayerCosts& costs,
                  uint64_t budget, const ImageTier& tier, int64_t tile, uint64_t workspace,
                  const Candidate& c, const VisionPlanOptions& options) {
  VisionPlan p;
  p.budget_bytes = budget;
  p.tier = tier;
  p.strategy = c.strategy;
  p.placements = c.placements;
  for (size_t i = 0; i < c.placements.size(); ++i)
    if (c.placements[i] == Placement::kGpuStreamed)
      p.stream_order.push_back(static_cast<int32_t>(i));
  const bool any_gpu = std::any_of(c.placements.begin(), c.placements.end(), on_gpu);
  p.stream_slot_count = p.stream_order.empty() ? 0 : c.slots;
  p.stream_slot_bytes = p.stream_order.empty() ? 0 : slot_bytes_of(g, c.placements);
  p.attention_tile = any_gpu ? tile : 0;
  p.resident_bytes = resident_bytes_of(g, c.placements);
  p.activation_bytes = any_gpu ? align(g.activation_bytes(tier.patches)) : 0;
  p.workspace_bytes = any_gpu ? workspace : 0;
  p.arena_bytes = p.resident_bytes +
                  p.stream_slot_bytes * static_cast<uint64_t>(p.stream_slot_count) +
                  p.activation_bytes + p.workspace_bytes;
  Plan sim;
  sim.placements = c.placements;
  sim.stream_order = p.stream_order;
  sim.stream_slot_count = p.stream_slot_count;
  sim.prefetch_depth = p.stream_slot_count;
  const SimResult r = simulate(costs, sim);
  p.predicted_ms = r.seconds * 1e3;
  p.cpu_busy_ms = r.cpu_busy_s * 1e3;
  p.gpu_busy_ms = r.gpu_busy_s * 1e3;
  p.copy_busy_ms = r.copy_busy_s * 1e3;
  if (any_gpu && options.language_resident_bytes > 0)
    p.language_reload_ms = machine.h2d_seconds(options.language_resident_bytes, Load::kIdle) * 1e3;
  return p;
}

double time_of(const SubLayerCosts& costs, const Candidate& c) {
  return simulate_seconds(costs, c.placements, c.slots, c.slots);
}

// The resident prefix, in graph order, that fits `room` bytes.
std::vector<Placement> resident_prefix(const VisionGraph& g, uint64_t room, Placement rest) {
  std::vector<Placement> p(g.sublayers.size(), rest);
  uint64_t used = 0;
  for (size_t i = 0; i < p.size(); ++i) {
    uint64_t need = 0;
    for (const TensorRef& t : g.sublayers[i].tensors)
      need += align(t.bytes);
    if (used + need > room)
      break;
    used += need;
    p[i] = Placement::kGpuResident;
  }
  return p;
}

// One pass of single flips cpu <-> gpu_streamed over the non-resident sub-layers, kept
// where the simulation says faster.
Candidate local_search(const SubLayerCosts& costs, Candidate c) {
  c.strategy = "search";
  double best = time_of(costs, c);
  for (size_t i = 0; i < c.placements.size(); ++i) {
    if (c.placements[i] == Placement::kGpuResident)
      continue;
    const Placement was = c.placements[i];
    c.placements[i] = was == Placement::kCpu ? Placement::kGpuStreamed : Placement::kCpu;
    const double t = time_of(costs, c);
    if (t < best)
      best = t;
    else
      c.placements[i] = was;
  }
  return c;
}

} // namespace

uint64_t vision_minimum_budget(const VisionGraph& g, int64_t patches,
                               uint64_t kernel_workspace_bytes) {
  return align(largest_sublayer(g)) + align(g.activation_bytes(patches)) +
         align(g.attention_scratch_bytes(patches, kAttentionTile) + kernel_workspace_bytes);
}

uint64_t vision_baseline_budget(const VisionGraph& g, int64_t patches,
                                uint64_t kernel_workspace_bytes) {
  std::vector<Placement> all(g.sublayers.size(), Placement::kGpuResident);
  return resident_bytes_of(g, all) + align(g.activation_bytes(patches)) +
         align(g.attention_scratch_bytes(patches, 0) + kernel_workspace_bytes);
}

VlmMinimum vlm_minimum(const VisionGraph& g, int64_t patches, uint64_t language_minimum,
                       uint64_t kernel_workspace_bytes) {
  return {language_minimum, vision_minimum_budget(g, patches, kernel_workspace_bytes),
          vision_baseline_budget(g, patches, kernel_workspace_bytes)};
}

VisionPlan plan_vision(const VisionGraph& g, const MachineModel& machine, uint64_t budget,
                       const ImageTier& tier, const VisionPlanOptions& options) {
  const int threads = options.threads > 0 ? options.threads : machine.default_threads();
  const int64_t n = tier.patches;
  const Candidate cpu_only{"cpu-only", std::vector<Placement>(g.sublayers.size(), Placement::kCpu),
                           0};
  if (!machine.has_gpu() || budget < vision_minimum_budget(g, n, options.kernel_workspace_bytes)) {
    const SubLayerCosts costs = vision_costs(g, machine, n, 0, threads);
    return finish(g, machine, costs, budget, tier, 0, 0, cpu_only, options);
  }
  const int64_t tile = choose_tile(
      g, budget, n, align(largest_sublayer(g)) + options.kernel_workspace_bytes + kVramAlignment);
  const uint64_t workspace =
      align(g.attention_scratch_bytes(n, tile) + options.kernel_workspace_bytes);
  const SubLayerCosts costs = vision_costs(g, machine, n, tile, threads);
  const uint64_t fixed = align(g.activation_bytes(n)) + workspace;
  const uint64_t room = budget - std::min(budget, fixed);
  const uint64_t slot = align(largest_sublayer(g));

  std::vector<Candidate> candidates{cpu_only};
  const std::vector<Placement> all = resident_prefix(g, room, Placement::kCpu);
  if (std::all_of(all.begin(), all.end(), [](Placement p) { return p == Placement::kGpuResident; }))
    candidates.push_back({"resident", all, 0});
  for (int slots = 1; slots <= 2; ++slots) {
    if (room < slot * static_cast<uint64_t>(slots))
      break;
    const uint64_t left = room - slot * static_cast<uint64_t>(slots);
    for (const uint64_t prefix_room : {left, uint64_t{0}}) {
      Candidate streamed{"gpu-only", resident_prefix(g, prefix_room, Placement::kGpuStreamed),
                         slots};
      Candidate on_cpu{"static", resident_prefix(g, prefix_room, Placement::kCpu), slots};
      candidates.push_back(local_search(costs, streamed));
      candidates.push_back(streamed);
      if (prefix_room > 0)
        candidates.push_back(on_cpu);
    }
  }
  const Candidate* best = &candidates.front();
  double best_s = time_of(costs, *best);
  for (const Candidate& c : candidates) {
    const double t = time_of(costs, c);
    if (t < best_s) {
      best = &c;
      best_s = t;
    }
  }
  return finish(g, machine, costs, budget, tier, tile, workspace, *best, options);
}

VisionPlan plan_vision_baseline(const VisionGraph& g, const MachineModel& machine,
                                const ImageTier& tier, const VisionPlanOptions& options) {
  const int threads = options.threads > 0 ? options.threads : machine.default_threads();
  const SubLayerCosts costs = vision_costs(g, machine, tier.patches, 0, threads);
  const uint64_t budget = vision_baseline_budget(g, tier.patches, options.kernel_workspace_bytes);
  const uint64_t workspace =
      align(g.attention_scratch_bytes(tier.patches, 0) + options.kernel_workspace_bytes);
  const Candidate all{"resident",
                      std::vector<Placement>(g.sublayers.size(), Placement::kGpuResident), 0};
  return finish(g, machine, costs, budget, tier, tier.patches, workspace, all, options);
}

VisionPhasePlans plan_vision_phase(const VisionGraph& g, const MachineModel& machine,
                                   const PlanGrid& grid, const std::vector<ImageTier>& tiers) {
  VisionPhasePlans phase{&g, grid.budgets, tiers, {}};
  VisionPlanOptions options;
  options.threads = grid.options.threads;
  options.kernel_workspace_bytes = grid.options.kernel_workspace_bytes.value_or(0);
  for (size_t b = 0; b < grid.budgets.size(); ++b) {
    options.language_resident_bytes = 0;
    for (const VramBuffer& buf : grid.at(b, 0).vram_layout)
      if (buf.kind == BufferKind::kWeights)
        options.language_resident_bytes += buf.size;
    for (const ImageTier& t : tiers)
      phase.plans.push_back(plan_vision(g, machine, grid.budgets[b], t, options));
  }
  return phase;
}

Status validate_vision_phase(const VisionPhasePlans& phase) {
  if (!phase.graph || phase.plans.size() != phase.budgets.size() * phase.tiers.size())
    return internal_error("vision phase: expected a plan per budget and image tier");
  for (const VisionPlan& p : phase.plans) {
    if (p.placements.size() != phase.graph->sublayers.size())
      return internal_error("vision plan for " + p.tier.name +
                            ": one placement per sub-layer expected");
    if (p.arena_bytes > p.budget_bytes)
      return internal_error("vision plan for " + p.tier.name + " needs " +
                            std::to_string(p.arena_bytes) + " bytes, over its budget of " +
                            std::to_string(p.budget_bytes));
  }
  return Status::ok_status();
}

} // namespace pshard::planner
