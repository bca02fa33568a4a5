// Step 6 of plan_grid: one budget's plans laid out in its arena.
//
// A budget's plans use a few distinct resident sets (per context range, per group of
// tiers). The runtime keeps a buffer in place across a switch when it sits at the same
// offset (and has the same size) in both plans, so the sets are laid out jointly: each
// buffer gets ONE offset for every set that holds it, and two buffers may share addresses
// only when no set holds both. Buffers are placed in groups of the sets holding them,
// the most shared first, each at the lowest offset free of the buffers it coexists with
// (first fit). Two sets then lay out as their common part, followed by each one's own
// buffers over the same addresses: a switch uploads exactly what the other set adds.
//
// A set whose joint layout leaves too little room for its plans' scratch (slots,
// activations, workspace) is laid out jointly with its own context range's sets only,
// and failing that on its own (compactly, as it always fits): its switches then move
// more than the difference, which the switch records say.
//
// Within a group, buffers go by the budget their residency run began (layout_ranks):
// a budget whose set nests in the next one's keeps its buffers at the same offsets in
// both arenas, so a budget switch uploads only the difference too.
#include "PlannerInternal.h"

#include <algorithm>
#include <map>
#include <tuple>

namespace pshard::planner::detail {
namespace {

// One resident set of one context range, as the layout sees it.
struct LayoutSet {
  size_t context = 0, set = 0;
  uint64_t limit = 0; // where its resident region must end for every plan on it to fit
};

// A buffer some sets hold: a tensor (tensor ≥ 0) or a KV cache of `kv_positions`.
struct Buffer {
  size_t sublayer = 0;
  int tensor = -1;
  int64_t kv_positions = 0;
  uint64_t size = 0;         // aligned
  std::vector<bool> held_by; // per layout set
  uint64_t offset = kNoOffset;
};

bool share_a_set(const std::vector<bool>& a, const std::vector<bool>& b) {
  for (size_t i = 0; i < a.size(); ++i)
    if (a[i] && b[i])
      return true;
  return false;
}

// What a plan places after its resident region: resident experts, slots, activations,
// workspace.
uint64_t scratch_of(const ModelGraph& graph, const TierCosts& tc, const Candidate& c) {
  uint64_t bytes = c.experts.bytes + static_cast<uint64_t>(c.slots) * align_up(c.slot_bytes);
  if (std::any_of(c.placements.begin(), c.placements.end(), on_gpu))
    bytes += align_up(tc.activation_bytes) + align_up(tc.workspace_bytes);
  return bytes;
}

// First-fit joint layout of the buffers held by the layout sets in `members`; returns the
// resident end of every member (0 for the others).
std::vector<uint64_t> joint_layout(std::vector<Buffer>& buffers, const std::vector<bool>& members,
                                   const std::vector<int>& rank) {
  std::vector<size_t> order;
  std::vector<std::vector<bool>> sig(buffers.size());
  for (size_t b = 0; b < buffers.size(); ++b) {
    sig[b].resize(members.size());
    bool any = false;
    for (size_t j = 0; j < members.size(); ++j) {
      sig[b][j] = members[j] && buffers[b].held_by[j];
      any = any || sig[b][j];
    }
    if (any)
      order.push_back(b);
  }
  auto count = [&](size_t b) { return std::count(sig[b].begin(), sig[b].end(), true); };
  auto rank_of = [&](size_t b) { return rank.empty() ? 0 : rank[buffers[b].sublayer]; };
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    if (count(a) != count(b))
      return count(a) > count(b);
    if (sig[a] != sig[b]) // earlier sets' groups first (true before false)
      return std::lexicographical_compare(sig[b].begin(), sig[b].end(), sig[a].begin(),
                                          sig[a].end());
    return std::make_tuple(rank_of(a), buffers[a].sublayer, buffers[a].tensor < 0,
                           buffers[a].tensor) < std::make_tuple(rank_of(b), buffers[b].sublayer,
                                                                buffers[b].tensor < 0,
                                                                buffers[b].tensor);
  });
  std::vector<size_t> placed; // by offset
  std::vector<uint64_t> end(members.size(), 0);
  for (size_t b : order) {
    uint64_t at = 0;
    for (bool moved = true; moved;) {
      moved = false;
      for (size_t p : placed) {
        const Buffer& q = buffers[p];
        if (q.offset < at + buffers[b].size && q.offset + q.size > at &&
            share_a_set(sig[b], sig[p])) {
          at = q.offset + q.size;
          moved = true;
        }
      }
    }
    buffers[b].offset = at;
    placed.insert(
        std::upper_bound(placed.begin(), placed.end(), b,
                         [&](size_t x, size_t y) { return buffers[x].offset < buffers[y].offset; }),
        b);
    for (size_t j = 0; j < members.size(); ++j)
      if (sig[b][j])
        end[j] = std::max(end[j], at + buffers[b].size);
  }
  return end;
}

} // namespace

std::vector<std::vector<int>>
layout_ranks(const std::vector<std::vector<BudgetChoice>>& choices_per_budget) {
  // Budget k ranks a sub-layer by where its run of consecutive budgets holding it (in any
  // of their plans), ending at k, began.
  std::vector<std::vector<int>> out;
  std::vector<int> run_start;
  for (size_t k = 0; k < choices_per_budget.size(); ++k) {
    std::vector<bool> held;
    for (const BudgetChoice& c : choices_per_budget[k])
      for (const ResidentSet& rs : c.sets) {
        held.resize(rs.resident.size(), false);
        for (size_t i = 0; i < rs.resident.size(); ++i)
          held[i] = held[i] || rs.resident[i];
      }
    run_start.resize(held.size(), -1);
    for (size_t i = 0; i < held.size(); ++i)
      run_start[i] = !held[i] ? -1 : run_start[i] >= 0 ? run_start[i] : static_cast<int>(k);
    out.push_back(run_start);
  }
  return out;
}

Result<LaidOutBudget> lay_out_budget(const ModelGraph& graph, const std::vector<ContextCosts>& ccs,
                                     int threads, uint64_t budget,
                                     const std::vector<BudgetChoice>& choices,
                                     const std::vector<int>& rank, const LinkPricing& link) {
  // The layout sets and the buffers they hold.
  std::vector<LayoutSet> sets;
  for (size_t k = 0; k < choices.size(); ++k)
    for (size_t s = 0; s < choices[k].sets.size(); ++s) {
      uint64_t scratch = 0;
      for (size_t t = 0; t < choices[k].set_of_tier.size(); ++t)
        if (static_cast<size_t>(choices[k].set_of_tier[t]) == s)
          scratch =
              std::max(scratch, scratch_of(graph, ccs[k].tiers[t], choices[k].plan_of_tier[t]));
      sets.push_back({k, s, budget >= scratch ? budget - scratch : 0});
    }
  std::vector<Buffer> buffers;
  std::map<std::tuple<size_t, int, int64_t>, size_t> index;
  auto buffer_index = [&](size_t sublayer, int tensor, int64_t kv_positions, uint64_t size) {
    auto [it, added] = index.try_emplace({sublayer, tensor, kv_positions}, buffers.size());
    if (added)
      buffers.push_back(
          {sublayer, tensor, kv_positions, align_up(size), std::vector<bool>(sets.size())});
    return it->second;
  };
  // Per layout set: its buffers by (sub-layer, tensor; -1 the KV cache).
  std::vector<std::vector<std::pair<std::pair<size_t, int>, size_t>>> holds(sets.size());
  for (size_t j = 0; j < sets.size(); ++j) {
    const ResidentSet& rs = choices[sets[j].context].sets[sets[j].set];
    const CompileOptions& o = ccs[sets[j].context].options;
    for (size_t i = 0; i < rs.resident.size(); ++i) {
      if (!rs.resident[i])
        continue;
      const SubLayerInfo& s = graph.sublayers[i];
      for (size_t t = 0; t < s.tensors.size(); ++t) {
        const size_t b = buffer_index(i, static_cast<int>(t), 0, s.tensors[t].bytes);
        buffers[b].held_by[j] = true;
        holds[j].push_back({{i, static_cast<int>(t)}, b});
      }
      if (s.kind == SubLayerKind::kAttention) {
        const size_t b = buffer_index(i, -1, o.n_ctx, kv_buffer_bytes_of(graph, s, o));
        buffers[b].held_by[j] = true;
        holds[j].push_back({{i, -1}, b});
      }
    }
  }

  // Joint over all sets, then per context range, then each set on its own.
  std::vector<ResidentOffsets> offsets(sets.size());
  std::vector<bool> done(sets.size(), false);
  auto take = [&](const std::vector<bool>& members, const std::vector<uint64_t>& end) {
    for (size_t j = 0; j < sets.size(); ++j) {
      if (!members[j] || end[j] > sets[j].limit)
        continue;
      ResidentOffsets& at = offsets[j];
      at.tensor.resize(graph.sublayers.size());
      at.kv.assign(graph.sublayers.size(), kNoOffset);
      for (size_t i = 0; i < graph.sublayers.size(); ++i)
        at.tensor[i].assign(graph.sublayers[i].tensors.size(), kNoOffset);
      for (const auto& [key, b] : holds[j])
        (key.second < 0 ? at.kv[key.first]
                        : at.tensor[key.first][static_cast<size_t>(key.second)]) =
            buffers[b].offset;
      at.end = end[j];
      done[j] = true;
    }
  };
  take(std::vector<bool>(sets.size(), true),
       joint_layout(buffers, std::vector<bool>(sets.size(), true), rank));
  for (size_t k = 0; k < choices.size(); ++k) {
    std::vector<bool> members(sets.size(), false);
    bool any = false;
    for (size_t j = 0; j < sets.size(); ++j)
      if (sets[j].context == k && !done[j])
        any = members[j] = true;
    if (any)
      take(members, joint_layout(buffers, members, rank));
  }
  for (size_t j = 0; j < sets.size(); ++j)
    if (!done[j])
      offsets[j] = compact_offsets(graph, ccs[sets[j].context].options,
                                   choices[sets[j].context].sets[sets[j].set], rank);

  LaidOutBudget out;
  for (size_t k = 0; k < choices.size(); ++k) {
    std::vector<Plan> row;
    for (size_t t = 0; t < choices[k].set_of_tier.size(); ++t) {
      const auto s = static_cast<size_t>(choices[k].set_of_tier[t]);
      size_t j = 0;
      while (!(sets[j].context == k && sets[j].set == s))
        ++j;
      PSHARD_ASSIGN_OR_RETURN(Plan p,
                              finalize_plan(graph, ccs[k], t, threads, budget, choices[k].sets[s],
                                            offsets[j], choices[k].plan_of_tier[t]));
      row.push_back(std::move(p));
    }
    out.plans.push_back(std::move(row));
  }
  out.switches = switches_between(graph, ccs, out.plans, link);
  return out;
}

} // namespace pshard::planner::detail
