// pshard-profile --backend cuda: the GPU's primitive timings (device_measurer.h says
// what each call means). Operations run through the backend's own Ops, so the profile
// measures the very kernels plans will run; device time comes from cudaEvents around
// the operation (repeated back to back when short), host-visible time (copies, the
// per-kernel launch overhead of a burst) from the host clock.
#pragma once

#include "runtime/backends/cuda/cuda_device.h"
#include "runtime/profile/device_measurer.h"

#include <atomic>
#include <functional>
#include <thread>
#include <vector>

namespace pshard {

class CudaMeasurer final : public DeviceMeasurer {
public:
  static Result<std::unique_ptr<CudaMeasurer>> create(const CudaOptions& options = {});
  ~CudaMeasurer() override;

  std::string backend_name() const override { return "cuda"; }
  Result<fb::GpuInfoT> describe() override;
  std::string matmul_op() const override { return "cuda:matvec<=8t/cublaslt-f32acc"; }
  // Decode (<= 8 tokens) splits the context into chunks of 256 merged after (attention.cu).
  std::string attention_op() const override { return "cuda:flash-tile32+decode-split256"; }
  Result<double> time_matmul(TensorType type, int64_t n_tokens, int64_t rows,
                             int64_t cols) override;
  Result<double> time_attention(const AttentionShape& shape) override;
  Result<double> time_device_read(uint64_t bytes) override;
  Result<double> time_launch_overhead() override;
  Result<double> time_transfer(Direction direction, HostMemoryKind memory, uint64_t bytes) override;
  // cuda_measurer_moe.cpp: the grouped MoE kernels (kernels/moe_grouped.cu) and a burst
  // of tiny kernels recorded and replayed as a CUDA graph, capture and update included.
  std::string grouped_expert_op() const override { return "cuda:moe-grouped-warp-row"; }
  Result<GroupedExpertTiming> time_grouped_experts(const GroupedExpertShape& shape) override;
  Result<double> time_graph_launch_overhead() override;
  Status start_copy_load(uint64_t chunk_bytes) override;
  Result<double> stop_copy_load() override;

private:
  explicit CudaMeasurer(std::unique_ptr<CudaDevice> d) : device_(std::move(d)) {}
  // Device memory of at least `bytes` (the arena, regrown when too small; the kernel
  // workspace follows it).
  Result<uint8_t*> scratch(uint64_t bytes);
  // Seconds of one run of the work `enqueue` puts on the compute stream, by events;
  // short work is repeated back to back and divided (see kMinTimedSeconds).
  Result<double> time_compute(const std::function<void()>& enqueue);
  Result<double> time_events(const std::function<void()>& enqueue, int repeats);
  // rows x cols of valid `type` weights at dst (device memory), on the legacy stream.
  static Status fill_matrix(uint8_t* dst, TensorType type, int64_t rows, int64_t cols);
  // Waits for the fills above before anything is timed on the device's queues.
  static Status settle_fills();

  std::unique_ptr<CudaDevice> device_;
  uint64_t scratch_bytes_ = 0;                          // of the arena, before the workspace
  // What the scratch holds, so consecutive calls of one cell (the suite times a cell by
  // calling it again and again) fill it once: {0, type, rows, cols} time_matmul's weights,
  // {1, type, tokens, experts, used, rows, cols, fused} a grouped cell's experts, inputs
  // and routes; empty when something else overwrote it.
  std::vector<int64_t> filled_;
  double grouped_distinct_ = 0; // the filled grouped cell's distinct experts per route set
  std::thread load_;
  std::atomic<bool> load_stop_{false};
  std::atomic<uint64_t> load_bytes_{0};
  double load_seconds_ = 0;
  Status load_status_;
};

} // namespace pshard
