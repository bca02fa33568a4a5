// Expert-level MoE placement: a MoE block's router, norms and shared expert stay one unit
// (streamed like any sub-layer), while its routed experts are placed one by one. By heat
// (the routing profile, uniform without one) the hottest are resident in the VRAM the
// plan leaves over, and the others split between copies on demand (only the experts a
// pass routes to cross PCIe) and the CPU, which runs its experts at the same time as the
// device runs the resident and copied ones. With PCIe slower than CPU memory neither
// side alone is fast; both at once divide a pass's cold experts between two bandwidths.
//
// The choice per candidate: for each slot shape (the unit only, or the unit plus a
// pass's worst case of routed experts), slot count and fraction of the VRAM left (past
// the balance of device and CPU more resident experts make a pass slower), it is filled
// with hot experts greedily by expected experts saved per byte (ties to the layer with fewer, so
// uniform routing spreads them evenly), then each layer takes the number of copied
// experts that makes its own pass shortest; the event simulation decides among them and
// against the whole-block candidate.
#include "PlannerInternal.h"

#include <algorithm>
#include <cmath>

namespace pshard::planner::detail {
namespace {

constexpr int kRoomFractions = 6; // the room for resident experts, 1/1 down to 1/32

bool splittable(const ModelGraph& graph, const ResidentSet& rs, size_t i) {
  const SubLayerInfo& s = graph.sublayers[i];
  return s.kind == SubLayerKind::kMoe && s.n_expert > 0 && !rs.resident[i] &&
         resident_expert_bytes(s) > 0;
}

// split_cost given the expected routed experts at and past the first copied rank
// (`cold`) and past the copied ones (`on_cpu`), and the bytes the whole block reads.
SubLayerCost cost_from(const SubLayerCost& whole, const SubLayerInfo& s, const SubLayerCosts& costs,
                       int64_t copied, double cold, double on_cpu, double read) {
  SubLayerCost c = whole;
  const double eb = static_cast<double>(s.expert_bytes);
  const int64_t worst = std::max<int64_t>(costs.tier, 1) * s.n_expert_used;
  const double per_byte =
      whole.stream_bytes > 0 ? whole.copy_s / static_cast<double>(whole.stream_bytes) : 0;
  const double per_byte_loaded =
      whole.stream_bytes > 0 ? whole.copy_loaded_s / static_cast<double>(whole.stream_bytes) : 0;
  // No more copied experts than one token routes to: all are copied ahead, without
  // waiting for the router (the runtime does the same); else only the routed ones.
  c.copy_needs_input = copied > s.n_expert_used;
  const double copied_bytes =
      c.copy_needs_input ? (cold - on_cpu) * eb : static_cast<double>(copied) * eb;
  c.stream_bytes = static_cast<uint64_t>(static_cast<double>(s.shared_bytes) + copied_bytes);
  c.slot_bytes = s.shared_bytes + static_cast<uint64_t>(std::min(copied, worst)) * s.expert_bytes;
  c.copy_s = quantize_ns(static_cast<double>(c.stream_bytes) * per_byte);
  c.copy_loaded_s = quantize_ns(static_cast<double>(c.stream_bytes) * per_byte_loaded);
  // The CPU's experts run beside the device from the block's input on, at the idle rate
  // but slowed while copies run (the simulation knows when they do); the sub-layer ends
  // when both sides have.
  if (on_cpu > 0 && read > 0) {
    const double share = on_cpu * eb / read;
    const double idle = whole.cpu_s * share, loaded = std::max(whole.cpu_loaded_s * share, idle);
    c.cpu_side_slowdown = idle > 0 ? loaded / idle : 1;
    c.cpu_side_s = quantize_ns(idle + costs.d2h_hidden_s + costs.h2d_hidden_s);
  }
  // The device reads the unit and its own experts only (decode is bound by those bytes).
  // With grouped kernels the device's experts are still one launch per kernel whatever
  // their number (gpu_fixed_s); only the bytes part shrinks with the device's share.
  const double device_share = read > 0 ? std::clamp((read - on_cpu * eb) / read, 0.0, 1.0) : 1;
  c.gpu_s = quantize_ns(whole.gpu_fixed_s + (whole.gpu_s - whole.gpu_fixed_s) * device_share);
  c.gpu_graph_saving_s = 0; // a split layer streams: its pass is never one CUDA graph
  return c;
}

// How long the pass of one split layer takes from its input on (what a layer's split is
// chosen by), as if its own copy ran from the input on: the device after that copy when
// it waits for the router, the CPU slowed while it runs. (A copy that runs ahead mostly
// overlaps the CPU side of the block before instead; the simulation decides.)
double local_seconds(const SubLayerCost& c) {
  const double device_start = c.copy_needs_input ? c.copy_loaded_s : 0;
  const SideBySide both =
      side_by_side(device_start, c.gpu_s, 0, c.cpu_side_s, c.gpu_side_beside, c.cpu_side_beside);
  const double device = device_start + both.device_s;
  double cpu = both.cpu_s;
  if (cpu > 0) {
    const double during_copy = c.copy_loaded_s / c.cpu_side_slowdown; // work done meanwhile
    cpu = cpu <= during_copy ? cpu * c.cpu_side_slowdown : c.copy_loaded_s + (cpu - during_copy);
  }
  return std::max({device, cpu, c.copy_needs_input ? 0.0 : c.copy_loaded_s});
}

// The hot experts and each layer's copied count for `room` bytes of resident experts;
// `copies` false: the slot holds the unit only, so nothing is copied.
ExpertSplit choose_split(const ModelGraph& graph, const TierCosts& tc,
                         const std::vector<size_t>& layers,
                         const std::vector<std::vector<double>>& tail, uint64_t room, bool copies) {
  const size_t n = graph.sublayers.size();
  ExpertSplit split;
  split.level.assign(n, false);
  split.hot.assign(n, 0);
  split.copied.assign(n, 0);
  split.costs = tc.costs.sublayers;
  for (;;) {
    size_t best = n;
    double best_gain = 0;
    for (size_t i : layers) {
      const SubLayerInfo& s = graph.sublayers[i];
      const auto h = static_cast<size_t>(split.hot[i]);
      const uint64_t cost = resident_expert_bytes(s);
      if (split.hot[i] >= s.n_expert || split.bytes + cost > room)
        continue;
      const double gain = (tail[i][h] - tail[i][h + 1]) * static_cast<double>(s.expert_bytes) /
                          static_cast<double>(cost);
      if (gain > best_gain ||
          (gain == best_gain && best < n && gain > 0 && split.hot[i] < split.hot[best])) {
        best_gain = gain;
        best = i;
      }
    }
    if (best == n)
      break;
    ++split.hot[best];
    split.bytes += resident_expert_bytes(graph.sublayers[best]);
  }
  for (size_t i : layers) {
    const SubLayerInfo& s = graph.sublayers[i];
    const SubLayerCost& whole = tc.costs.sublayers[i];
    const auto h = static_cast<size_t>(split.hot[i]);
    const int64_t rest = s.n_expert - split.hot[i];
    const double read = s.weight_bytes_read(tc.tier);
    int64_t best_copied = 0;
    SubLayerCost best = cost_from(whole, s, tc.costs, 0, tail[i][h], tail[i][h], read);
    for (int64_t c = 1; copies && c <= rest; ++c) {
      const SubLayerCost cand =
          cost_from(whole, s, tc.costs, c, tail[i][h], tail[i][h + static_cast<size_t>(c)], read);
      if (local_seconds(cand) < local_seconds(best)) {
        best = cand;
        best_copied = c;
      }
    }
    split.level[i] = true;
    split.copied[i] = best_copied;
    split.costs[i] = best;
  }
  return split;
}

} // namespace

uint64_t resident_expert_bytes(const SubLayerInfo& s) { return hot_expert_bytes(s); }

SubLayerCost split_cost(const SubLayerCost& whole, const SubLayerInfo& s,
                        const SubLayerCosts& costs, int64_t hot, int64_t copied) {
  hot = std::clamp<int64_t>(hot, 0, s.n_expert);
  copied = std::clamp<int64_t>(copied, 0, s.n_expert - hot);
  return cost_from(whole, s, costs, copied, s.expected_streamed_experts(costs.tier, hot),
                   s.expected_streamed_experts(costs.tier, hot + copied),
                   s.weight_bytes_read(costs.tier));
}

SubLayerCosts split_costs(const ModelGraph& graph, const SubLayerCosts& costs,
                          const ExpertSplit& split) {
  SubLayerCosts out = costs;
  for (size_t i = 0; i < out.sublayers.size() && !split.empty(); ++i)
    if (split.at(i))
      out.sublayers[i] =
          split_cost(costs.sublayers[i], graph.sublayers[i], costs, split.hot[i], split.copied[i]);
  return out;
}

ExpertSplit make_split(const ModelGraph& graph, const TierCosts& tc, std::vector<bool> level,
                       std::vector<int64_t> hot, std::vector<int64_t> copied) {
  ExpertSplit split;
  if (level.empty())
    return split;
  split.level = std::move(level);
  split.hot = std::move(hot);
  split.copied = std::move(copied);
  for (size_t i = 0; i < split.level.size(); ++i)
    if (split.level[i])
      split.bytes +=
          static_cast<uint64_t>(split.hot[i]) * resident_expert_bytes(graph.sublayers[i]);
  split.costs = split_costs(graph, tc.costs, split).sublayers;
  return split;
}

SubLayerCosts candidate_costs(const TierCosts& tc, const Candidate& c) {
  SubLayerCosts costs = tc.costs;
  if (!c.experts.empty())
    for (size_t i = 0; i < costs.sublayers.size(); ++i)
      if (c.experts.level[i])
        costs.sublayers[i] = c.experts.costs[i];
  return costs;
}

void place_resident_experts(const ModelGraph& graph, const TierCosts& tc, const Candidate& c,
                            Plan* plan, uint64_t* offset) {
  for (size_t i = 0; i < c.experts.level.size(); ++i) {
    if (!c.experts.level[i])
      continue;
    const SubLayerInfo& s = graph.sublayers[i];
    const std::vector<int32_t> heat = s.experts_by_heat();
    PlanExperts e;
    e.sublayer = static_cast<int32_t>(i);
    const auto hot = static_cast<size_t>(c.experts.hot[i]);
    const auto copied = static_cast<size_t>(c.experts.copied[i]);
    e.resident.assign(heat.begin(), heat.begin() + static_cast<std::ptrdiff_t>(hot));
    e.copied.assign(heat.begin() + static_cast<std::ptrdiff_t>(hot),
                    heat.begin() + static_cast<std::ptrdiff_t>(hot + copied));
    std::sort(e.resident.begin(), e.resident.end());
    std::sort(e.copied.begin(), e.copied.end());
    const uint64_t each = resident_expert_bytes(s);
    for (int32_t id : e.resident) {
      plan->vram_layout.push_back({BufferKind::kExpert, e.sublayer, id, *offset, each});
      *offset += each;
    }
    e.resident_bytes = each * hot;
    e.expected_copy_bytes = c.experts.costs[i].stream_bytes;
    e.expected_cpu_experts =
        s.expected_streamed_experts(tc.tier, static_cast<int64_t>(hot + copied));
    plan->experts.push_back(std::move(e));
  }
}

Candidate expert_level(const ModelGraph& graph, const TierCosts& tc, uint64_t budget,
                       const ResidentSet& rs, const Candidate& base) {
  const size_t n = graph.sublayers.size();
  std::vector<size_t> layers;
  for (size_t i = 0; i < n; ++i)
    if (splittable(graph, rs, i))
      layers.push_back(i);
  const uint64_t used = rs.bytes + tc.gpu_fixed_bytes;
  if (!base.feasible() || budget == 0 || layers.empty() || used > budget ||
      tc.costs.h2d_hidden_s <= 0)
    return base;
  std::vector<std::vector<double>> tail(n);
  std::vector<Placement> placements = base.placements;
  uint64_t unit = 0, with_copies = 0, others = 0;
  for (size_t i : layers) {
    const SubLayerInfo& s = graph.sublayers[i];
    tail[i] = s.streamed_experts_by_rank(tc.tier);
    placements[i] = Placement::kGpuStreamed;
    unit = std::max(unit, align_up(s.shared_bytes));
    const int64_t worst = std::min(s.n_expert, std::max<int64_t>(tc.tier, 1) * s.n_expert_used);
    with_copies = std::max(
        with_copies, align_up(s.shared_bytes + static_cast<uint64_t>(worst) * s.expert_bytes));
  }
  for (size_t i = 0; i < n; ++i)
    if (placements[i] == Placement::kGpuStreamed && !splittable(graph, rs, i))
      others = std::max(others, align_up(tc.costs.sublayers[i].slot_bytes));
  Candidate best = base;
  for (const bool copies : {false, true}) {
    const uint64_t slot = std::max({others, unit, copies ? with_copies : 0});
    for (int slots = 1; slots <= kMaxSlots; ++slots) {
      if (used + static_cast<uint64_t>(slots) * slot > budget)
        break;
      // More resident experts are not always faster: once the device's share of a pass
      // outweighs the CPU's, the device is the slower side. Try fractions of the room.
      const uint64_t room = budget - used - static_cast<uint64_t>(slots) * slot;
      for (int halvings = 0; halvings < kRoomFractions; ++halvings) {
        Candidate c;
        c.strategy = base.strategy;
        c.placements = placements;
        c.experts = choose_split(graph, tc, layers, tail, room >> halvings, copies);
        c.seconds = simulate_seconds(candidate_costs(tc, c), placements, slots, slots);
        if (c.seconds < best.seconds) {
          c.slots = slots;
          for (size_t i = 0; i < n; ++i) // the slot as the split needs it: never above `slot`
            if (placements[i] == Placement::kGpuStreamed)
              c.slot_bytes = std::max(c.slot_bytes, align_up(c.experts.costs[i].slot_bytes));
          best = std::move(c);
        }
      }
    }
  }
  if (best.experts.empty())
    return best;
  // Priced again as the IR path prices what it reads back (make_split), so both compile
  // paths simulate the chosen split with equal numbers.
  Candidate priced = best;
  priced.experts = make_split(graph, tc, best.experts.level, best.experts.hot, best.experts.copied);
  priced.seconds =
      simulate_seconds(candidate_costs(tc, priced), priced.placements, priced.slots, priced.slots);
  return priced.seconds < base.seconds ? priced : base;
}

} // namespace pshard::planner::detail
