#include "runtime/executor/pass_graph.h"

#include <functional>

namespace pshard {

const char* graph_unfit_plan(const PlanRuntime& plan, std::span<const SubLayer> sublayers) {
  if (plan.plan && !plan.plan->stream_order.empty())
    return "the plan streams weights";
  const size_t n = sublayers.size();
  if (plan.on_device.size() != n || plan.stream_index.size() != n ||
      plan.route_on_host.size() != n || plan.gather_rows.size() != n || plan.experts.size() != n ||
      plan.device_kv.size() != n)
    return "the plan does not cover the model's sub-layers";
  for (size_t i = 0; i < n; ++i) {
    if (!plan.on_device[i])
      return "the plan runs a sub-layer on the CPU";
    if (plan.stream_index[i] >= 0 || plan.route_on_host[i] || plan.gather_rows[i])
      return "the plan streams weights";
    // A resident whole MoE block routes on the device and needs no expert table (one
    // tensor: base + e * stride), so its dispatch uploads nothing; an expert-level block
    // routes on the host and copies experts per pass.
    if (plan.experts[i])
      return "the plan places a MoE block expert by expert";
    if (sublayers[i].kind == SubLayerKind::kAttention && plan.device_kv[i].pages)
      return "the plan's KV cache is paged";
  }
  return nullptr;
}

const char* graph_unfit_pass(const PassContext& ctx) {
  if (!ctx.device || !ctx.plan)
    return "the pass runs on the CPU";
  if (ctx.tokens.empty() || static_cast<int64_t>(ctx.tokens.size()) > kGraphMaxTokens)
    return "the pass is not a decode tier";
  if (!ctx.segments.empty() || !ctx.device_segments.empty() || !ctx.logit_rows.empty() ||
      ctx.page_tokens > 0)
    return "the pass is a batch";
  if (ctx.embed_rows || !ctx.replace_rows.empty() || !ctx.rope_positions.empty())
    return "the pass carries image rows or M-RoPE positions";
  if (ctx.timeline)
    return "the pass is traced";
  return graph_unfit_plan(*ctx.plan, ctx.model.sublayers());
}

uint64_t graph_key(const PassContext& ctx) {
  // Any mixing will do: a key only picks which recorded graph a device updates first.
  uint64_t h = 0;
  auto mix = [&h](uint64_t v) {
    h ^= std::hash<uint64_t>{}(v) + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
  };
  mix(reinterpret_cast<uintptr_t>(ctx.plan ? ctx.plan->plan : nullptr));
  mix(reinterpret_cast<uintptr_t>(ctx.device ? ctx.device->arena() : nullptr));
  mix(static_cast<uint64_t>(ctx.tokens.size()));
  mix(ctx.compute_logits ? 1 : 0);
  return h;
}

} // namespace pshard
