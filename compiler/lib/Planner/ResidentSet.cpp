// Which sub-layers stay in VRAM for a budget — the same for every tier of that budget,
// so that a tier switch never reloads weights.
//
// Priority: attention blocks with their KV cache first (small, touched every pass, and
// the KV cache would otherwise cross PCIe), then the rest by predicted benefit per byte
// at tier 1 (decode dominates time per token). The set is filled greedily in that order
// up to the budget minus a reserve, for several reserves — none, and room for one or two
// streaming slots at each tier — since the planner cannot know in advance whether a
// byte is worth more as resident weights or as streaming room; plan_grid plans every
// candidate and keeps the best.
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
    bytes += align_up(s.kv_bytes_per_token(options.kv_type) * static_cast<uint64_t>(options.n_ctx));
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

void assign_layout_ranks(std::vector<ResidentSet>& by_budget) {
  // Set k ranks a sub-layer by where its run of consecutive budgets holding it, ending
  // at k, began. A buffer both k and k+1 hold keeps its rank, and one new in k+1 ranks
  // last: when set k nests in set k+1, set k+1's layout is set k's plus a tail.
  std::vector<int> run_start;
  for (size_t k = 0; k < by_budget.size(); ++k) {
    ResidentSet& rs = by_budget[k];
    run_start.resize(rs.resident.size(), -1);
    for (size_t i = 0; i < rs.resident.size(); ++i)
      run_start[i] = !rs.resident[i] ? -1 : run_start[i] >= 0 ? run_start[i] : static_cast<int>(k);
    rs.layout_rank = run_start;
  }
}

namespace {

std::vector<size_t> priority_order(const ModelGraph& graph, const CompileOptions& options,
                                   const TierCosts& tier1) {
  std::vector<size_t> attention, rest;
  for (size_t i = 0; i < graph.sublayers.size(); ++i)
    (graph.sublayers[i].kind == SubLayerKind::kAttention ? attention : rest).push_back(i);
  auto benefit_per_byte = [&](size_t i) {
    const SubLayerCost& c = tier1.costs.sublayers[i];
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

} // namespace

std::vector<ResidentSet> resident_candidates(const ModelGraph& graph, const CompileOptions& options,
                                             const std::vector<TierCosts>& tiers, uint64_t budget) {
  const size_t n = graph.sublayers.size();
  const std::vector<size_t> order = priority_order(graph, options, tiers.front());
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
    out.push_back(make_resident_set(graph, options, std::vector<bool>(n, false)));
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

} // namespace pshard::planner::detail
