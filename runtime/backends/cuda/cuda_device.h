// The CUDA backend: a Device on an NVIDIA GPU (device.h's table maps each concept).
//
//   PSHARD_ASSIGN_OR_RETURN(auto gpu, CudaDevice::create({}));   // fails cleanly without a GPU
//   PSHARD_ASSIGN_OR_RETURN(uint8_t* arena, gpu->allocate_arena(plan_bytes));
//   gpu->set_workspace(arena + workspace_offset, workspace_bytes); // the plan's buffer
//   gpu->compute().matmul(w, x, 1, y);                           // enqueued on the compute stream
//   PSHARD_RETURN_IF_ERROR(gpu->synchronize());
//
// - Memory: allocate_arena makes the process's one device allocation, exactly the
//   plan's arena, so the budget covers everything. The kernels' fixed scratch
//   (cuda_workspace.h, CudaWorkspace::kBytes) is carved from the plan's workspace
//   buffer, which the planner sizes from the profile's kernel_workspace_bytes; a
//   workspace smaller than that is refused (kernel_workspace_bytes() tells the session).
// - Queues: one non-blocking stream each (cuda_streams_events.h).
// - Copies: the transfer engine (cuda_transfer.h): register the model's mapping
//   read-only, or stage through pinned buffers (PSHARD_CUDA_TRANSFER).
// - Failures: every enqueue keeps its first failure; synchronize returns it.
#pragma once

#include "runtime/backends/cuda/cublaslt_matmul.h"
#include "runtime/backends/cuda/cuda_arena.h"
#include "runtime/backends/cuda/cuda_graphs.h"
#include "runtime/backends/cuda/cuda_ops.h"
#include "runtime/backends/cuda/cuda_streams_events.h"
#include "runtime/backends/cuda/cuda_transfer.h"
#include "runtime/device/device.h"

#include <memory>

namespace pshard {

struct CudaOptions {
  int device_ordinal = 0;
  cuda::TransferOptions transfer = cuda::transfer_options_from_env();
  bool graphs = cuda::graphs_enabled_from_env(); // decode passes as CUDA graphs
};

class CudaDevice final : public Device {
public:
  static Result<std::unique_ptr<CudaDevice>> create(const CudaOptions& options = {});
  ~CudaDevice() override;

  DeviceInfo info() const override { return info_; }
  Result<uint8_t*> allocate_arena(uint64_t bytes) override;
  void free_arena() override;
  uint8_t* arena() const override { return arena_.base(); }
  uint64_t arena_bytes() const override { return arena_.size(); }

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
  // Carves the kernel scratch from [device_ptr, device_ptr + bytes) (inside the arena);
  // too small or misaligned is a sticky error, and kernels needing it then fail cleanly.
  void set_workspace(uint8_t* device_ptr, uint64_t bytes) override;
  uint64_t kernel_workspace_bytes() const override { return cuda::CudaWorkspace::kBytes; }
  // Every group in one upload, two grouped launches and one download (cuda_split_moe.cpp).
  void run_expert_groups(const MoeDispatch& moe, std::span<const ExpertRowGroup> groups,
                         const float* host_in, float* host_out) override;
  // Captures the compute stream (cuda_graphs.h) for passes of at most
  // kernels::kMatvecMaxTokens tokens (no cuBLASLt) once a workspace is set.
  bool begin_graph(uint64_t key, int64_t n_tokens) override;
  bool end_graph(bool replay) override;

  // For the measurer and tests (not part of Device).
  cudaStream_t stream(Queue q) const { return streams_.stream(q); }
  cuda::LtMatmul& lt() { return lt_; }
  const cudaDeviceProp& properties() const { return props_; }
  cuda::TransferMode transfer_mode() const { return transfer_.mode(); }
  // Where the kernel scratch is now (null until set_workspace).
  uint8_t* workspace() const { return workspace_; }
  // Counts of instantiated, updated and launched pass graphs.
  const cuda::PassGraphs& graphs() const { return graphs_; }

private:
  explicit CudaDevice(const CudaOptions& options)
      : transfer_(options.transfer), graphs_(options.graphs) {}
  void note(cudaError_t e, const char* what, int line);
  void drop_workspace();

  DeviceInfo info_;
  cudaDeviceProp props_{};
  cuda::StickyError sticky_;
  cuda::CudaStreams streams_;
  cuda::LtMatmul lt_;
  cuda::CudaArena arena_;
  uint8_t* workspace_ = nullptr;
  uint64_t workspace_bytes_ = 0;
  cuda::TransferEngine transfer_;
  std::unique_ptr<cuda::CudaOps> ops_;
  cuda::PassGraphs graphs_;
};

} // namespace pshard
