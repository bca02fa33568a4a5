// Local search beyond the fixed strategies: flip one non-resident sub-layer between the
// CPU and GPU streaming, keep the flip when the simulated pass gets faster and the slots
// still fit. First-improvement hill climbing, a few passes: each move costs one O(n)
// simulation, so a 94-layer MoE (190 sub-layers) is a few tens of thousands of steps.
#include "PlannerInternal.h"

#include <algorithm>

namespace pshard::planner::detail {
namespace {

constexpr int kMaxPasses = 3;
constexpr double kMinGain = 1e-9; // seconds; ignore floating-point noise

} // namespace

Candidate local_search(const TierCosts& tc, uint64_t budget, const ResidentSet& rs,
                       const std::vector<SubLayerKind>& kinds, Candidate start) {
  if (!start.feasible())
    return start;
  const size_t n = start.placements.size();
  // Search with a fixed slot count; the best count is chosen again at the end.
  const int slots = std::max(start.slots, 1);
  const int64_t free = static_cast<int64_t>(budget) - static_cast<int64_t>(rs.bytes) -
                       static_cast<int64_t>(tc.gpu_fixed_bytes);
  if (free < 0)
    return start;
  const uint64_t slot_limit = static_cast<uint64_t>(free) / static_cast<uint64_t>(slots);

  std::vector<Placement> current = start.placements;
  double current_s = simulate_seconds(tc.costs, current, slots, slots);
  auto fits = [&](size_t i) { return align_up(tc.costs.sublayers[i].slot_bytes) <= slot_limit; };
  for (int pass = 0; pass < kMaxPasses; ++pass) {
    bool improved = false;
    // Group moves first: one sub-layer alone rarely pays for the two PCIe crossings of
    // the hidden state around it, while all attention blocks together may. Each kind's
    // non-resident sub-layers go to the CPU or to streaming at once.
    for (SubLayerKind kind : {SubLayerKind::kAttention, SubLayerKind::kFfn, SubLayerKind::kMoe,
                              SubLayerKind::kHead, SubLayerKind::kEmbed})
      for (Placement to : {Placement::kGpuStreamed, Placement::kCpu}) {
        std::vector<Placement> trial = current;
        for (size_t i = 0; i < n; ++i)
          if (!rs.resident[i] && kinds[i] == kind && (to == Placement::kCpu || fits(i)))
            trial[i] = to;
        if (trial == current)
          continue;
        const double t = simulate_seconds(tc.costs, trial, slots, slots);
        if (t < current_s - kMinGain) {
          current = std::move(trial);
          current_s = t;
          improved = true;
        }
      }
    for (size_t i = 0; i < n; ++i) {
      if (rs.resident[i])
        continue;
      const Placement before = current[i];
      const Placement after =
          before == Placement::kCpu ? Placement::kGpuStreamed : Placement::kCpu;
      if (after == Placement::kGpuStreamed && !fits(i))
        continue;
      current[i] = after;
      const double t = simulate_seconds(tc.costs, current, slots, slots);
      if (t < current_s - kMinGain) {
        current_s = t;
        improved = true;
      } else {
        current[i] = before;
      }
    }
    if (!improved)
      break;
  }
  Candidate found;
  found.strategy = Strategy::kSearch;
  found.placements = std::move(current);
  finish_candidate(tc, budget, rs, &found);
  // The search only reports a plan it made better; otherwise the fixed strategy stands.
  return found.seconds < start.seconds - kMinGain ? found : start;
}

Candidate search_from_starts(const TierCosts& tc, uint64_t budget, const ResidentSet& rs,
                             const std::vector<SubLayerKind>& kinds,
                             const std::vector<Candidate>& starts) {
  Candidate best;
  for (const Candidate& start : starts)
    if (start.seconds < best.seconds)
      best = start;
  for (const Candidate& start : starts) {
    Candidate found = local_search(tc, budget, rs, kinds, start);
    if (found.seconds < best.seconds)
      best = std::move(found);
  }
  return best;
}

} // namespace pshard::planner::detail
