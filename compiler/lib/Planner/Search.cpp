// Local search beyond the fixed strategies (step 4): flip one non-resident sub-layer
// between the CPU and GPU streaming, keep the flip when the simulated pass gets faster
// and the slots still fit. First-improvement hill climbing, a few passes: each move costs
// one O(n) simulation, so a 94-layer MoE (190 sub-layers) is a few tens of thousands of
// steps. Searching every (resident set, tier) pair of a budget would cost tens of
// searches per tier, so only a shortlist of the pairs select_plans is likely to keep is
// searched; the others compete with their best fixed strategy.
#include "PlannerInternal.h"

#include <algorithm>
#include <numeric>
#include <set>

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

std::vector<SetTier> search_shortlist(const CompileOptions& options, uint64_t budget,
                                      const std::vector<std::vector<double>>& best_fixed_seconds) {
  if (options.strategy != Strategy::kAuto || budget == 0 || best_fixed_seconds.empty())
    return {};
  const size_t n_sets = best_fixed_seconds.size(), n_tiers = best_fixed_seconds[0].size();
  // The sets ordered by their best fixed time at tier t (stable: earlier sets win ties).
  auto ranked = [&](size_t t) {
    std::vector<size_t> order(n_sets);
    std::iota(order.begin(), order.end(), size_t{0});
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
      return best_fixed_seconds[a][t] < best_fixed_seconds[b][t];
    });
    return order;
  };
  std::set<SetTier> pairs;
  auto add = [&](size_t set, size_t tier) {
    if (best_fixed_seconds[set][tier] < std::numeric_limits<double>::infinity())
      pairs.insert({set, tier});
  };
  constexpr size_t kPerTier = 2;
  for (size_t t = 0; t < n_tiers; ++t) {
    const std::vector<size_t> order = ranked(t);
    for (size_t k = 0; k < std::min(kPerTier, order.size()); ++k)
      add(order[k], t);
  }
  for (size_t anchor : {size_t{0}, n_tiers - 1}) { // decode's and prefill's favourite sets
    const size_t set = ranked(anchor).front();
    for (size_t t = 0; t < n_tiers; ++t)
      add(set, t);
  }
  return {pairs.begin(), pairs.end()};
}

std::optional<Candidate> search_pair(const ModelGraph& graph, const TierCosts& tc, uint64_t budget,
                                     const ResidentSet& rs, const std::vector<Candidate>& starts) {
  std::vector<SubLayerKind> kinds;
  for (const SubLayerInfo& s : graph.sublayers)
    kinds.push_back(s.kind);
  double best = std::numeric_limits<double>::infinity();
  for (const Candidate& c : starts)
    best = std::min(best, c.seconds);
  Candidate found = search_from_starts(tc, budget, rs, kinds, starts);
  if (!(found.seconds < best)) // no flip helped: the fixed strategies stand
    return std::nullopt;
  found.strategy = Strategy::kSearch;
  return found;
}

} // namespace pshard::planner::detail
