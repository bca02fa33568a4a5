// Passes recorded and replayed as CUDA graphs (Device::begin_graph / end_graph): the
// compute stream is captured while the executor enqueues a pass, and the capture runs
// as one cudaGraphLaunch, so the GPU runs the pass's kernels back to back instead of
// waiting on one host launch per kernel.
//
//   PassGraphs graphs(graphs_enabled_from_env());       // PSHARD_CUDA_GRAPHS=0: off
//   if (graphs.begin(stream, key)) { ...launches on stream...;
//     cudaGraph_t g = graphs.end_capture(stream, sticky);
//     graphs.launch(stream, g, sticky); }                // update or instantiate, launch
//
// Re-captured on every pass, then cudaGraphExecUpdate of the executable kept for the
// key. The kernels take the pass's position, KV length and offsets as launch arguments
// (rope, kv_append's copy, attention) and they change every decode step, so a graph
// captured once would replay the first step forever; capturing again records the
// current arguments by construction, and updating an executable with the same topology
// is meant to be far cheaper than instantiating one (the profile's graph overhead times
// exactly this: capture, update and launch per replay, cuda_measurer_moe.cpp). When the
// topology differs (another plan under the same key, a kernel that chose another
// launch shape), the update fails and the graph is instantiated again. What this buys:
// one launch instead of one per kernel and no gaps between kernels on the GPU; what it
// does not: the host still records every launch. Capturing once per plan would need
// every per-pass argument in device memory (a device-side position read by rope,
// kv_append and attention): the next step if gpu-check's graph row shows capture cost.
//
// Capture mode is cudaStreamCaptureModeRelaxed: calls that are not stream work but that
// the stricter modes may refuse while capturing (attention's cudaFuncSetAttribute for a
// large shared-memory tile) stay legal; what conflicts with capture itself (a pageable
// copy, a synchronization) still fails, and the executor enqueues none (pass_graph.h).
#pragma once

#include "runtime/backends/cuda/cuda_status.h"

#include <cstdint>
#include <cuda_runtime_api.h>
#include <vector>

namespace pshard::cuda {

// PSHARD_CUDA_GRAPHS: "0", "off" or "false" turn graphs off (debugging); anything
// else, or unset, leaves them on.
bool graphs_enabled_from_env();

class PassGraphs {
public:
  explicit PassGraphs(bool enabled) : enabled_(enabled) {}
  PassGraphs(const PassGraphs&) = delete;
  PassGraphs& operator=(const PassGraphs&) = delete;
  ~PassGraphs() { clear(); }

  bool enabled() const { return enabled_; }
  bool capturing() const { return capturing_; }
  // Starts capturing `stream` for the pass named `key`; false (graphs off, or the
  // capture could not start: the pass then runs as it comes) records nothing.
  bool begin(cudaStream_t stream, uint64_t key);
  // Ends the capture: the recorded graph, or null when the capture failed (noted in
  // `sticky`: the ops recorded are lost, so the pass must not be trusted).
  cudaGraph_t end_capture(cudaStream_t stream, StickyError& sticky);
  // Updates (or instantiates) the key's executable from `graph`, launches it on
  // `stream` and destroys `graph`; true when it launched.
  bool launch(cudaStream_t stream, cudaGraph_t graph, StickyError& sticky);
  // Drops every executable (the arena they point into is going away).
  void clear();

  int64_t instantiations() const { return instantiations_; }
  int64_t updates() const { return updates_; }
  int64_t launches() const { return launches_; }

private:
  struct Exec {
    uint64_t key;
    cudaGraphExec_t exec;
  };
  // Few keys exist (one per plan and pass shape); past this many the oldest goes.
  static constexpr size_t kMaxExecs = 16;
  Exec* find(uint64_t key);

  bool enabled_;
  bool capturing_ = false;
  uint64_t key_ = 0;
  std::vector<Exec> execs_;
  int64_t instantiations_ = 0, updates_ = 0, launches_ = 0;
};

} // namespace pshard::cuda
