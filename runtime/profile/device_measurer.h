// What a device backend gives pshard-profile: primitive timings on its device.
//
// The suite in tools/pshard-profile owns the grid (weight types, token counts, sizes,
// transfer sizes), repetitions, medians and time budgets, and writes the profile
// tables; a backend answers only "how long does this one operation take here". So the
// CUDA backend (cuBLASLt matmuls, cudaMemcpyAsync from pinned and pageable memory) and
// the emulated GPU (host memory, a copy engine throttled to a configured PCIe bandwidth)
// each implement a handful of small functions, and both are profiled identically.
//
//   class CudaMeasurer final : public DeviceMeasurer { ... };   // runtime/backends/cuda
//   std::unique_ptr<DeviceMeasurer> m = ...;
//   PSHARD_ASSIGN_OR_RETURN(double s, m->time_transfer(Direction::kHostToDevice,
//                                                      HostMemoryKind::kPinned, 64 << 20));
//
// Every time_* call returns the seconds of ONE operation, synchronised (the operation
// has finished on the device when the call returns), with any allocation and setup done
// before the clock starts. An operation too short to time alone is run several times
// back to back inside one synchronize and divided, so small operations are not charged
// a synchronize round trip. The suite repeats calls and takes medians itself.
//
// Optional parts: time_attention, time_launch_overhead, time_grouped_experts and
// time_graph_launch_overhead may return kUnsupported (the last two do unless a backend
// overrides them: the emulated GPU has no grouped MoE kernel and no graphs); the suite
// then leaves those tables empty. Everything else is required.
#pragma once

#include "runtime/core/status.h"
#include "runtime/profile/profile_lookup.h"
#include "runtime/tensor/tensor_type.h"
#include "schemas/profile_generated.h"

#include <cstdint>
#include <string>

namespace pshard {

// Host memory that timed matmuls rotate through, in copies of the matrix: a pass reads
// each matrix once from DRAM, so a measurement must not re-read one from the cache.
// At least 4x the last-level cache of most client CPUs.
inline constexpr uint64_t kColdHostFootprint = 128ull << 20;

struct AttentionShape {
  int64_t ctx_len = 0;
  int64_t n_tokens = 1;
  int64_t n_heads = 32;
  int64_t n_kv_heads = 8;
  int64_t head_dim = 128;
};

// One grouped MoE product (schemas/profile.fbs's GroupedExpertPoint): n_tokens tokens,
// each routed to n_expert_used of n_expert experts, every route in ONE launch; each
// expert's matrix is rows x cols of `type`. fused_gate_up: two such matrices per route
// (gate and up, SiLU-multiplied: rows = n_ff, cols = n_embd); otherwise one (down).
struct GroupedExpertShape {
  TensorType type = TensorType::kQ4_0;
  int64_t n_tokens = 1;
  int64_t n_expert = 8;
  int64_t n_expert_used = 2;
  int64_t rows = 0;
  int64_t cols = 0;
  bool fused_gate_up = false;
};

struct GroupedExpertTiming {
  double seconds = 0;           // one launch
  int64_t distinct_experts = 0; // experts the timed routes touched (mean over the runs)
};

class DeviceMeasurer {
public:
  virtual ~DeviceMeasurer() = default;

  // "cuda", "emu"
  virtual std::string backend_name() const = 0;
  // The device as the profile records it (name, compute capability, VRAM, PCIe link,
  // driver and toolkit versions), source = Measured.
  virtual Result<fb::GpuInfoT> describe() = 0;
  // Identifiers of the timed kernels, stored so a new kernel can be told apart.
  virtual std::string matmul_op() const = 0;
  virtual std::string attention_op() const = 0;

  // y[n_tokens x rows] = x * W^T with W (rows x cols of `type`) resident on the device.
  virtual Result<double> time_matmul(TensorType type, int64_t n_tokens, int64_t rows,
                                     int64_t cols) = 0;
  // Optional: one layer's attention with the KV cache resident on the device.
  virtual Result<double> time_attention(const AttentionShape& shape) = 0;
  // Reading `bytes` of device memory once (its bandwidth roof).
  virtual Result<double> time_device_read(uint64_t bytes) = 0;
  // Optional: the cost of one kernel in a stream of back-to-back tiny kernels (what the
  // estimator charges per kernel): a burst of them, one synchronize, divided — not one
  // launch between two synchronizes, which is a host round trip.
  virtual Result<double> time_launch_overhead() = 0;
  // Optional: the grouped MoE kernel's identifier and one launch of it, the experts
  // resident on the device and the routes drawn uniformly (each token k distinct
  // experts), different routes each repetition so the experts are read from memory.
  virtual std::string grouped_expert_op() const { return {}; }
  virtual Result<GroupedExpertTiming> time_grouped_experts(const GroupedExpertShape& shape) {
    (void)shape;
    return unsupported(backend_name() + " has no grouped MoE kernel");
  }
  // Optional: as time_launch_overhead, but the burst is captured once into a CUDA graph
  // and replayed: the per-kernel cost a replayed decode pass pays.
  virtual Result<double> time_graph_launch_overhead() {
    return unsupported(backend_name() + " has no kernel graphs");
  }
  // One copy of `bytes` between host memory of the given kind and the device.
  virtual Result<double> time_transfer(Direction direction, HostMemoryKind memory,
                                       uint64_t bytes) = 0;

  // Host-to-device copies of `chunk_bytes` from pinned memory, back to back, until
  // stop_copy_load(): the load under which the suite measures the CPU figures again.
  virtual Status start_copy_load(uint64_t chunk_bytes) = 0;
  // Stops the copies; returns the bytes/s they achieved while running.
  virtual Result<double> stop_copy_load() = 0;
};

} // namespace pshard
