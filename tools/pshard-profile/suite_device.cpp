// The device half of the suite, driven through DeviceMeasurer so the CUDA and emulated
// backends are profiled by the same grid: GPU matmul and attention, device read
// bandwidth, launch overhead, grouped MoE cells and the launch overhead inside a graph
// (suite_grouped.cpp), transfers per size both ways from pinned and pageable
// memory, the transfers again while the CPU computes, and both processors computing at
// once (suite_beside.cpp).
#include "runtime/kernels/matmul.h"
#include "tools/pshard-profile/background_load.h"
#include "tools/pshard-profile/cpu_matmul.h"
#include "tools/pshard-profile/progress.h"
#include "tools/pshard-profile/suite.h"
#include "tools/pshard-profile/timing.h"

#include <memory>

namespace pshard::profiling {
namespace {

Status measure_transfers(const SuiteGrid& grid, DeviceMeasurer& device, Progress& progress,
                         double unit_s, std::vector<std::unique_ptr<fb::TransferPointT>>& out,
                         bool loaded) {
  for (Direction dir : {Direction::kHostToDevice, Direction::kDeviceToHost})
    for (HostMemoryKind mem : {HostMemoryKind::kPinned, HostMemoryKind::kPageable})
      for (uint64_t bytes : grid.transfer_bytes) {
        progress.step(std::string("transfer ") +
                      (dir == Direction::kHostToDevice ? "h2d " : "d2h ") +
                      (mem == HostMemoryKind::kPinned ? "pinned " : "pageable ") +
                      std::to_string(bytes) + (loaded ? " (CPU busy)" : ""));
        PSHARD_ASSIGN_OR_RETURN(Timing t,
                                time_device([&] { return device.time_transfer(dir, mem, bytes); },
                                            kTransferUnits * unit_s));
        auto p = std::make_unique<fb::TransferPointT>();
        p->direction = static_cast<fb::TransferDirection>(dir);
        p->memory = static_cast<fb::HostMemory>(mem);
        p->bytes = bytes;
        p->seconds = t.seconds;
        p->bytes_per_s = static_cast<double>(bytes) / t.seconds;
        p->repetitions = t.repetitions;
        out.push_back(std::move(p));
        progress.advance(kTransferUnits);
      }
  return Status::ok_status();
}

} // namespace

Result<fb::MatmulPointT> time_device_matmul(DeviceMeasurer& device, TensorType type, uint64_t bytes,
                                            int64_t cols, int64_t n, double budget_s) {
  PSHARD_ASSIGN_OR_RETURN(size_t row_bytes, tensor_bytes(type, cols));
  const int64_t rows = std::max<int64_t>(1, static_cast<int64_t>(bytes / row_bytes));
  PSHARD_ASSIGN_OR_RETURN(
      Timing t, time_device([&] { return device.time_matmul(type, n, rows, cols); }, budget_s));
  fb::MatmulPointT p;
  p.weight_type = static_cast<fb::WeightType>(type);
  p.n_tokens = static_cast<uint32_t>(n);
  p.matrix_bytes = bytes;
  p.rows = static_cast<uint32_t>(rows);
  p.cols = static_cast<uint32_t>(cols);
  p.seconds = t.seconds;
  p.flops_per_s = 2.0 * static_cast<double>(rows * cols * n) / t.seconds;
  p.repetitions = t.repetitions;
  return p;
}

Status measure_device(const SuiteGrid& grid, DeviceMeasurer& device, Progress& progress,
                      double unit_s, fb::ProfileT& profile) {
  auto gpu = std::make_unique<fb::GpuMeasurementsT>();
  gpu->source = fb::Provenance::Measured;
  gpu->matmul_op = device.matmul_op();
  gpu->attention_op = device.attention_op();
  auto time_matmul = [&](TensorType type, uint64_t bytes, int64_t cols, int64_t n) -> Status {
    progress.step(std::string("gpu matmul ") + tensor_type_name(type) + " n=" + std::to_string(n) +
                  (cols == kMatmulCols ? "" : " cols=" + std::to_string(cols)));
    PSHARD_ASSIGN_OR_RETURN(fb::MatmulPointT p, time_device_matmul(device, type, bytes, cols, n,
                                                                   kMatmulUnits * unit_s));
    gpu->matmul.push_back(std::make_unique<fb::MatmulPointT>(std::move(p)));
    progress.advance(kMatmulUnits);
    return Status::ok_status();
  };
  for (TensorType type : grid.types) {
    for (uint64_t bytes : grid.matrix_bytes)
      for (int64_t n : grid.tokens)
        PSHARD_RETURN_IF_ERROR(time_matmul(type, bytes, kMatmulCols, n));
    // Other row lengths on the largest bucket (see SuiteGrid::extra_cols).
    for (int64_t cols : grid.extra_cols)
      for (int64_t n : grid.extra_tokens)
        PSHARD_RETURN_IF_ERROR(time_matmul(type, grid.matrix_bytes.back(), cols, n));
  }
  bool attention_supported = true;
  for (int64_t ctx : grid.ctx_lens)
    for (int64_t n : grid.attention_tokens) {
      if (!attention_supported)
        break;
      AttentionShape shape;
      shape.ctx_len = ctx;
      shape.n_tokens = n;
      progress.step("gpu attention ctx=" + std::to_string(ctx) + " n=" + std::to_string(n));
      Result<Timing> t =
          time_device([&] { return device.time_attention(shape); }, kAttentionUnits * unit_s);
      progress.advance(kAttentionUnits);
      if (!t.ok() && t.status().code() == StatusCode::kUnsupported) {
        attention_supported = false; // optional
        break;
      }
      PSHARD_RETURN_IF_ERROR(t.status());
      auto p = std::make_unique<fb::AttentionPointT>();
      p->ctx_len = static_cast<uint32_t>(ctx);
      p->n_tokens = static_cast<uint32_t>(n);
      p->n_heads = static_cast<uint32_t>(shape.n_heads);
      p->n_kv_heads = static_cast<uint32_t>(shape.n_kv_heads);
      p->head_dim = static_cast<uint32_t>(shape.head_dim);
      p->seconds = t->seconds;
      p->flops_per_s = 4.0 * double(n * ctx * shape.head_dim * shape.n_heads) / t->seconds;
      p->bytes_per_s = 2.0 * double(ctx * shape.n_kv_heads * shape.head_dim * 4) / t->seconds;
      p->repetitions = t->repetitions;
      gpu->attention.push_back(std::move(p));
    }
  progress.step("gpu read bandwidth");
  PSHARD_ASSIGN_OR_RETURN(
      Timing read, time_device([&] { return device.time_device_read(grid.read_buffer_bytes); },
                               kReadUnits * unit_s));
  gpu->read_bandwidth_bytes_per_s = static_cast<double>(grid.read_buffer_bytes) / read.seconds;
  Result<Timing> launch = time_device([&] { return device.time_launch_overhead(); }, unit_s);
  if (launch.ok())
    gpu->launch_overhead_s = launch->seconds;
  else if (launch.status().code() != StatusCode::kUnsupported)
    return launch.status();
  progress.advance(kReadUnits + 1);
  PSHARD_RETURN_IF_ERROR(measure_grouped_experts(grid, device, progress, unit_s, *gpu));
  profile.gpu = std::move(gpu);

  profile.transfers = std::make_unique<fb::TransferMeasurementsT>();
  profile.transfers->source = fb::Provenance::Measured;
  PSHARD_RETURN_IF_ERROR(
      measure_transfers(grid, device, progress, unit_s, profile.transfers->points, false));

  // The same transfers while the CPU decodes on every thread.
  PSHARD_ASSIGN_OR_RETURN(MatmulWeights w,
                          MatmulWeights::make(TensorType::kQ4_0, grid.matrix_bytes.back()));
  ThreadPool pool(grid.threads.back());
  std::vector<float> x(static_cast<size_t>(w.cols)), y(static_cast<size_t>(w.rows));
  ComputeLoad compute([&] {
    MatrixView view{w.type, w.data.data(), w.rows, w.cols, w.row_bytes};
    matmul(view, x.data(), 1, y.data(), pool);
  });
  compute.start();
  Status loaded =
      measure_transfers(grid, device, progress, unit_s, profile.under_load->transfers, true);
  compute.stop();
  PSHARD_RETURN_IF_ERROR(loaded);
  return measure_beside(grid, device, progress, unit_s, profile);
}

} // namespace pshard::profiling
