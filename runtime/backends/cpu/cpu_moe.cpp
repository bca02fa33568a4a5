// The MoE dispatch on the CPU: routing, then each expert's SiLU-gated FFN over the
// tokens routed to it. Experts run in index order over their tokens, so each weight
// matrix is read once per pass and the summation order is fixed.
#include "runtime/backends/cpu/cpu_ops.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace pshard {

namespace {

void sigmoid(float* x, int64_t n) {
  for (int64_t i = 0; i < n; ++i)
    x[i] = 1.0f / (1.0f + std::exp(-x[i]));
}

// Group-limited routing's buffers, sized once per call of moe_routes, not per token.
struct GroupScratch {
  std::vector<float> score, masked;
  std::vector<int64_t> groups;
};

// Group-limited routing: `key` (n_expert choosing scores) with the experts of every group
// but the n_groups_used best set to -inf into `s.masked`; a group's score is the sum of its
// two best (its one, for groups of one), ties to the lower group.
const float* keep_best_groups(const float* key, int64_t n_expert, const MoeGating& g,
                              GroupScratch& s) {
  const int64_t per = n_expert / g.n_groups;
  std::vector<float>& score = s.score;
  std::vector<int64_t>& groups = s.groups;
  std::vector<float>& masked = s.masked;
  score.resize(static_cast<size_t>(g.n_groups));
  for (int64_t gr = 0; gr < g.n_groups; ++gr) {
    float best = -INFINITY, second = -INFINITY;
    for (int64_t e = gr * per; e < (gr + 1) * per; ++e)
      if (key[e] > best) {
        second = best;
        best = key[e];
      } else if (key[e] > second) {
        second = key[e];
      }
    score[static_cast<size_t>(gr)] = per > 1 ? best + second : best;
  }
  groups.resize(static_cast<size_t>(g.n_groups));
  std::iota(groups.begin(), groups.end(), 0);
  std::partial_sort(
      groups.begin(), groups.begin() + g.n_groups_used, groups.end(),
      [&](int64_t x, int64_t y) { return score[x] > score[y] || (score[x] == score[y] && x < y); });
  masked.assign(static_cast<size_t>(n_expert), -INFINITY);
  for (int64_t i = 0; i < g.n_groups_used; ++i) {
    const int64_t gr = groups[static_cast<size_t>(i)];
    std::copy(key + gr * per, key + (gr + 1) * per, masked.begin() + gr * per);
  }
  return masked.data();
}

} // namespace

std::vector<std::vector<MoeRoute>> moe_routes(float* router_logits, int64_t n_tokens,
                                              int64_t n_expert, int64_t k, const MoeGating& g) {
  std::vector<std::vector<MoeRoute>> routes(static_cast<size_t>(n_expert));
  std::vector<int64_t> order(static_cast<size_t>(n_expert));
  std::vector<float> biased(g.selection_bias ? static_cast<size_t>(n_expert) : 0);
  GroupScratch scratch;
  for (int64_t t = 0; t < n_tokens; ++t) {
    float* probs = router_logits + t * n_expert;
    if (g.func == ExpertGating::kSigmoid)
      sigmoid(probs, n_expert);
    else
      softmax(probs, n_expert);
    const float* key = probs; // what chooses: the probabilities, or biased ones
    if (g.selection_bias) {
      for (int64_t e = 0; e < n_expert; ++e)
        biased[static_cast<size_t>(e)] = probs[e] + g.selection_bias[e];
      key = biased.data();
    }
    if (g.n_groups > 1)
      key = keep_best_groups(key, n_expert, g, scratch);
    std::iota(order.begin(), order.end(), 0);
    std::partial_sort(order.begin(), order.begin() + k, order.end(), [&](int64_t x, int64_t y) {
      return key[x] > key[y] || (key[x] == key[y] && x < y);
    });
    float sum = 0.0f;
    for (int64_t i = 0; i < k; ++i)
      sum += probs[order[static_cast<size_t>(i)]];
    if (!g.normalize)
      sum = 1.0f;
    for (int64_t i = 0; i < k; ++i) {
      const int64_t e = order[static_cast<size_t>(i)];
      routes[static_cast<size_t>(e)].push_back({t, probs[e] / sum * g.scale});
    }
  }
  return routes;
}

void moe_gather(const std::vector<MoeRoute>& r, const float* x, int64_t d, float* rows,
                bool weight_inputs) {
  for (size_t i = 0; i < r.size(); ++i) {
    const float* in = x + r[i].token * d;
    float* row = rows + static_cast<int64_t>(i) * d;
    if (!weight_inputs) {
      std::copy_n(in, d, row);
      continue;
    }
    for (int64_t j = 0; j < d; ++j)
      row[j] = in[j] * r[i].weight;
  }
}

void moe_accumulate(const std::vector<MoeRoute>& r, const float* y, int64_t d, float* out,
                    bool weight_inputs) {
  for (size_t i = 0; i < r.size(); ++i) {
    float* o = out + r[i].token * d;
    const float* row = y + static_cast<int64_t>(i) * d;
    const float wt = weight_inputs ? 1.0f : r[i].weight;
    for (int64_t j = 0; j < d; ++j)
      o[j] += wt * row[j];
  }
}

void CpuOps::moe_dispatch(const float* x, float* router_logits, const MoeDispatch& moe, int64_t n,
                          float* out) {
  const int64_t d = moe.n_embd;
  const auto routes =
      moe_routes(router_logits, n, moe.gate.n_expert, moe.n_expert_used, moe.gating);
  std::fill_n(out, n * d, 0.0f);
  for (int64_t e = 0; e < moe.gate.n_expert; ++e) {
    const auto& r = routes[static_cast<size_t>(e)];
    const int64_t m = static_cast<int64_t>(r.size());
    if (m == 0)
      continue;
    moe_gather(r, x, d, moe.expert_in, moe.gating.weight_inputs);
    moe_expert_ffn(*this, moe, e, m);
    moe_accumulate(r, moe.expert_out, d, out, moe.gating.weight_inputs);
  }
}

} // namespace pshard
