#include "runtime/executor/host_routes.h"

#include <string>

namespace pshard {

Result<std::shared_ptr<const MoeRoutes>>
routes_by_token(const std::vector<std::vector<MoeRoute>>& by_expert, int64_t n_tokens, int64_t k) {
  auto r = std::make_shared<MoeRoutes>();
  r->n_tokens = n_tokens;
  r->k = k;
  r->experts.assign(static_cast<size_t>(n_tokens * k), -1);
  r->weights.assign(static_cast<size_t>(n_tokens * k), 0.0f);
  std::vector<int64_t> filled(static_cast<size_t>(n_tokens), 0);
  // Experts in ascending order, so each token's k slots come out sorted by expert.
  for (size_t e = 0; e < by_expert.size(); ++e)
    for (const MoeRoute& route : by_expert[e]) {
      if (route.token < 0 || route.token >= n_tokens ||
          filled[static_cast<size_t>(route.token)] >= k)
        return internal_error("MoE routing gave token " + std::to_string(route.token) +
                              " more than " + std::to_string(k) + " experts (or a token past " +
                              std::to_string(n_tokens) + ")");
      const size_t at = static_cast<size_t>(route.token * k + filled[static_cast<size_t>(route.token)]++);
      r->experts[at] = static_cast<int32_t>(e);
      r->weights[at] = route.weight;
    }
  for (int64_t t = 0; t < n_tokens; ++t)
    if (filled[static_cast<size_t>(t)] != k)
      return internal_error("MoE routing gave token " + std::to_string(t) + " " +
                            std::to_string(filled[static_cast<size_t>(t)]) + " experts, not " +
                            std::to_string(k));
  return std::shared_ptr<const MoeRoutes>(std::move(r));
}

} // namespace pshard
