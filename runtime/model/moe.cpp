// The MoE sub-layer: RMSNorm, softmax router, top-k experts per token with their
// weights renormalised to sum to one, SiLU-gated expert FFNs, residual.
#include "runtime/kernels/ops.h"
#include "runtime/model/sublayer.h"

#include <algorithm>
#include <numeric>

namespace pshard {
namespace {

struct Route {
  int64_t token;
  float weight;
};

// The top-k experts of one token's router probabilities, ties to the lower index.
void select_experts(float* probs, int64_t n_expert, int64_t k, int64_t token,
                    std::vector<std::vector<Route>>& routes) {
  softmax(probs, n_expert);
  std::vector<int64_t> order(static_cast<size_t>(n_expert));
  std::iota(order.begin(), order.end(), 0);
  std::partial_sort(order.begin(), order.begin() + k, order.end(), [&](int64_t x, int64_t y) {
    return probs[x] > probs[y] || (probs[x] == probs[y] && x < y);
  });
  float sum = 0.0f;
  for (int64_t i = 0; i < k; ++i)
    sum += probs[order[static_cast<size_t>(i)]];
  for (int64_t i = 0; i < k; ++i) {
    const int64_t e = order[static_cast<size_t>(i)];
    routes[static_cast<size_t>(e)].push_back({token, probs[e] / sum});
  }
}

} // namespace

void moe_forward(ForwardPass& p, int64_t layer) {
  const MoeWeights& w = p.weights.layers[static_cast<size_t>(layer)].moe;
  const LlamaHParams& hp = p.hp;
  Activations& a = p.act;
  const int64_t n = p.n_tokens(), d = hp.n_embd, ff = hp.n_ff, ne = hp.n_expert;

  for (int64_t t = 0; t < n; ++t)
    rms_norm(a.hidden.data() + t * d, w.norm.data, a.normed.data() + t * d, d, hp.rms_eps);
  matmul(w.router, a.normed.data(), n, a.router.data(), p.pool);

  std::vector<std::vector<Route>> routes(static_cast<size_t>(ne));
  for (int64_t t = 0; t < n; ++t)
    select_experts(a.router.data() + t * ne, ne, hp.n_expert_used, t, routes);

  // Experts run in index order over the tokens routed to them, so each weight
  // matrix is read once per pass and the summation order is fixed.
  std::fill_n(a.moe_out.begin(), n * d, 0.0f);
  for (int64_t e = 0; e < ne; ++e) {
    const auto& r = routes[static_cast<size_t>(e)];
    const int64_t m = static_cast<int64_t>(r.size());
    if (m == 0)
      continue;
    for (int64_t i = 0; i < m; ++i)
      std::copy_n(a.normed.data() + r[static_cast<size_t>(i)].token * d, d,
                  a.expert_in.data() + i * d);
    matmul(w.gate.expert(e), a.expert_in.data(), m, a.gate.data(), p.pool);
    matmul(w.up.expert(e), a.expert_in.data(), m, a.up.data(), p.pool);
    silu_mul(a.gate.data(), a.up.data(), a.gate.data(), m * ff);
    matmul(w.down.expert(e), a.gate.data(), m, a.expert_out.data(), p.pool);
    for (int64_t i = 0; i < m; ++i) {
      float* out = a.moe_out.data() + r[static_cast<size_t>(i)].token * d;
      const float* y = a.expert_out.data() + i * d;
      const float wt = r[static_cast<size_t>(i)].weight;
      for (int64_t j = 0; j < d; ++j)
        out[j] += wt * y[j];
    }
  }
  add_inplace(a.hidden.data(), a.moe_out.data(), n * d);
}

} // namespace pshard
