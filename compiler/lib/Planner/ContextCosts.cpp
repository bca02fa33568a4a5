// Step 1 of plan_grid: the options resolved, and the estimator's costs of every tier in
// every context range. Costs are rounded to whole nanoseconds here, once, because the
// MLIR path carries them through the IR in that unit: both paths then plan with the very
// same numbers and write the same artifact.
#include "PlannerInternal.h"

#include <algorithm>
#include <cmath>

namespace pshard::planner {

double LinkPricing::h2d_seconds(uint64_t bytes) const {
  if (bytes == 0)
    return 0;
  return static_cast<double>(h2d_latency_ns) * 1e-9 +
         static_cast<double>(bytes) * static_cast<double>(h2d_ns_per_mib) * 1e-9 / (1 << 20);
}

double LinkPricing::d2h_seconds(uint64_t bytes) const {
  if (bytes == 0)
    return 0;
  return static_cast<double>(d2h_latency_ns) * 1e-9 +
         static_cast<double>(bytes) * static_cast<double>(d2h_ns_per_mib) * 1e-9 / (1 << 20);
}

LinkPricing link_pricing(const MachineModel& machine) {
  LinkPricing l;
  if (!machine.has_gpu())
    return l;
  // A line through two sizes typical of a switch (64 MiB and 1 GiB), under load as the
  // profile measured copies beside CPU work.
  constexpr uint64_t kSmall = 64ull << 20, kLarge = 1ull << 30;
  auto fit = [&](auto seconds, uint64_t* latency_ns, uint64_t* ns_per_mib) {
    const double small = seconds(kSmall), large = seconds(kLarge);
    const double per_mib =
        std::max(0.0, (large - small) / static_cast<double>((kLarge - kSmall) >> 20));
    *ns_per_mib = detail::to_ns(per_mib);
    *latency_ns = detail::to_ns(std::max(0.0, small - per_mib * static_cast<double>(kSmall >> 20)));
  };
  fit([&](uint64_t b) { return machine.h2d_seconds(b, Load::kUnderLoad); }, &l.h2d_latency_ns,
      &l.h2d_ns_per_mib);
  fit([&](uint64_t b) { return machine.d2h_seconds(b, Load::kUnderLoad); }, &l.d2h_latency_ns,
      &l.d2h_ns_per_mib);
  return l;
}

namespace detail {

uint64_t to_ns(double seconds) {
  return seconds <= 0 || !std::isfinite(seconds)
             ? 0
             : static_cast<uint64_t>(std::llround(seconds * 1e9));
}

double from_ns(uint64_t ns) { return static_cast<double>(ns) * 1e-9; }

namespace {

SubLayerCosts quantized(SubLayerCosts c) {
  for (SubLayerCost& s : c.sublayers) {
    s.cpu_s = quantize_ns(s.cpu_s);
    s.cpu_loaded_s = quantize_ns(s.cpu_loaded_s);
    s.gpu_s = quantize_ns(s.gpu_s);
    s.gpu_graph_saving_s = quantize_ns(s.gpu_graph_saving_s);
    s.gpu_fixed_s = quantize_ns(s.gpu_fixed_s);
    s.copy_s = quantize_ns(s.copy_s);
    s.copy_loaded_s = quantize_ns(s.copy_loaded_s);
  }
  c.h2d_hidden_s = quantize_ns(c.h2d_hidden_s);
  c.d2h_hidden_s = quantize_ns(c.d2h_hidden_s);
  c.d2h_logits_s = quantize_ns(c.d2h_logits_s);
  c.h2d_tokens_s = quantize_ns(c.h2d_tokens_s);
  return c;
}

std::vector<TierCosts> tier_costs_from(const ModelGraph& graph, const CompileOptions& o,
                                       std::vector<SubLayerCosts> costs) {
  const uint64_t kernel = o.kernel_workspace_bytes.value_or(0);
  std::vector<TierCosts> out;
  for (SubLayerCosts& c : costs) {
    const int64_t tier = c.tier;
    out.push_back({tier, std::move(c), gpu_fixed_bytes_of(graph, tier, kernel, o.parallel),
                   workspace_bytes_of(graph, tier, kernel),
                   activation_bytes_of(graph, tier, o.parallel)});
  }
  return out;
}

} // namespace

ContextCosts context_costs_from(const ModelGraph& graph, const CompileOptions& options,
                                int64_t context, int64_t start, std::vector<SubLayerCosts> at_end,
                                std::vector<SubLayerCosts> at_start) {
  ContextCosts cc;
  cc.context = context;
  cc.start = start;
  cc.options = options;
  cc.options.n_ctx = context;
  cc.tiers = tier_costs_from(graph, cc.options, std::move(at_end));
  cc.start_tiers = tier_costs_from(graph, cc.options, std::move(at_start));
  return cc;
}

std::vector<ContextCosts> costs_per_context(const ModelGraph& graph, const MachineModel& machine,
                                            const CompileOptions& o) {
  std::vector<ContextCosts> out;
  for (size_t k = 0; k < o.contexts.size(); ++k) {
    const int64_t context = o.contexts[k];
    const int64_t start = k == 0 ? 1 : o.contexts[k - 1] + 1;
    std::vector<SubLayerCosts> at_end, at_start;
    for (int64_t tier : o.tiers) { // a served pass holds up to --parallel sequences
      at_end.push_back(quantized(
          estimate_costs(graph, machine, tier, context, o.kv_type, o.threads, o.parallel)));
      at_start.push_back(
          quantized(estimate_costs(graph, machine, tier, start, o.kv_type, o.threads, o.parallel)));
    }
    out.push_back(
        context_costs_from(graph, o, context, start, std::move(at_end), std::move(at_start)));
  }
  return out;
}

uint64_t kernel_workspace_of(const MachineModel& machine, const CompileOptions& o) {
  return o.kernel_workspace_bytes.value_or(machine.has_gpu() ? machine.kernel_workspace_bytes()
                                                             : 0);
}

Result<CompileOptions> resolved_options(const ModelGraph& graph, const MachineModel& machine,
                                        const CompileOptions& options) {
  CompileOptions o = options;
  if (graph.sublayers.empty())
    return invalid_argument("the model graph has no sub-layers");
  if (o.n_ctx < 1)
    return invalid_argument("the context length must be at least 1 (got " +
                            std::to_string(o.n_ctx) + ")");
  if (o.tiers.empty())
    return invalid_argument("no tiers given: pass at least one, e.g. --tiers 1,4,16,64,256");
  std::sort(o.tiers.begin(), o.tiers.end());
  o.tiers.erase(std::unique(o.tiers.begin(), o.tiers.end()), o.tiers.end());
  if (o.tiers.front() < 1)
    return invalid_argument("tiers are token counts and must be ≥ 1");
  std::sort(o.budgets.begin(), o.budgets.end());
  o.budgets.erase(std::unique(o.budgets.begin(), o.budgets.end()), o.budgets.end());
  std::sort(o.contexts.begin(), o.contexts.end());
  o.contexts.erase(std::unique(o.contexts.begin(), o.contexts.end()), o.contexts.end());
  if (!o.contexts.empty() && o.contexts.front() < 1)
    return invalid_argument("context ranges are position counts and must be ≥ 1");
  if (!o.contexts.empty() && o.contexts.back() > o.n_ctx)
    return invalid_argument("the context range " + std::to_string(o.contexts.back()) +
                            " is longer than the context planned for (" + std::to_string(o.n_ctx) +
                            "); raise -c or drop the range");
  if (o.contexts.empty() || o.contexts.back() < o.n_ctx)
    o.contexts.push_back(o.n_ctx);
  if (o.workload.prompt_tokens < 1 || o.workload.generated_tokens < 0)
    return invalid_argument("the workload needs a prompt of at least 1 token and 0 or more "
                            "generated tokens (got " +
                            std::to_string(o.workload.prompt_tokens) + ":" +
                            std::to_string(o.workload.generated_tokens) + ")");
  if (o.threads <= 0)
    o.threads = machine.default_threads();
  o.kernel_workspace_bytes = kernel_workspace_of(machine, o);
  o.kv_ring = kv_ring_positions(graph, o);
  return o;
}

} // namespace detail
} // namespace pshard::planner
