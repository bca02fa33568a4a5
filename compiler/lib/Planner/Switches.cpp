// The switches between the laid-out plans of one budget, as the runtime will make them:
// a buffer the next plan holds at the same offset with the same size stays in place;
// every other weight it holds is uploaded, every KV cache it holds that the arena does
// not is filled from the host, and every KV cache the previous plan held and the next one
// does not keep goes back to the host (a recurrent layer's: its whole state, priced as
// fixed bytes). Every ordered pair of the budget's plans that
// moves anything is listed: a tier switch inside a context range is priced at the
// positions the workload has cached when it leaves the tier; a move to a longer range
// (the context crossed a range's end, perhaps with a tier change) at that range's end;
// a move to a shorter one (after a reset) with nothing cached.
#include "PlannerInternal.h"

#include <algorithm>
#include <map>
#include <tuple>

namespace pshard::planner::detail {
namespace {

using Key = std::pair<int32_t, int32_t>; // (sub-layer, tensor; -1 for the KV cache)
constexpr int32_t kExpertKey = 1 << 20;  // + expert id: a resident expert's buffer
using Buffers = std::map<Key, std::pair<uint64_t, uint64_t>>; // -> (offset, size)

// A resident expert's buffer counts the bytes the runtime uploads into it: the
// expert's slices, not the alignment between them.
Buffers resident_buffers(const ModelGraph& graph, const Plan& p) {
  Buffers out;
  for (const VramBuffer& b : p.vram_layout)
    if (b.kind == BufferKind::kWeights || b.kind == BufferKind::kKvCache)
      out[{b.sublayer, b.kind == BufferKind::kWeights ? b.tensor : -1}] = {b.offset, b.size};
    else if (b.kind == BufferKind::kExpert) // weights too, keyed past any tensor index
      out[{b.sublayer, kExpertKey + b.tensor}] = {
          b.offset, graph.sublayers[static_cast<size_t>(b.sublayer)].expert_bytes};
  return out;
}

// What `wanted` holds that `held` does not hold in place (same offset and size): weight
// bytes, KV bytes per cached position (all caches', and the rings' among them), and the
// recurrent layers' states.
struct NotInPlace {
  uint64_t weights = 0, kv = 0, kv_ring = 0, state = 0;
};

NotInPlace not_in_place(const ModelGraph& graph, const CompileOptions& options, const Buffers& held,
                        const Buffers& wanted) {
  const int64_t ring = kv_ring_positions(graph, options);
  NotInPlace out;
  for (const auto& [key, where] : wanted) {
    const auto it = held.find(key);
    if (it != held.end() && it->second == where)
      continue;
    if (key.second >= 0) {
      out.weights += where.second;
      continue;
    }
    const SubLayerInfo& s = graph.sublayers[static_cast<size_t>(key.first)];
    const uint64_t kv = s.kv_bytes_per_token(options.kv_type);
    out.kv += kv;
    if (s.kv_is_ring(ring))
      out.kv_ring += kv;
    out.state += s.state_bytes(options.kv_type);
  }
  return out;
}

PlanSwitch switch_of(const ModelGraph& graph, const CompileOptions& options, const Plan& from,
                     const Plan& to) {
  PlanSwitch s;
  s.from_context = from.context;
  s.from_tier = from.tier;
  s.to_context = to.context;
  s.to_tier = to.tier;
  const Buffers held = resident_buffers(graph, from), next = resident_buffers(graph, to);
  const NotInPlace up = not_in_place(graph, options, held, next);
  const NotInPlace down = not_in_place(graph, options, next, held);
  s.upload_bytes = up.weights;
  s.kv_upload_bytes_per_position = up.kv;
  s.kv_ring_upload_bytes_per_position = up.kv_ring;
  s.evict_bytes = down.weights;
  s.kv_download_bytes_per_position = down.kv;
  s.kv_ring_download_bytes_per_position = down.kv_ring;
  s.state_upload_bytes = up.state;
  s.state_download_bytes = down.state;
  return s;
}

bool moves_anything(const PlanSwitch& s) {
  return s.upload_bytes + s.evict_bytes + s.kv_upload_bytes_per_position +
             s.kv_download_bytes_per_position + s.state_upload_bytes + s.state_download_bytes >
         0;
}

void price(PlanSwitch* s, int64_t positions, int64_t ring, int64_t slots, const LinkPricing& link) {
  s->priced_positions = positions;
  const SwitchBytes moved{s->upload_bytes,
                          s->kv_upload_bytes_per_position,
                          s->kv_download_bytes_per_position,
                          s->kv_ring_upload_bytes_per_position,
                          s->kv_ring_download_bytes_per_position,
                          ring,
                          s->state_upload_bytes,
                          s->state_download_bytes,
                          slots};
  s->predicted_ms = moved.seconds(positions, link) * 1e3;
}

} // namespace

std::vector<PlanSwitch> switches_between(const ModelGraph& graph,
                                         const std::vector<ContextCosts>& ccs,
                                         const std::vector<std::vector<Plan>>& plans,
                                         const LinkPricing& link) {
  // Per range, the positions cached when the workload leaves each tier: after the
  // prompt, or (decode, and tiers the workload does not run) the whole request.
  std::vector<std::vector<int64_t>> leaving;
  for (size_t k = 0; k < plans.size(); ++k) {
    const std::vector<WorkloadStep> steps = workload_steps(ccs[k].options, ccs[k].context);
    leaving.emplace_back(plans[k].size(), steps.empty() ? 0 : steps.back().positions_after);
    for (const WorkloadStep& s : steps)
      leaving.back()[s.tier] = s.positions_after;
  }
  std::vector<PlanSwitch> out;
  for (size_t ka = 0; ka < plans.size(); ++ka)
    for (size_t a = 0; a < plans[ka].size(); ++a)
      for (size_t kb = 0; kb < plans.size(); ++kb)
        for (size_t b = 0; b < plans[kb].size(); ++b) {
          if (ka == kb && a == b)
            continue;
          PlanSwitch s = switch_of(graph, ccs[ka].options, plans[ka][a], plans[kb][b]);
          if (!moves_anything(s))
            continue;
          const int64_t cached = ka == kb ? leaving[ka][a] : kb > ka ? ccs[ka].context : 0;
          price(&s, cached, kv_ring_positions(graph, ccs[ka].options),
                std::max<int64_t>(ccs[ka].options.parallel, 1), link);
          out.push_back(s);
        }
  return out;
}

Result<std::vector<std::vector<Plan>>>
cpu_only_plans(const ModelGraph& graph, const std::vector<ContextCosts>& ccs, int threads) {
  std::vector<std::vector<Plan>> out;
  for (const ContextCosts& cc : ccs) {
    const BudgetChoice c = cpu_only_choice(graph, cc);
    std::vector<Plan> row;
    for (size_t t = 0; t < cc.tiers.size(); ++t) {
      ResidentOffsets none = compact_offsets(graph, cc.options, c.sets[0], {});
      PSHARD_ASSIGN_OR_RETURN(
          Plan p, finalize_plan(graph, cc, t, threads, 0, c.sets[0], none, c.plan_of_tier[t]));
      row.push_back(std::move(p));
    }
    out.push_back(std::move(row));
  }
  return out;
}

} // namespace pshard::planner::detail
