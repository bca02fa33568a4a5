// The MoE routes the executor decides on the host for a streamed MoE whose experts do
// not all fit its slot: the per-expert lists the CPU routing gives (moe_routes), turned
// into the per-token form a device dispatch reads (MoeRoutes: k experts per token in
// ascending index order, as the CPU sums them). The device then runs exactly the
// experts that were copied, whatever its own float rounding would have chosen.
#pragma once

#include "runtime/backends/cpu/cpu_ops.h"

#include <memory>
#include <vector>

namespace pshard {

// `by_expert[e]` lists the tokens routed to expert e (moe_routes' result); every token
// of [0, n_tokens) must appear under exactly k experts. kInternal otherwise (a routing
// bug: the device would read an expert nobody copied).
Result<std::shared_ptr<const MoeRoutes>>
routes_by_token(const std::vector<std::vector<MoeRoute>>& by_expert, int64_t n_tokens, int64_t k);

} // namespace pshard
