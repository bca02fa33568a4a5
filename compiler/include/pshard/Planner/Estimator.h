// The estimator: how long one forward pass of a plan takes on a machine.
//
// Per sub-layer, a roofline over the MachineModel:
//     t = max(flops / F, bytes / B) + overhead
// with F the achieved FLOP/s for the sub-layer's matrices (type, tokens, size, threads)
// and B the device's read bandwidth; CPU figures are taken under load when the plan
// copies weights concurrently, copy figures under load when the CPU computes.
//
// Per plan, an event simulation of three resources — CPU, GPU compute, copy engine — with
// the dependencies the runtime executes:
//   - a sub-layer starts when its device is free and its input is ready; the input is
//     ready when the previous sub-layer finished, plus a PCIe crossing of the hidden
//     state when the device changes (and the logits come back when the head is on GPU);
//   - a gpu_streamed sub-layer also waits for its weight copy;
//   - copies run one at a time on the copy engine, in stream order; copy k goes into slot
//     k mod S and waits until the slot's previous user (streamed sub-layer k − S) finished;
//   - copy k waits until streamed sub-layer k − prefetch_depth finished (how far ahead);
//   - a MoE sub-layer whose experts are only partly touched at this tier copies only the
//     routed experts, so its copy also waits for its input (the router needs it);
//   - a split MoE sub-layer's CPU experts run from its input on beside its device part,
//     slowed while any copy runs — its own, or one of a later sub-layer running ahead —
//     and the sub-layer ends when both sides have;
//   - a pass that runs entirely on the GPU from resident weights (no sub-layer streamed or
//     on the CPU) is replayed as one CUDA graph at decode: each GPU sub-layer takes
//     gpu_s − gpu_graph_saving_s.
//
//   SubLayerCosts costs = estimate_costs(graph, machine, /*tier=*/1, n_ctx, kv_type, threads);
//   SimResult r = simulate(graph, costs, plan);   // r.seconds, r.cpu_busy_s, …
#pragma once

#include "pshard/Planner/MachineModel.h"
#include "pshard/Planner/ModelGraph.h"
#include "pshard/Planner/Plan.h"

#include <algorithm>
#include <vector>

namespace pshard::planner {

// One sub-layer's times at one tier, in seconds.
struct SubLayerCost {
  double cpu_s = 0;        // on the CPU, idle machine
  double cpu_loaded_s = 0; // on the CPU while copies run
  double gpu_s = 0;        // on the GPU, launch overheads included
  // What replaying a device-only decode pass as one CUDA graph takes off gpu_s (launches
  // at the graph rate instead of gpu_launch_overhead_s); 0 without graph figures.
  double gpu_graph_saving_s = 0;
  // The part of gpu_s that does not shrink when the device runs only some of a MoE
  // block's experts (the launches of grouped expert kernels); 0: all of it scales.
  double gpu_fixed_s = 0;
  double copy_s = 0;             // h2d of what a streamed pass needs (expected), idle
  double copy_loaded_s = 0;      // the same while the CPU computes
  uint64_t stream_bytes = 0;     // expected bytes a streamed pass copies
  uint64_t slot_bytes = 0;       // the most a streamed pass may need on the GPU (slot size)
  bool copy_needs_input = false; // MoE with partial experts: routing decides the copy
  // A split MoE block's experts on the CPU, run beside the device from the block's input
  // on (the hidden state's crossings included), at the idle machine's rate; while the
  // copy engine runs they progress `cpu_side_slowdown` times slower (the profile's loaded
  // figures: DMA takes its share of host memory bandwidth). 0: no CPU side.
  double cpu_side_s = 0;
  double cpu_side_slowdown = 1;
  // While both sides of a split block compute, each runs this many times slower (the
  // machine's beside-compute figures at the block's expert matmuls; MoE blocks only): the
  // emulated GPU is a thread of the same CPU and shares its memory bandwidth.
  double cpu_side_beside = 1; // the CPU's experts while the device computes
  double gpu_side_beside = 1; // the device's while the CPU computes
};

// Two sides of a split block: the device from `device_start` with `device_s` seconds of
// idle-machine work, the CPU from `cpu_start` with `cpu_s`, each slowed by its factor
// while the other still runs. Their wall-clock seconds, each from its own start.
struct SideBySide {
  double device_s, cpu_s;
};
inline SideBySide side_by_side(double device_start, double device_s, double cpu_start,
                               double cpu_s, double device_beside, double cpu_beside) {
  const double from = std::max(device_start, cpu_start);
  // What each has left when both run (the earlier one ran alone until then).
  const double device_left = std::max(device_s - (from - device_start), 0.0);
  const double cpu_left = std::max(cpu_s - (from - cpu_start), 0.0);
  const double both = std::min(device_left * device_beside, cpu_left * cpu_beside);
  return {device_s + both * (1 - 1 / device_beside), cpu_s + both * (1 - 1 / cpu_beside)};
}

// Costs of every sub-layer at one tier, plus the crossing costs.
struct SubLayerCosts {
  int64_t tier = 1;
  int64_t n_ctx = 0;
  std::vector<SubLayerCost> sublayers;
  double h2d_hidden_s = 0; // hidden state of `tier` tokens, host -> device
  double d2h_hidden_s = 0; // and back
  double d2h_logits_s = 0; // logits of one token back to the host (head on GPU)
  double h2d_tokens_s = 0; // token ids to the GPU (embed on GPU)
};

// Roofline of one sub-layer (exposed for tests and the MLIR cost-annotation pass). A pass
// of `tier` tokens holds `sequences` sequences, or `tier` when fewer tokens than that (a
// served batch: pshard-compile --parallel), each
// attending over its own n_ctx positions and keeping its own recurrent state: their bytes are
// read (and, streamed, cross the link) once per sequence, while the weights are read once.
SubLayerCost estimate_sublayer(const SubLayerInfo& s, const ModelGraph& graph,
                               const MachineModel& machine, int64_t tier, int64_t n_ctx,
                               TensorType kv_type, int threads, int64_t sequences = 1);

SubLayerCosts estimate_costs(const ModelGraph& graph, const MachineModel& machine, int64_t tier,
                             int64_t n_ctx, TensorType kv_type, int threads, int64_t sequences = 1);

struct SimResult {
  double seconds = 0; // one forward pass
  double cpu_busy_s = 0, gpu_busy_s = 0, copy_busy_s = 0;
  // Per sub-layer start and end (seconds from the start of the pass), for traces and
  // step-by-step comparison with pshard-run --trace.
  std::vector<double> start_s, end_s;
};

// Simulates `plan.placements` with its stream order, slots and prefetch depth.
// Preconditions (validate_plan checks them): one placement per sub-layer; stream_order
// lists the gpu_streamed sub-layers in graph order; slot count ≥ 1 when any is streamed.
SimResult simulate(const ModelGraph& graph, const SubLayerCosts& costs, const Plan& plan);
// The same over costs alone (one placement per cost): the vision phase's sub-layers.
SimResult simulate(const SubLayerCosts& costs, const Plan& plan);

// A faster variant for the search: no per-sub-layer times recorded.
double simulate_seconds(const SubLayerCosts& costs, const std::vector<Placement>& placements,
                        int slot_count, int prefetch_depth);

} // namespace pshard::planner
