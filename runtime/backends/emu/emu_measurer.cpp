#include "runtime/backends/emu/emu_measurer.h"

#include "runtime/kernels/quantize.h"

#include <algorithm>
#include <chrono>
#include <cstring>

namespace pshard {
namespace {

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// Fills `bytes` of device memory with valid weights of `type` (finite scales), so the
// kernels time real arithmetic rather than NaN paths.
Status fill_weights(TensorType type, uint8_t* dst, int64_t rows, int64_t cols) {
  std::vector<float> row(static_cast<size_t>(cols));
  for (int64_t c = 0; c < cols; ++c)
    row[static_cast<size_t>(c)] = static_cast<float>((c * 7919) % 257) / 257.0f - 0.5f;
  PSHARD_ASSIGN_OR_RETURN(size_t row_bytes, tensor_bytes(type, cols));
  std::vector<uint8_t> q(row_bytes);
  PSHARD_RETURN_IF_ERROR(quantize_row(type, row.data(), q.data(), cols));
  for (int64_t r = 0; r < rows; ++r)
    std::memcpy(dst + static_cast<size_t>(r) * row_bytes, q.data(), row_bytes);
  return Status::ok_status();
}

} // namespace

Result<std::unique_ptr<EmuMeasurer>> EmuMeasurer::create(const EmuOptions& options) {
  PSHARD_ASSIGN_OR_RETURN(auto device, EmuDevice::create(options));
  return std::unique_ptr<EmuMeasurer>(new EmuMeasurer(std::move(device)));
}

EmuMeasurer::~EmuMeasurer() {
  if (load_running_)
    (void)stop_copy_load();
}

Result<fb::GpuInfoT> EmuMeasurer::describe() {
  fb::GpuInfoT g;
  const EmuOptions& o = device_->options();
  g.name = o.name + " (" + std::to_string(o.compute_threads) + " compute thread" +
           (o.compute_threads == 1 ? "" : "s") + ", PCIe " +
           std::to_string(o.link.bytes_per_s / 1e9).substr(0, 5) + " GB/s, " +
           std::to_string(static_cast<int>(o.link.latency_s * 1e6)) + " us)";
  g.vram_bytes = o.memory_bytes;
  PSHARD_ASSIGN_OR_RETURN(double read_s, time_device_read(64ull << 20));
  g.vram_bandwidth_bytes_per_s = static_cast<double>(64ull << 20) / read_s;
  g.driver_version = "emu";
  g.toolkit_version = "pshard emu";
  g.source = fb::Provenance::Measured;
  return g;
}

std::string EmuMeasurer::matmul_op() const {
  return "emu:cpu-matmul/" + std::to_string(device_->options().compute_threads) + "t";
}

std::string EmuMeasurer::attention_op() const {
  return "emu:cpu-attention/" + std::to_string(device_->options().compute_threads) + "t";
}

Result<uint8_t*> EmuMeasurer::scratch(uint64_t bytes) {
  if (!device_->arena())
    return device_->allocate_arena(bytes);
  if (device_->arena_bytes() < bytes)
    PSHARD_RETURN_IF_ERROR(device_->resize_arena(bytes));
  return device_->arena();
}

Result<double> EmuMeasurer::time_on_device(const std::function<void()>& work) {
  PSHARD_RETURN_IF_ERROR(device_->synchronize());
  const auto t0 = std::chrono::steady_clock::now();
  work();
  PSHARD_RETURN_IF_ERROR(device_->synchronize());
  return seconds_since(t0);
}

Result<double> EmuMeasurer::time_back_to_back(const std::function<void()>& work) {
  // Enough repetitions for ~2 ms of work, so one round trip is a few percent at most.
  constexpr double kBatchSeconds = 2e-3;
  constexpr int kMaxReps = 512;
  PSHARD_ASSIGN_OR_RETURN(double single, time_on_device(work));
  const int reps = single <= 0 ? kMaxReps
                               : static_cast<int>(std::clamp(kBatchSeconds / single, 1.0,
                                                             static_cast<double>(kMaxReps)));
  PSHARD_ASSIGN_OR_RETURN(double batch, time_on_device([&] {
                            for (int i = 0; i < reps; ++i)
                              work();
                          }));
  return batch / reps;
}

Result<double> EmuMeasurer::time_matmul(TensorType type, int64_t n, int64_t rows, int64_t cols) {
  // A pass reads each matrix once, from DRAM (the emulated VRAM is host memory and
  // models outgrow the LLC), so small matrices are timed in copies filling kColdHostFootprint,
  // one after another, never a cache-hot re-read of the same one.
  PSHARD_ASSIGN_OR_RETURN(size_t row_bytes, tensor_bytes(type, cols));
  const uint64_t w_bytes = (row_bytes * static_cast<uint64_t>(rows) + 63) / 64 * 64;
  const uint64_t copies = (kColdHostFootprint + w_bytes - 1) / w_bytes;
  const uint64_t x_bytes = static_cast<uint64_t>(n * cols) * sizeof(float);
  const uint64_t y_bytes = static_cast<uint64_t>(n * rows) * sizeof(float);
  PSHARD_ASSIGN_OR_RETURN(uint8_t * base, scratch(copies * w_bytes + x_bytes + y_bytes + 64));
  PSHARD_RETURN_IF_ERROR(fill_weights(type, base, rows, cols));
  for (uint64_t c = 1; c < copies; ++c)
    std::memcpy(base + c * w_bytes, base, w_bytes);
  auto* x = reinterpret_cast<float*>(base + copies * w_bytes);
  for (int64_t i = 0; i < n * cols; ++i)
    x[i] = 0.01f * static_cast<float>(i % 100);
  float* y = x + n * cols;
  uint64_t next = 0;
  return time_back_to_back([&] {
    const MatrixView w{type, base + (next++ % copies) * w_bytes, rows, cols, row_bytes};
    device_->compute().matmul(w, x, n, y);
  });
}

Result<double> EmuMeasurer::time_attention(const AttentionShape& s) {
  const int64_t kv_dim = s.n_kv_heads * s.head_dim, q_dim = s.n_heads * s.head_dim;
  const uint64_t kv_floats = static_cast<uint64_t>((s.ctx_len + s.n_tokens) * kv_dim);
  const uint64_t floats = 2 * kv_floats + 2 * static_cast<uint64_t>(s.n_tokens * q_dim);
  PSHARD_ASSIGN_OR_RETURN(uint8_t * base, scratch(floats * sizeof(float)));
  auto* f = reinterpret_cast<float*>(base);
  for (uint64_t i = 0; i < floats; ++i)
    f[i] = 0.001f * static_cast<float>(i % 997);
  const KvView kv{base, base + kv_floats * sizeof(float), s.ctx_len + s.n_tokens, kv_dim};
  float* q = f + 2 * kv_floats;
  float* out = q + s.n_tokens * q_dim;
  const pshard::AttentionDims dims{s.n_heads, s.n_kv_heads, s.head_dim};
  return time_back_to_back(
      [&] { device_->compute().attention(q, kv, dims, s.ctx_len, s.n_tokens, out); });
}

Result<double> EmuMeasurer::time_device_read(uint64_t bytes) {
  // The CPU matmul streaming an F32 matrix once: the emulated device's read roof.
  constexpr int64_t kCols = 4096;
  const int64_t rows = std::max<int64_t>(1, static_cast<int64_t>(bytes / (kCols * sizeof(float))));
  return time_matmul(TensorType::kF32, 1, rows, kCols);
}

Result<double> EmuMeasurer::time_launch_overhead() {
  PSHARD_ASSIGN_OR_RETURN(uint8_t * base, scratch(4096));
  auto* f = reinterpret_cast<float*>(base);
  return time_back_to_back([&] { device_->compute().add(f, f + 1, 1); });
}

Result<double> EmuMeasurer::time_transfer(Direction direction, HostMemoryKind, uint64_t bytes) {
  // Host memory kinds are the same memory to the emulated link.
  PSHARD_ASSIGN_OR_RETURN(uint8_t * dev, scratch(bytes));
  if (host_.size() < bytes)
    host_.assign(bytes, 1);
  return time_on_device([&] {
    if (direction == Direction::kHostToDevice)
      device_->copy_to_device(Queue::kCopy, dev, host_.data(), bytes);
    else
      device_->copy_to_host(Queue::kCopy, host_.data(), dev, bytes);
  });
}

Status EmuMeasurer::start_copy_load(uint64_t chunk_bytes) {
  if (load_running_)
    return invalid_argument("a copy load is already running");
  PSHARD_ASSIGN_OR_RETURN(uint8_t * dev, scratch(chunk_bytes));
  if (host_.size() < chunk_bytes)
    host_.assign(chunk_bytes, 1);
  load_running_ = true;
  load_bytes_ = 0;
  load_thread_ = std::thread([this, dev, chunk_bytes] {
    const auto t0 = std::chrono::steady_clock::now();
    while (load_running_) {
      device_->copy_to_device(Queue::kCopy, dev, host_.data(), chunk_bytes);
      (void)device_->synchronize();
      load_bytes_ += chunk_bytes;
    }
    load_seconds_ = seconds_since(t0);
  });
  return Status::ok_status();
}

Result<double> EmuMeasurer::stop_copy_load() {
  if (!load_running_)
    return invalid_argument("no copy load is running");
  load_running_ = false;
  load_thread_.join();
  return load_seconds_ > 0 ? static_cast<double>(load_bytes_) / load_seconds_ : 0.0;
}

} // namespace pshard
