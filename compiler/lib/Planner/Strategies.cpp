// The reference system's fixed strategies on a given resident set (step 3), and the slot
// choice that turns a placement into a feasible, estimated candidate.
#include "PlannerInternal.h"

#include <algorithm>

namespace pshard::planner::detail {
namespace {

bool any_gpu(const std::vector<Placement>& p) {
  return std::any_of(p.begin(), p.end(), [](Placement q) { return on_gpu(q); });
}

// VRAM left for streaming slots once the resident set and (if the GPU is used at all)
// the activations and workspace are placed; negative when even those do not fit.
int64_t free_for_slots(const TierCosts& tc, uint64_t budget, const ResidentSet& rs, bool gpu_used) {
  return static_cast<int64_t>(budget) - static_cast<int64_t>(rs.bytes) -
         static_cast<int64_t>(gpu_used ? tc.gpu_fixed_bytes : 0);
}

std::vector<Placement> base_placements(const ResidentSet& rs) {
  std::vector<Placement> p(rs.resident.size(), Placement::kCpu);
  for (size_t i = 0; i < p.size(); ++i)
    if (rs.resident[i])
      p[i] = Placement::kGpuResident;
  return p;
}

} // namespace

void finish_candidate(const TierCosts& tc, uint64_t budget, const ResidentSet& rs, Candidate* c) {
  c->seconds = std::numeric_limits<double>::infinity();
  c->slots = 0;
  c->slot_bytes = 0;
  // Resident experts of an expert-level candidate take their VRAM before the slots.
  const int64_t free = free_for_slots(tc, budget, rs, any_gpu(c->placements)) -
                       static_cast<int64_t>(c->experts.bytes);
  if (free < 0)
    return;
  const SubLayerCosts costs = candidate_costs(tc, *c);
  uint64_t slot = 0;
  bool streams = false;
  for (size_t i = 0; i < c->placements.size(); ++i)
    if (c->placements[i] == Placement::kGpuStreamed) {
      streams = true;
      slot = std::max(slot, align_up(costs.sublayers[i].slot_bytes));
    }
  if (!streams) {
    c->seconds = simulate_seconds(costs, c->placements, 0, 0);
    return;
  }
  for (int s = 1; s <= kMaxSlots; ++s) {
    if (static_cast<uint64_t>(s) * slot > static_cast<uint64_t>(free))
      break;
    const double t = simulate_seconds(costs, c->placements, s, s);
    if (t < c->seconds) { // ties keep fewer slots: less VRAM for the same time
      c->seconds = t;
      c->slots = s;
      c->slot_bytes = slot;
    }
  }
}

Candidate build_strategy(Strategy strategy, const TierCosts& tc, uint64_t budget,
                         const ResidentSet& rs) {
  Candidate c;
  c.strategy = strategy;
  c.placements = base_placements(rs);
  const int64_t free_one_slot = free_for_slots(tc, budget, rs, /*gpu_used=*/true);
  auto streamable = [&](size_t i) {
    return free_one_slot >= 0 &&
           align_up(tc.costs.sublayers[i].slot_bytes) <= static_cast<uint64_t>(free_one_slot);
  };
  switch (strategy) {
  case Strategy::kGpuOnly: // everything on the GPU; what no slot can hold stays on the CPU
    for (size_t i = 0; i < c.placements.size(); ++i)
      if (!rs.resident[i] && streamable(i))
        c.placements[i] = Placement::kGpuStreamed;
    break;
  case Strategy::kDynamic: {
    // Stream a sub-layer when its copy, minus the compute already running ahead of it
    // (the "credit" the copy engine can hide behind), plus its GPU time beats running it
    // on the CPU; otherwise the CPU runs it and its time becomes credit for the next copy.
    double credit = 0;
    for (size_t i = 0; i < c.placements.size(); ++i) {
      const SubLayerCost& s = tc.costs.sublayers[i];
      if (rs.resident[i]) {
        credit += s.gpu_s;
        continue;
      }
      const double hidden = s.copy_needs_input ? 0.0 : credit;
      const double streamed = std::max(0.0, s.copy_loaded_s - hidden) + s.gpu_s;
      if (streamable(i) && streamed < s.cpu_loaded_s) {
        c.placements[i] = Placement::kGpuStreamed;
        credit = std::max(0.0, hidden - s.copy_loaded_s) + s.gpu_s;
      } else {
        credit += s.cpu_loaded_s;
      }
    }
    break;
  }
  default: // static and layers: everything not resident runs on the CPU
    break;
  }
  finish_candidate(tc, budget, rs, &c);
  return c;
}

Strategy describe(const Candidate& c) {
  bool streams = false, cpu = false, gpu = false;
  for (Placement p : c.placements) {
    streams = streams || p == Placement::kGpuStreamed;
    cpu = cpu || p == Placement::kCpu;
    gpu = gpu || on_gpu(p);
  }
  if (!gpu)
    return Strategy::kCpuOnly;
  if (!cpu)
    return Strategy::kGpuOnly;
  if (!streams)
    return Strategy::kStatic;
  return c.strategy;
}

Candidate best_fixed(const TierCosts& tc, uint64_t budget, const ResidentSet& rs) {
  Candidate best;
  for (Strategy s : {Strategy::kStatic, Strategy::kDynamic, Strategy::kGpuOnly}) {
    Candidate c = build_strategy(s, tc, budget, rs);
    if (c.seconds < best.seconds)
      best = std::move(c);
  }
  return best;
}

Candidate strategy_candidate(const CompileOptions& o, const TierCosts& tc, uint64_t budget,
                             const ResidentSet& rs) {
  switch (o.strategy) {
  case Strategy::kGpuOnly:
  case Strategy::kStatic:
  case Strategy::kDynamic:
    return build_strategy(o.strategy, tc, budget, rs);
  case Strategy::kLayers: {
    Candidate c = build_strategy(Strategy::kStatic, tc, budget, rs);
    c.strategy = Strategy::kLayers;
    return c;
  }
  default:
    return best_fixed(tc, budget, rs);
  }
}

std::vector<Candidate> fixed_candidates(const CompileOptions& options, const TierCosts& tc,
                                        uint64_t budget, const ResidentSet& rs) {
  std::vector<Candidate> out;
  if (budget == 0) { // the CPU-only fallback: nothing on the device
    Candidate c;
    c.strategy = Strategy::kCpuOnly;
    c.placements.assign(rs.resident.size(), Placement::kCpu);
    finish_candidate(tc, 0, rs, &c);
    out.push_back(std::move(c));
    return out;
  }
  if (options.strategy != Strategy::kAuto) {
    Candidate c = strategy_candidate(options, tc, budget, rs);
    if (c.feasible())
      out.push_back(std::move(c));
    return out;
  }
  for (Strategy s : {Strategy::kStatic, Strategy::kDynamic, Strategy::kGpuOnly}) {
    Candidate c = build_strategy(s, tc, budget, rs);
    if (c.feasible())
      out.push_back(std::move(c));
  }
  return out;
}

} // namespace pshard::planner::detail
