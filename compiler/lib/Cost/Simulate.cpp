// The event simulation of one forward pass over three resources (CPU, GPU compute, copy
// engine). Sub-layers form a chain (each needs the previous one's output), so they are
// processed in order; the copy engine runs ahead of the chain as far as slots, prefetch
// depth and routing allow. Copy k is computed when the chain reaches its sub-layer,
// which is exact because everything copy k waits for lies earlier in the chain and
// copies are issued in stream order.
#include "pshard/Planner/Estimator.h"

#include <algorithm>

namespace pshard::planner {
namespace {

// Under load: the CPU figures while copies run, and the copies while the CPU computes.
// Decided per plan (both kinds present = the pass overlaps them), not per instant: the
// profile's loaded figures were measured under continuous concurrent load.
bool overlaps(const SubLayerCosts& costs, const Placement* p, size_t n) {
  bool streams = false, computes_on_cpu = false;
  for (size_t i = 0; i < n; ++i) {
    streams = streams || p[i] == Placement::kGpuStreamed;
    computes_on_cpu = computes_on_cpu || (p[i] == Placement::kCpu && costs.sublayers[i].cpu_s > 0);
  }
  return streams && computes_on_cpu;
}

// A pass that never leaves the device (every sub-layer resident on the GPU: no copy to
// wait for, no hidden state to or from the host) is what the runtime captures as one
// CUDA graph and replays.
bool device_only(const Placement* p, size_t n) {
  for (size_t i = 0; i < n; ++i)
    if (p[i] != Placement::kGpuResident)
      return false;
  return n > 0;
}

template <bool kRecord>
double run(const SubLayerCosts& costs, const Placement* placements, size_t n, int slot_count,
           int prefetch_depth, SimResult* out) {
  thread_local std::vector<double> streamed_end; // end time of the k-th streamed sub-layer
  streamed_end.clear();
  const bool loaded = overlaps(costs, placements, n);
  const bool graph = device_only(placements, n);
  const int slots = std::max(slot_count, 1);
  const int depth = prefetch_depth > 0 ? std::min(prefetch_depth, slots) : slots;

  double cpu_free = 0, gpu_free = 0, copy_free = 0;
  double cpu_busy = 0, gpu_busy = 0, copy_busy = 0;
  double prev_end = 0;
  bool prev_on_gpu = false; // the pass starts on the host: token ids are there
  for (size_t i = 0; i < n; ++i) {
    const SubLayerCost& c = costs.sublayers[i];
    const Placement p = placements[i];
    const bool gpu = on_gpu(p);
    double input_ready = prev_end;
    if (gpu && !prev_on_gpu)
      input_ready += i == 0 ? costs.h2d_tokens_s : costs.h2d_hidden_s;
    else if (!gpu && prev_on_gpu)
      input_ready += costs.d2h_hidden_s;

    double start = std::max(input_ready, gpu ? gpu_free : cpu_free);
    if (p == Placement::kGpuStreamed) {
      const size_t k = streamed_end.size();
      double copy_start = copy_free;
      if (k >= static_cast<size_t>(slots)) // the slot's previous user must have finished
        copy_start = std::max(copy_start, streamed_end[k - static_cast<size_t>(slots)]);
      if (k >= static_cast<size_t>(depth))
        copy_start = std::max(copy_start, streamed_end[k - static_cast<size_t>(depth)]);
      if (c.copy_needs_input) // routed experts: known once the input is
        copy_start = std::max(copy_start, input_ready);
      const double copy_s = loaded ? c.copy_loaded_s : c.copy_s;
      copy_free = copy_start + copy_s;
      copy_busy += copy_s;
      start = std::max(start, copy_free);
    }
    const double t = gpu ? c.gpu_s - (graph ? c.gpu_graph_saving_s : 0.0)
                         : (loaded ? c.cpu_loaded_s : c.cpu_s);
    const double end = start + t;
    if (gpu) {
      gpu_free = end;
      gpu_busy += t;
    } else {
      cpu_free = end;
      cpu_busy += t;
    }
    if (p == Placement::kGpuStreamed)
      streamed_end.push_back(end);
    if constexpr (kRecord) {
      out->start_s.push_back(start);
      out->end_s.push_back(end);
    }
    prev_end = end;
    prev_on_gpu = gpu;
  }
  const double total = prev_end + (prev_on_gpu ? costs.d2h_logits_s : 0.0);
  if constexpr (kRecord) {
    out->seconds = total;
    out->cpu_busy_s = cpu_busy;
    out->gpu_busy_s = gpu_busy;
    out->copy_busy_s = copy_busy;
  }
  return total;
}

SimResult simulate_first(const SubLayerCosts& costs, const Plan& plan, size_t n) {
  SimResult r;
  r.start_s.reserve(n);
  r.end_s.reserve(n);
  run<true>(costs, plan.placements.data(), n, plan.stream_slot_count, plan.prefetch_depth, &r);
  return r;
}

} // namespace

SimResult simulate(const ModelGraph& graph, const SubLayerCosts& costs, const Plan& plan) {
  return simulate_first(
      costs, plan,
      std::min({graph.sublayers.size(), costs.sublayers.size(), plan.placements.size()}));
}

SimResult simulate(const SubLayerCosts& costs, const Plan& plan) {
  return simulate_first(costs, plan, std::min(costs.sublayers.size(), plan.placements.size()));
}

double simulate_seconds(const SubLayerCosts& costs, const std::vector<Placement>& placements,
                        int slot_count, int prefetch_depth) {
  const size_t n = std::min(costs.sublayers.size(), placements.size());
  return run<false>(costs, placements.data(), n, slot_count, prefetch_depth, nullptr);
}

} // namespace pshard::planner
