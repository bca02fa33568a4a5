#include "runtime/backends/cuda/cuda_measurer.h"

#include "runtime/kernels/quantize.h"

#include <algorithm>
#include <chrono>
#include <vector>

namespace pshard {
namespace {

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// Back-to-back tiny kernels timed for the launch overhead: enough that one host
// synchronize (tens of microseconds) adds well under a percent per kernel.
constexpr int kLaunchBurst = 200;
// An operation shorter than this is repeated back to back between one pair of events,
// so what is timed is its cost in a stream of work (as in a forward pass), not the
// idle GPU waiting for one launch.
constexpr double kMinTimedSeconds = 200e-6;
constexpr int kMaxRepeats = 64;

// Pinned or pageable host memory for a copy.
struct HostBuffer {
  HostBuffer(uint64_t bytes, bool pinned) : pinned_(pinned) {
    if (pinned) {
      void* p = nullptr;
      if (cudaMallocHost(&p, bytes) == cudaSuccess)
        data = static_cast<uint8_t*>(p);
    } else {
      pageable_.assign(bytes, 1);
      data = pageable_.data();
    }
  }
  ~HostBuffer() {
    if (pinned_ && data)
      (void)cudaFreeHost(data);
  }
  uint8_t* data = nullptr;

private:
  bool pinned_;
  std::vector<uint8_t> pageable_;
};

} // namespace

Result<std::unique_ptr<CudaMeasurer>> CudaMeasurer::create(const CudaOptions& options) {
  PSHARD_ASSIGN_OR_RETURN(auto device, CudaDevice::create(options));
  return std::unique_ptr<CudaMeasurer>(new CudaMeasurer(std::move(device)));
}

CudaMeasurer::~CudaMeasurer() {
  if (load_.joinable())
    (void)stop_copy_load();
}

Result<fb::GpuInfoT> CudaMeasurer::describe() {
  const cudaDeviceProp& p = device_->properties();
  fb::GpuInfoT g;
  g.name = p.name;
  g.compute_capability_major = static_cast<uint32_t>(p.major);
  g.compute_capability_minor = static_cast<uint32_t>(p.minor);
  g.sm_count = static_cast<uint32_t>(p.multiProcessorCount);
  g.vram_bytes = p.totalGlobalMem;
  PSHARD_ASSIGN_OR_RETURN(double read_s, time_device_read(256ull << 20));
  g.vram_bandwidth_bytes_per_s = static_cast<double>(256ull << 20) / read_s;
  int driver = 0;
  (void)cudaDriverGetVersion(&driver);
  g.driver_version =
      "CUDA driver API " + std::to_string(driver / 1000) + "." + std::to_string(driver % 1000 / 10);
  g.toolkit_version = "CUDA runtime " + std::to_string(CUDART_VERSION / 1000) + "." +
                      std::to_string(CUDART_VERSION % 1000 / 10);
  g.source = fb::Provenance::Measured;
  // Every GPU plan must leave the kernels this scratch (cuda_workspace.h).
  g.kernel_workspace_bytes = cuda::CudaWorkspace::kBytes;
  return g; // PCIe generation and lanes need NVML, which pshard does not link: left 0
}

// The measurer's own arena (no plan, no budget): `bytes` for the operands, then the
// kernel workspace, handed to set_workspace as the executor hands a plan's buffer.
Result<uint8_t*> CudaMeasurer::scratch(uint64_t bytes) {
  const uint64_t operands = (bytes + 255) / 256 * 256;
  if (device_->arena() != nullptr && scratch_bytes_ >= operands)
    return device_->arena();
  device_->free_arena();
  filled_.clear();
  scratch_bytes_ = 0;
  const uint64_t size = std::max<uint64_t>(operands, 64ull << 20);
  PSHARD_ASSIGN_OR_RETURN(uint8_t * base,
                          device_->allocate_arena(size + cuda::CudaWorkspace::kBytes));
  device_->set_workspace(base + size, cuda::CudaWorkspace::kBytes);
  PSHARD_RETURN_IF_ERROR(device_->synchronize());
  scratch_bytes_ = size;
  return base;
}

// The fills (cudaMemcpy, cudaMemset) run on the legacy default stream, which the device's
// non-blocking queues do not wait for: a memset is asynchronous and a pageable upload may
// return before its DMA lands, so the timed kernels could read operands still being
// written.
Status CudaMeasurer::settle_fills() { return PSHARD_CUDA_STATUS(cudaDeviceSynchronize()); }

// Valid weights (finite scales): one quantized row uploaded, doubled on the device.
Status CudaMeasurer::fill_matrix(uint8_t* dst, TensorType type, int64_t rows, int64_t cols) {
  PSHARD_ASSIGN_OR_RETURN(size_t row_bytes, tensor_bytes(type, cols));
  const uint64_t w_bytes = static_cast<uint64_t>(rows) * row_bytes;
  std::vector<float> row(static_cast<size_t>(cols));
  for (int64_t c = 0; c < cols; ++c)
    row[static_cast<size_t>(c)] = static_cast<float>((c * 7919) % 257) / 257.0f - 0.5f;
  std::vector<uint8_t> q(row_bytes);
  PSHARD_RETURN_IF_ERROR(quantize_row(type, row.data(), q.data(), cols));
  PSHARD_CUDA_RETURN_IF_ERROR(cudaMemcpy(dst, q.data(), row_bytes, cudaMemcpyHostToDevice));
  for (uint64_t done = row_bytes; done < w_bytes; done *= 2)
    PSHARD_CUDA_RETURN_IF_ERROR(
        cudaMemcpy(dst + done, dst, std::min(done, w_bytes - done), cudaMemcpyDeviceToDevice));
  return Status::ok_status();
}

// Device seconds of `repeats` back-to-back runs of `enqueue`, by events.
Result<double> CudaMeasurer::time_events(const std::function<void()>& enqueue, int repeats) {
  PSHARD_RETURN_IF_ERROR(device_->synchronize());
  PSHARD_ASSIGN_OR_RETURN(auto start, device_->create_event());
  PSHARD_ASSIGN_OR_RETURN(auto stop, device_->create_event());
  device_->record(*start, Queue::kCompute);
  for (int r = 0; r < repeats; ++r)
    enqueue();
  device_->record(*stop, Queue::kCompute);
  PSHARD_RETURN_IF_ERROR(device_->synchronize(*stop));
  float ms = 0;
  PSHARD_CUDA_RETURN_IF_ERROR(cudaEventElapsedTime(&ms, static_cast<cuda::CudaEvent&>(*start).event,
                                                   static_cast<cuda::CudaEvent&>(*stop).event));
  return static_cast<double>(ms) * 1e-3;
}

// Seconds of one run. A short operation is timed again as several back-to-back runs
// and divided, so the launch latency of an idle GPU is not charged to it.
Result<double> CudaMeasurer::time_compute(const std::function<void()>& enqueue) {
  PSHARD_ASSIGN_OR_RETURN(double once, time_events(enqueue, 1));
  if (once >= kMinTimedSeconds)
    return once;
  const int repeats = static_cast<int>(
      std::clamp(kMinTimedSeconds / std::max(once, 1e-7), 2.0, static_cast<double>(kMaxRepeats)));
  PSHARD_ASSIGN_OR_RETURN(double all, time_events(enqueue, repeats));
  return all / repeats;
}

Result<double> CudaMeasurer::time_matmul(TensorType type, int64_t n_tokens, int64_t rows,
                                         int64_t cols) {
  // A pass reads each matrix once, from VRAM: the repetitions rotate through copies
  // filling more than any GPU's L2 (50 MB on an H100/H200, 72–96 MB on RTX 40/50), so a
  // small matrix is not timed from the cache, faster than any pass will see it.
  constexpr uint64_t kColdFootprint = 256ull << 20;
  PSHARD_ASSIGN_OR_RETURN(size_t row_bytes, tensor_bytes(type, cols));
  const uint64_t w_bytes = static_cast<uint64_t>(rows) * row_bytes;
  const uint64_t w_stride = (w_bytes + 255) / 256 * 256;
  const uint64_t copies = (kColdFootprint + w_stride - 1) / w_stride;
  const uint64_t x_off = copies * w_stride;
  const uint64_t y_off = x_off + (static_cast<uint64_t>(n_tokens * cols) * 4 + 255) / 256 * 256;
  PSHARD_ASSIGN_OR_RETURN(uint8_t * base,
                          scratch(y_off + static_cast<uint64_t>(n_tokens * rows) * 4));
  const std::vector<int64_t> key = {0, static_cast<int64_t>(type), rows, cols};
  if (filled_ != key) {
    // Valid weights in the first copy, then copied into the others.
    PSHARD_RETURN_IF_ERROR(fill_matrix(base, type, rows, cols));
    for (uint64_t c = 1; c < copies; ++c)
      PSHARD_CUDA_RETURN_IF_ERROR(
          cudaMemcpy(base + c * w_stride, base, w_bytes, cudaMemcpyDeviceToDevice));
    PSHARD_CUDA_RETURN_IF_ERROR(
        cudaMemset(base + x_off, 0, static_cast<size_t>(n_tokens * cols) * 4));
    PSHARD_RETURN_IF_ERROR(settle_fills());
    filled_ = key;
  }
  auto* x = reinterpret_cast<const float*>(base + x_off);
  auto* y = reinterpret_cast<float*>(base + y_off);
  uint64_t next = 0;
  return time_compute([&] {
    const MatrixView w{type, base + (next++ % copies) * w_stride, rows, cols, row_bytes};
    device_->compute().matmul(w, x, n_tokens, y);
  });
}

Result<double> CudaMeasurer::time_attention(const AttentionShape& s) {
  const int64_t kv_dim = s.n_kv_heads * s.head_dim, q_dim = s.n_heads * s.head_dim;
  const uint64_t cache = static_cast<uint64_t>(s.ctx_len * kv_dim) * 4;
  const uint64_t act = static_cast<uint64_t>(s.n_tokens * q_dim) * 4;
  PSHARD_ASSIGN_OR_RETURN(uint8_t * base, scratch(2 * cache + 2 * act + 1024));
  filled_.clear();
  PSHARD_CUDA_RETURN_IF_ERROR(cudaMemset(base, 0, 2 * cache + 2 * act));
  PSHARD_RETURN_IF_ERROR(settle_fills());
  KvView kv{base, base + cache, s.ctx_len, kv_dim};
  auto* q = reinterpret_cast<const float*>(base + 2 * cache);
  auto* out = reinterpret_cast<float*>(base + 2 * cache + act);
  const AttentionDims dims{s.n_heads, s.n_kv_heads, s.head_dim};
  const int64_t pos0 = std::max<int64_t>(0, s.ctx_len - s.n_tokens);
  return time_compute([&] { device_->compute().attention(q, kv, dims, pos0, s.n_tokens, out); });
}

// A device-to-device copy of bytes/2 reads bytes/2 and writes bytes/2: `bytes` of
// traffic, the bandwidth roof that memory-bound kernels see.
Result<double> CudaMeasurer::time_device_read(uint64_t bytes) {
  PSHARD_ASSIGN_OR_RETURN(uint8_t * base, scratch(bytes));
  filled_.clear();
  const uint64_t half = bytes / 2;
  cudaStream_t s = device_->stream(Queue::kCompute);
  return time_compute(
      [&] { (void)cudaMemcpyAsync(base + half, base, half, cudaMemcpyDeviceToDevice, s); });
}

// The estimator multiplies this by the kernels of a sub-layer, which run back to back on
// one stream: so it is the amortized cost of one kernel in a burst of the smallest
// kernel the backend has (host launch and device turnaround, whichever bounds), by the
// host clock over the whole burst — not one launch between two synchronizes, which
// would charge every kernel a host round trip.
Result<double> CudaMeasurer::time_launch_overhead() {
  PSHARD_ASSIGN_OR_RETURN(uint8_t * base, scratch(256));
  filled_.clear(); // the kernels write the scratch's first floats
  auto* y = reinterpret_cast<float*>(base);
  device_->compute().add(y, y, 1); // warm: the first launch loads the module
  PSHARD_RETURN_IF_ERROR(device_->synchronize());
  const auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < kLaunchBurst; ++i)
    device_->compute().add(y, y, 1);
  PSHARD_RETURN_IF_ERROR(device_->synchronize());
  return seconds_since(t0) / kLaunchBurst;
}

Result<double> CudaMeasurer::time_transfer(Direction direction, HostMemoryKind memory,
                                           uint64_t bytes) {
  PSHARD_ASSIGN_OR_RETURN(uint8_t * dev, scratch(bytes));
  filled_.clear();
  HostBuffer host(bytes, memory == HostMemoryKind::kPinned);
  if (host.data == nullptr)
    return Status(StatusCode::kOutOfMemory,
                  "cudaMallocHost of " + std::to_string(bytes) + " bytes");
  cudaStream_t s = device_->stream(Queue::kCopy);
  const auto kind =
      direction == Direction::kHostToDevice ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToHost;
  void* dst = direction == Direction::kHostToDevice ? static_cast<void*>(dev) : host.data;
  const void* src = direction == Direction::kHostToDevice ? static_cast<void*>(host.data) : dev;
  PSHARD_RETURN_IF_ERROR(device_->synchronize());
  const auto t0 = std::chrono::steady_clock::now();
  PSHARD_CUDA_RETURN_IF_ERROR(cudaMemcpyAsync(dst, src, bytes, kind, s));
  PSHARD_CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(s));
  return seconds_since(t0);
}

Status CudaMeasurer::start_copy_load(uint64_t chunk_bytes) {
  if (load_.joinable())
    return invalid_argument("start_copy_load: a copy load is already running");
  PSHARD_ASSIGN_OR_RETURN(uint8_t * dev, scratch(chunk_bytes));
  filled_.clear();
  load_stop_ = false;
  load_bytes_ = 0;
  load_status_ = Status::ok_status();
  cudaStream_t s = device_->stream(Queue::kCopy);
  const int ordinal = 0;
  load_ = std::thread([this, dev, chunk_bytes, s, ordinal] {
    (void)cudaSetDevice(ordinal);
    HostBuffer host(chunk_bytes, true);
    if (host.data == nullptr) {
      load_status_ = Status(StatusCode::kOutOfMemory, "copy load: cudaMallocHost failed");
      return;
    }
    const auto t0 = std::chrono::steady_clock::now();
    while (!load_stop_) {
      Status st = PSHARD_CUDA_STATUS(
          cudaMemcpyAsync(dev, host.data, chunk_bytes, cudaMemcpyHostToDevice, s));
      if (st.ok())
        st = PSHARD_CUDA_STATUS(cudaStreamSynchronize(s));
      if (!st.ok()) {
        load_status_ = st;
        break;
      }
      load_bytes_ += chunk_bytes;
    }
    load_seconds_ = seconds_since(t0);
  });
  return Status::ok_status();
}

Result<double> CudaMeasurer::stop_copy_load() {
  if (!load_.joinable())
    return invalid_argument("stop_copy_load without start_copy_load");
  load_stop_ = true;
  load_.join();
  PSHARD_RETURN_IF_ERROR(load_status_);
  return load_seconds_ > 0 ? static_cast<double>(load_bytes_) / load_seconds_ : 0.0;
}

} // namespace pshard
