// The device interface: what the executor needs from an accelerator (or from its
// emulation) to run a plan. Small on purpose; it maps one to one onto CUDA:
//
//   Device concept               CUDA                                   emu (runtime/backends/emu)
//   ---------------------------  -------------------------------------  ---------------------------
//   arena (one allocation)       cudaMalloc; resize: cuMemAddressReserve host memory with a hard
//                                + cuMemCreate/cuMemMap chunks          capacity (mmap, PROT_NONE
//                                                                       past the arena's end)
//   Queue::kCompute              a compute stream                       a thread + own thread pool
//   Queue::kCopy / kTransfer     copy streams (weights / activations)   threads throttled to the
//                                                                       configured PCIe link
//   copy_to_device / _to_host    cudaMemcpyAsync (pinned via            memcpy, then sleep until
//                                register_host, or staged)              latency + bytes/bandwidth
//   DeviceEvent, record / wait   cudaEvent, cudaEventRecord /           a counter per event
//                                cudaStreamWaitEvent
//   synchronize(event)           cudaEventSynchronize                   condition variable
//   compute() Ops                kernels + cuBLASLt on the compute      the CPU kernels, enqueued
//                                stream                                 on the compute thread
//
//   PSHARD_ASSIGN_OR_RETURN(uint8_t* arena, device.allocate_arena(plan.arena_bytes));
//   device.copy_to_device(Queue::kCopy, arena + slot_offset, host_weights, bytes);
//   PSHARD_ASSIGN_OR_RETURN(auto copied, device.create_event());
//   device.record(*copied, Queue::kCopy);
//   device.wait(Queue::kCompute, *copied);       // the compute queue waits, the host does not
//   ffn_forward(device.compute(), ...);           // enqueued
//   PSHARD_RETURN_IF_ERROR(device.synchronize());
//
// Semantics (the CUDA ones):
// - Work on one queue runs in enqueue order; different queues run concurrently.
// - record(e, q) marks the point after everything enqueued on q so far; wait(q, e) makes
//   later work on q wait for e's most recent record (as of the wait call); a never-
//   recorded event is complete.
// - Device addresses are plain pointers the host must not dereference (emu happens to
//   allow it; CUDA does not). Host memory passed to a copy must stay alive and
//   unchanged until the copy completes — order it with events.
// - Enqueueing never fails at the call: a backend keeps its first asynchronous failure
//   and returns it from the next synchronize (CUDA's sticky errors, as statuses with
//   file and line). The library never aborts on a device failure.
// - Memory is a hard capacity: an allocation past what the device has free fails with
//   kOutOfMemory, as a real out-of-memory does. The executor allocates exactly one arena.
//
// Optional parts (marked below) have defaults that say kUnsupported or do nothing; the
// executor copes with their absence.
#pragma once

#include "runtime/core/status.h"
#include "runtime/device/expert_groups.h"
#include "runtime/device/ops.h"

#include <cstdint>
#include <memory>
#include <span>
#include <string>

namespace pshard {

enum class Queue : uint8_t {
  kCompute = 0,  // kernels (compute())
  kCopy = 1,     // bulk weight uploads, in the plan's stream order
  kTransfer = 2, // small latency-bound crossings: hidden state, logits, KV moves. A
                 // backend may alias it to kCopy (then crossings queue behind weights)
};
inline constexpr int kQueueCount = 3;
const char* queue_name(Queue q); // "compute", "copy", "transfer"

// Created by a Device and only usable with it.
class DeviceEvent {
public:
  virtual ~DeviceEvent() = default;
};

struct DeviceInfo {
  std::string backend;       // "emu", "cuda"
  std::string name;          // "emulated GPU", "NVIDIA GeForce RTX 4060 Laptop GPU"
  uint64_t memory_bytes = 0; // total device memory: the hard capacity
};

class Device {
public:
  virtual ~Device() = default;
  virtual DeviceInfo info() const = 0;

  // --- Memory: the one arena --------------------------------------------------------
  // Allocates the arena; kOutOfMemory past the device's free memory, kInvalidArgument
  // when one exists already. Its address stays fixed until free_arena.
  virtual Result<uint8_t*> allocate_arena(uint64_t bytes) = 0;
  // OPTIONAL: grows or shrinks the arena in place, keeping its address and the bytes
  // of [0, min(old, new)). Default kUnsupported: the executor then frees, reallocates
  // and uploads again what it keeps.
  virtual Status resize_arena(uint64_t bytes);
  // Frees the arena (waits for queued work that may use it first).
  virtual void free_arena() = 0;
  virtual uint8_t* arena() const = 0;
  virtual uint64_t arena_bytes() const = 0;

  // OPTIONAL: tells the device that [host, host + bytes) — the model's mapping — is a
  // copy source for the whole run, so it can make it DMA-able once (CUDA:
  // cudaHostRegister read-only). Default: nothing to do.
  virtual Status register_host_memory(const void* host, uint64_t bytes);
  // Undoes register_host_memory, or map_host_memory, of the range beginning at `host`
  // (waits for queued work that may read it first).
  virtual void unregister_host_memory(const void* host);
  // OPTIONAL: a device address through which kernels read and write host memory
  // [host, host + bytes) over the bus (CUDA: cudaHostRegister(..., Mapped) and
  // cudaHostGetDevicePointer). The executor uses it for the KV cache of streamed
  // attention, which plans keep in host RAM; every plan of a session maps the same
  // cache, so mapping a range that lies inside a mapped one must give the same address
  // (not fail, as registering a range twice does on CUDA). The mapping lasts until
  // unregister_host_memory(host) with the range's first address, which the executor
  // calls before it frees the memory. Default kUnsupported: the executor then refuses
  // plans that stream an attention sub-layer.
  virtual Result<uint8_t*> map_host_memory(void* host, uint64_t bytes);

  // --- Queues and events --------------------------------------------------------------
  virtual void copy_to_device(Queue q, void* device_dst, const void* host_src, uint64_t bytes) = 0;
  virtual void copy_to_host(Queue q, void* host_dst, const void* device_src, uint64_t bytes) = 0;
  virtual Result<std::unique_ptr<DeviceEvent>> create_event() = 0;
  virtual void record(DeviceEvent& event, Queue q) = 0;
  virtual void wait(Queue q, const DeviceEvent& event) = 0;
  // The host waits for the event's most recent record; returns any sticky failure.
  virtual Status synchronize(const DeviceEvent& event) = 0;
  // The host waits until every queue is idle; returns any sticky failure.
  virtual Status synchronize() = 0;
  // OPTIONAL (traces): when the event's most recent record completed, in
  // std::chrono::steady_clock nanoseconds since its epoch. Call after synchronizing on
  // it. Default kUnsupported (CUDA: cudaEventElapsedTime from a reference event).
  virtual Result<int64_t> completion_time_ns(const DeviceEvent& event);

  // --- Compute ------------------------------------------------------------------------
  // The forward pass's operations, enqueued on Queue::kCompute; pointers are device
  // addresses (inside the arena) except token ids (see ops.h).
  virtual Ops& compute() = 0;
  // OPTIONAL: kernel scratch inside the arena (the plan's workspace buffer: tiled
  // attention scores and the backend's fixed kernel scratch), set by the executor before
  // each pass; the kernels must not allocate device memory of their own. The executor
  // has waited for every queue since the previous pass (run_pass ends with
  // synchronize()), so the old workspace is no longer read when it moves; a backend may
  // still synchronize when the address changes. Default: ignored (emu needs none).
  virtual void set_workspace(uint8_t* device_ptr, uint64_t bytes);
  // OPTIONAL: the bytes of the workspace buffer this device's kernels need at least (the
  // figure its profile reports as kernel_workspace_bytes). A session refuses a schedule
  // with a GPU plan whose workspace is smaller. Default 0 (emu needs none).
  virtual uint64_t kernel_workspace_bytes() const { return 0; }
  // The device's share of a split MoE pass (an expert-level plan: runtime/executor/
  // expert_dispatch.h), enqueued on Queue::kCompute: group g runs expert groups[g].expert
  // (ascending) over the next groups[g].rows rows of host_in (moe.n_embd floats each,
  // host memory) and writes their unweighted outputs to the same rows of host_out. Both
  // stay alive and host_in unchanged until the compute queue has passed this point.
  // moe's expert addresses are device addresses; its expert_in/out, gate and up buffers
  // are device scratch for the rows of one group (at most a pass's tokens).
  // Default: per group, copy its rows into moe.expert_in, run moe_expert_ffn, copy
  // moe.expert_out back — the CPU's arithmetic expert by expert (cpu, emu). A device may
  // run every group at once (CUDA: one upload, grouped launches, one download).
  virtual void run_expert_groups(const MoeDispatch& moe, std::span<const ExpertRowGroup> groups,
                                 const float* host_in, float* host_out);

  // --- Pass graphs (OPTIONAL) ---------------------------------------------------------
  // A pass whose device work stays on the compute queue from the embedding to the head
  // (a fully resident plan at a decode tier: runtime/executor/pass_graph.h says which)
  // may be recorded and replayed as one graph, so the host pays one launch instead of
  // one per kernel (CUDA: stream capture and cudaGraphLaunch, cuda_graphs.h).
  //
  //   if (device.begin_graph(key, n_tokens)) { ...compute() ops only...; device.end_graph(true); }
  //
  // begin_graph: from now until end_graph the executor enqueues compute() ops only — no
  // copies, events, waits or synchronization, and no set_workspace. `key` names the plan
  // and the pass's shape: equal keys usually mean the same kernels in the same order
  // (the device may keep one graph per key), but a device must stay correct when they
  // do not. Returns true when the device records; false when it runs the ops as they
  // come (the default: cpu and emu, so their results and plan invariance are untouched).
  virtual bool begin_graph(uint64_t key, int64_t n_tokens);
  // Ends a recording begun by begin_graph. replay: enqueue the recorded work on
  // Queue::kCompute, exactly as if each op had been enqueued when it was called (later
  // work on any queue may wait for it through events as usual); returns true when the
  // work ran from a graph. !replay: drop it (the pass failed). Failures are sticky, as
  // for any enqueue.
  virtual bool end_graph(bool replay);
};

} // namespace pshard
