// Which sub-layers stay in VRAM: the candidate resident sets of a budget (step 2).
//
// Priority: attention blocks with their KV cache first (small, touched every pass, and
// the KV cache would otherwise cross PCIe), then the rest by predicted benefit per byte
// at one tier. A set is filled greedily in that order up to the budget minus a reserve,
// for several reserves — none, and room for one or two streaming slots at each tier —
// since the planner cannot know in advance whether a byte is worth more as resident
// weights or as streaming room. Forced strategies share one set over all tiers (chosen
// by the time per token summed over tiers); auto plans every tier on every candidate and
// lets select_plans assign sets to tiers, so each tier's priority order contributes its
// own sets.
#include "PlannerInternal.h"

#include <algorithm>
#include <set>

namespace pshard::planner::detail {

uint64_t resident_bytes_of(const ModelGraph& graph, const CompileOptions& options, size_t i) {
  const SubLayerInfo& s = graph.sublayers[i];
  uint64_t bytes = 0;
  for (const auto& t : s.tensors)
    bytes += align_up(t.bytes);
  if (s.kind == SubLayerKind::kAttention)
    bytes += align_up(kv_buffer_bytes_of(graph, s, options));
  return bytes;
}

ResidentSet make_resident_set(const ModelGraph& graph, const CompileOptions& options,
                              std::vector<bool> resident) {
  ResidentSet rs;
  rs.resident = std::move(resident);
  for (size_t i = 0; i < rs.resident.size(); ++i)
    if (rs.resident[i])
      rs.bytes += resident_bytes_of(graph, options, i);
  return rs;
}

ResidentSet empty_resident_set(const ModelGraph& graph) {
  ResidentSet rs;
  rs.resident.assign(graph.sublayers.size(), false);
  return rs;
}

namespace {

std::vector<size_t> priority_order(const ModelGraph& graph, const CompileOptions& options,
                                   const TierCosts& tier) {
  std::vector<size_t> attention, rest;
  for (size_t i = 0; i < graph.sublayers.size(); ++i)
    (graph.sublayers[i].kind == SubLayerKind::kAttention ? attention : rest).push_back(i);
  auto benefit_per_byte = [&](size_t i) {
    const SubLayerCost& c = tier.costs.sublayers[i];
    const double elsewhere = std::min(c.cpu_s, c.gpu_s + c.copy_s);
    const double bytes = static_cast<double>(std::max<uint64_t>(resident_bytes_of(graph, options, i), 1));
    return std::max(0.0, elsewhere - c.gpu_s) / bytes;
  };
  std::stable_sort(rest.begin(), rest.end(), [&](size_t a, size_t b) {
    return benefit_per_byte(a) > benefit_per_byte(b);
  });
  attention.insert(attention.end(), rest.begin(), rest.end());
  return attention;
}

uint64_t max_fixed(const std::vector<TierCosts>& tiers) {
  uint64_t m = 0;
  for (const auto& tc : tiers)
    m = std::max(m, tc.gpu_fixed_bytes);
  return m;
}

// Time per token summed over tiers: decode (tier 1) weighs most, as it does for users.
double objective(const CompileOptions& o, const std::vector<TierCosts>& tiers, uint64_t budget,
                 const ResidentSet& rs) {
  double total = 0;
  for (const auto& tc : tiers)
    total += strategy_candidate(o, tc, budget, rs).seconds / static_cast<double>(tc.tier);
  return total;
}

} // namespace

std::vector<ResidentSet> resident_candidates(const ModelGraph& graph, const CompileOptions& options,
                                             const std::vector<TierCosts>& tiers, uint64_t budget,
                                             size_t order_tier) {
  const size_t n = graph.sublayers.size();
  const std::vector<size_t> order = priority_order(graph, options, tiers[order_tier]);
  const uint64_t fixed = max_fixed(tiers);

  // Reserves: none, and one or two slots sized for the largest non-attention streamed
  // need at each tier.
  std::set<uint64_t> reserves = {fixed};
  for (const auto& tc : tiers) {
    uint64_t slot = 0;
    for (size_t i = 0; i < n; ++i)
      if (graph.sublayers[i].kind != SubLayerKind::kAttention)
        slot = std::max(slot, align_up(tc.costs.sublayers[i].slot_bytes));
    reserves.insert(fixed + slot);
    reserves.insert(fixed + 2 * slot);
  }
  std::vector<ResidentSet> out;
  std::set<std::vector<bool>> seen;
  for (uint64_t reserve : reserves) {
    if (reserve > budget)
      continue;
    std::vector<bool> resident(n, false);
    uint64_t used = 0;
    for (size_t i : order) {
      const uint64_t b = resident_bytes_of(graph, options, i);
      if (used + b + reserve <= budget) {
        resident[i] = true;
        used += b;
      }
    }
    if (seen.insert(resident).second)
      out.push_back(make_resident_set(graph, options, std::move(resident)));
  }
  if (out.empty()) // nothing fits beside the activations: plan with no resident weights
    out.push_back(empty_resident_set(graph));
  return out;
}

ResidentSet layers_resident_set(const ModelGraph& graph, const CompileOptions& options,
                                const std::vector<TierCosts>& tiers, uint64_t budget) {
  const size_t n = graph.sublayers.size();
  const uint64_t fixed = max_fixed(tiers);
  std::vector<bool> resident(n, false);
  uint64_t used = fixed;
  for (int64_t layer = 0; layer < graph.hparams.n_layer; ++layer) {
    const size_t attn = static_cast<size_t>(1 + 2 * layer), ffn = attn + 1;
    const uint64_t b = resident_bytes_of(graph, options, attn) + resident_bytes_of(graph, options, ffn);
    if (used + b > budget)
      break; // whole layers, in order: the first that does not fit ends the prefix
    resident[attn] = resident[ffn] = true;
    used += b;
  }
  return make_resident_set(graph, options, std::move(resident));
}

ResidentSet shared_resident_set(const ModelGraph& graph, const CompileOptions& options,
                                const std::vector<TierCosts>& tiers, uint64_t budget,
                                Strategy strategy) {
  CompileOptions o = options;
  o.strategy = strategy;
  if (strategy == Strategy::kLayers)
    return layers_resident_set(graph, o, tiers, budget);
  std::vector<ResidentSet> options_list = resident_candidates(graph, o, tiers, budget);
  if (strategy == Strategy::kAuto)
    options_list.push_back(layers_resident_set(graph, o, tiers, budget));
  size_t best = 0;
  double best_objective = std::numeric_limits<double>::infinity();
  for (size_t i = 0; i < options_list.size(); ++i) {
    const double v = objective(o, tiers, budget, options_list[i]);
    if (v < best_objective) {
      best_objective = v;
      best = i;
    }
  }
  return std::move(options_list[best]);
}

std::vector<ResidentSet> candidate_sets(const ModelGraph& graph, const ContextCosts& cc,
                                        uint64_t budget) {
  const CompileOptions& o = cc.options;
  if (budget == 0)
    return {empty_resident_set(graph)};
  if (o.strategy != Strategy::kAuto)
    return {shared_resident_set(graph, o, cc.tiers, budget, o.strategy)};
  std::vector<ResidentSet> out;
  std::set<std::vector<bool>> seen;
  auto add = [&](ResidentSet rs) {
    if (seen.insert(rs.resident).second)
      out.push_back(std::move(rs));
  };
  for (size_t t = 0; t < cc.tiers.size(); ++t)
    for (ResidentSet& rs : resident_candidates(graph, o, cc.tiers, budget, t))
      add(std::move(rs));
  add(layers_resident_set(graph, o, cc.tiers, budget));
  add(empty_resident_set(graph)); // CPU only, and streaming with no resident weights
  return out;
}

} // namespace pshard::planner::detail
