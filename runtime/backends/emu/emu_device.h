// The emulated GPU: a Device in host memory, so the executor's streaming, overlap,
// slots and budgets run — and are tested — on any machine.
//
//   EmuOptions o;
//   o.memory_bytes = 512ull << 20;       // hard capacity: allocations past it fail
//   o.link.bytes_per_s = 12e9;           // PCIe: every copy takes latency + bytes / bandwidth
//   auto device = EmuDevice::create(o);
//
// - Memory: one arena in a reservation of memory_bytes (emu_arena.h); an allocation
//   past the capacity fails with kOutOfMemory, naming the sizes, like a real OOM.
//   The device records its peak allocation, for tests of the budget contract.
// - Copies: Queue::kCopy and Queue::kTransfer are each a thread throttled to the
//   configured link (PCIe is full duplex and GPUs have several DMA engines; the
//   planner's estimator likewise prices hidden-state crossings apart from the weight
//   stream). Copies take real time, so overlap with the CPU is real.
// - Kernels: Queue::kCompute is a thread running the CPU kernels (runtime/backends/cpu)
//   on a thread pool of its own, `compute_threads` wide, default 1: the emulated GPU
//   must not take the host's cores from the CPU sub-layers running at the same time
//   (a real GPU has its own silicon), and one thread keeps its speed steady enough for
//   the estimator loop (profile it with pshard-profile --backend emu, run it with the
//   same setting). Results are bit-identical to the CPU's: same kernels, same order.
#pragma once

#include "runtime/backends/cpu/cpu_ops.h"
#include "runtime/backends/emu/emu_arena.h"
#include "runtime/backends/emu/emu_queue.h"
#include "runtime/device/device.h"

#include <array>
#include <memory>

namespace pshard {

struct EmuOptions {
  uint64_t memory_bytes = 8ull << 30; // the hard capacity
  emu::Link link;                     // the emulated PCIe link, both directions
  int compute_threads = 1;
  std::string name = "emulated GPU";
};

class EmuDevice final : public Device {
public:
  static Result<std::unique_ptr<EmuDevice>> create(const EmuOptions& options);
  ~EmuDevice() override;

  DeviceInfo info() const override;
  Result<uint8_t*> allocate_arena(uint64_t bytes) override;
  Status resize_arena(uint64_t bytes) override;
  void free_arena() override;
  uint8_t* arena() const override { return arena_allocated_ ? arena_.base() : nullptr; }
  uint64_t arena_bytes() const override { return arena_allocated_ ? arena_.size() : 0; }

  // Host memory is the emulated device's memory too: kernels use host addresses as they
  // are (reads of it are not throttled; a real GPU pays the bus for them).
  Result<uint8_t*> map_host_memory(void* host, uint64_t) override {
    return static_cast<uint8_t*>(host);
  }
  void copy_to_device(Queue q, void* device_dst, const void* host_src, uint64_t bytes) override;
  void copy_to_host(Queue q, void* host_dst, const void* device_src, uint64_t bytes) override;
  Result<std::unique_ptr<DeviceEvent>> create_event() override;
  void record(DeviceEvent& event, Queue q) override;
  void wait(Queue q, const DeviceEvent& event) override;
  Status synchronize(const DeviceEvent& event) override;
  Status synchronize() override;
  Result<int64_t> completion_time_ns(const DeviceEvent& event) override;
  Ops& compute() override;

  // Emulation controls, for tests and benchmarks (not part of Device).
  const EmuOptions& options() const { return options_; }
  // Lowers (or raises, up to memory_bytes) the capacity future allocations must fit.
  Status set_capacity(uint64_t bytes);
  uint64_t capacity() const { return capacity_; }
  // The most memory allocated at once since creation or the last reset_peak().
  uint64_t peak_allocated_bytes() const { return peak_; }
  void reset_peak() { peak_ = arena_bytes(); }
  uint64_t bytes_copied(Queue q) const;

private:
  explicit EmuDevice(const EmuOptions& options);
  emu::EmuQueue& queue(Queue q) { return *queues_[static_cast<size_t>(q)]; }
  Status check_capacity(uint64_t bytes) const;
  void note_allocation();

  EmuOptions options_;
  uint64_t capacity_;
  uint64_t peak_ = 0;
  std::array<uint64_t, kQueueCount> copied_{};
  emu::EmuArena arena_;
  bool arena_allocated_ = false;
  emu::EventHub hub_;
  std::unique_ptr<ThreadPool> pool_;
  std::unique_ptr<CpuOps> cpu_;
  std::unique_ptr<Ops> ops_;
  std::array<std::unique_ptr<emu::EmuQueue>, kQueueCount> queues_;
};

} // namespace pshard
