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
// profile's loaded figures were measured under continuous concurrent load. (A split MoE
// block's CPU side is the exception: it is slowed exactly while copies run, see below.)
bool overlaps(const SubLayerCosts& costs, const Placement* p, size_t n) {
  bool streams = false, computes_on_cpu = false;
  for (size_t i = 0; i < n; ++i) {
    streams = streams || p[i] == Placement::kGpuStreamed;
    computes_on_cpu = computes_on_cpu ||
                      (p[i] == Placement::kCpu && costs.sublayers[i].cpu_s > 0) ||
                      costs.sublayers[i].cpu_side_s > 0;
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

// The copy engine's timeline: copy k of the streamed sub-layers, scheduled as soon as
// everything it waits for is known. Copies that need no input are scheduled ahead of the
// chain, so a CPU side computed at sub-layer i sees every copy that can overlap it: one
// not yet scheduled waits for an end or an input at or past i's end.
struct CopyEngine {
  std::vector<size_t> sublayer;   // of the k-th streamed sub-layer
  std::vector<double> begin, end; // copy k, for the scheduled ones
  std::vector<double> layer_end;  // streamed sub-layer k's end, once the chain passed it
  double free = 0, busy = 0;
  size_t live = 0; // the first copy that may still be running at the chain's time

  void reset() {
    sublayer.clear();
    begin.clear();
    end.clear();
    layer_end.clear();
    free = busy = 0;
    live = 0;
  }

  // Schedules copy k (the next one) if its waits are known; `input` < 0: not yet known.
  bool schedule(const SubLayerCosts& costs, bool loaded, int slots, int depth, double input) {
    const size_t k = begin.size();
    const SubLayerCost& c = costs.sublayers[sublayer[k]];
    double start = free;
    for (const size_t back : {static_cast<size_t>(slots), static_cast<size_t>(depth)})
      if (k >= back) { // the slot's previous user, and how far ahead copies run
        if (layer_end.size() <= k - back)
          return false;
        start = std::max(start, layer_end[k - back]);
      }
    if (c.copy_needs_input) { // routed experts: known once the input is
      if (input < 0)
        return false;
      start = std::max(start, input);
    }
    const double seconds = loaded ? c.copy_loaded_s : c.copy_s;
    begin.push_back(start);
    end.push_back(free = start + seconds);
    busy += seconds;
    return true;
  }
  void run_ahead(const SubLayerCosts& costs, bool loaded, int slots, int depth) {
    while (begin.size() < sublayer.size() && schedule(costs, loaded, slots, depth, -1)) {
    }
  }
  // When `work` seconds of idle-machine CPU time started at t end, running `slowdown`
  // times slower while a copy runs.
  double cpu_side_end(double t, double work, double slowdown) {
    slowdown = std::max(slowdown, 1.0); // copies never speed the CPU up
    while (live < end.size() && end[live] <= t)
      ++live;
    for (size_t j = live; work > 0; ++j) {
      const double gap = j < begin.size() ? std::max(begin[j] - t, 0.0) : work;
      if (gap >= work)
        return t + work;
      work -= gap;
      t += gap;
      const double inside = (end[j] - t) / slowdown; // work done while copy j runs
      if (inside >= work)
        return t + work * slowdown;
      work -= inside;
      t = end[j];
    }
    return t;
  }
};

template <bool kRecord>
double run(const SubLayerCosts& costs, const Placement* placements, size_t n, int slot_count,
           int prefetch_depth, SimResult* out) {
  thread_local CopyEngine copies; // its vectors' storage reused from pass to pass
  copies.reset();
  for (size_t i = 0; i < n; ++i)
    if (placements[i] == Placement::kGpuStreamed)
      copies.sublayer.push_back(i);
  const bool loaded = overlaps(costs, placements, n);
  const bool graph = device_only(placements, n);
  const int slots = std::max(slot_count, 1);
  const int depth = prefetch_depth > 0 ? std::min(prefetch_depth, slots) : slots;

  double cpu_free = 0, gpu_free = 0;
  double cpu_busy = 0, gpu_busy = 0;
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
      const size_t k = copies.layer_end.size();
      if (copies.begin.size() == k)
        copies.schedule(costs, loaded, slots, depth, input_ready); // every wait is known now
      copies.run_ahead(costs, loaded, slots, depth);
      start = std::max(start, copies.end[k]);
    }
    double t =
        gpu ? c.gpu_s - (graph ? c.gpu_graph_saving_s : 0.0) : (loaded ? c.cpu_loaded_s : c.cpu_s);
    double cpu_side = c.cpu_side_s;
    const double cpu_from = std::max(input_ready, cpu_free);
    if (gpu && cpu_side > 0) { // both sides of a split block slow each other
      const SideBySide both =
          side_by_side(start, t, cpu_from, cpu_side, c.gpu_side_beside, c.cpu_side_beside);
      t = both.device_s;
      cpu_side = both.cpu_s;
    }
    double end = start + t;
    if (gpu) {
      gpu_free = end;
      gpu_busy += t;
    } else {
      cpu_free = end;
      cpu_busy += t;
    }
    if (gpu && c.cpu_side_s > 0) { // the CPU's experts beside the device's
      cpu_free = copies.cpu_side_end(cpu_from, cpu_side, c.cpu_side_slowdown);
      cpu_busy += cpu_free - cpu_from;
      end = std::max(end, cpu_free);
    }
    if (p == Placement::kGpuStreamed)
      copies.layer_end.push_back(end);
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
    out->copy_busy_s = copies.busy;
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
