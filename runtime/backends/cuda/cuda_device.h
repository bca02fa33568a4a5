// The CUDA backend: a Device on an NVIDIA GPU (device.h's table maps each concept).
//
//   PSHARD_ASSIGN_OR_RETURN(auto gpu, CudaDevice::create({}));   // fails cleanly without a GPU
//   PSHARD_ASSIGN_OR_RETURN(uint8_t* arena, gpu->allocate_arena(plan_bytes));
//   gpu->compute().matmul(w, x, 1, y);                           // enqueued on the compute stream
//   PSHARD_RETURN_IF_ERROR(gpu->synchronize());
//
// - Memory: allocate_arena makes the process's one device allocation: the plan's
//   arena plus, at its tail, the fixed kernel workspace (cuda_workspace.h,
//   CudaWorkspace::kBytes). arena_bytes() reports the plan's part.
// - Queues: one non-blocking stream each (cuda_streams_events.h).
// - Copies: the transfer engine (cuda_transfer.h): register the model's mapping
//   read-only, or stage through pinned buffers (PSHARD_CUDA_TRANSFER).
// - Failures: every enqueue keeps its first failure; synchronize returns it.
#pragma once

#include "runtime/backends/cuda/cublaslt_matmul.h"
#include "runtime/backends/cuda/cuda_arena.h"
#include "runtime/backends/cuda/cuda_ops.h"
#include "runtime/backends/cuda/cuda_streams_events.h"
#include "runtime/backends/cuda/cuda_transfer.h"
#include "runtime/device/device.h"

#include <memory>

namespace pshard {

struct CudaOptions {
  int device_ordinal = 0;
  cuda::TransferOptions transfer = cuda::transfer_options_from_env();
};

class CudaDevice final : public Device {
public:
  static Result<std::unique_ptr<CudaDevice>> create(const CudaOptions& options = {});
  ~CudaDevice() override;

  DeviceInfo info() const override { return info_; }
  Result<uint8_t*> allocate_arena(uint64_t bytes) override;
  void free_arena() override;
  uint8_t* arena() const override { return arena_.base(); }
  uint64_t arena_bytes() const override { return arena_.base() ? plan_bytes_ : 0; }

  Status register_host_memory(const void* host, uint64_t bytes) override;
  void unregister_host_memory(const void* host) override;
  Result<uint8_t*> map_host_memory(void* host, uint64_t bytes) override;

  void copy_to_device(Queue q, void* device_dst, const void* host_src, uint64_t bytes) override;
  void copy_to_host(Queue q, void* host_dst, const void* device_src, uint64_t bytes) override;
  Result<std::unique_ptr<DeviceEvent>> create_event() override;
  void record(DeviceEvent& event, Queue q) override;
  void wait(Queue q, const DeviceEvent& event) override;
  Status synchronize(const DeviceEvent& event) override;
  Status synchronize() override;
  Result<int64_t> completion_time_ns(const DeviceEvent& event) override;
  Ops& compute() override { return *ops_; }

  // For the measurer and tests (not part of Device).
  cudaStream_t stream(Queue q) const { return streams_.stream(q); }
  cuda::LtMatmul& lt() { return lt_; }
  const cudaDeviceProp& properties() const { return props_; }
  cuda::TransferMode transfer_mode() const { return transfer_.mode(); }
  // Bytes of the one device allocation: arena + workspace (0 without an arena).
  uint64_t device_allocation_bytes() const { return arena_.size(); }

private:
  explicit CudaDevice(const CudaOptions& options) : transfer_(options.transfer) {}
  void note(cudaError_t e, const char* what, int line);

  DeviceInfo info_;
  cudaDeviceProp props_{};
  cuda::StickyError sticky_;
  cuda::CudaStreams streams_;
  cuda::LtMatmul lt_;
  cuda::CudaArena arena_;
  uint64_t plan_bytes_ = 0;
  cuda::TransferEngine transfer_;
  std::unique_ptr<cuda::CudaOps> ops_;
};

} // namespace pshard
