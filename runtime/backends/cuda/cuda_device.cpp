#include "runtime/backends/cuda/cuda_device.h"

#include "runtime/backends/cuda/kernels/kernels.h"

namespace pshard {

using cuda::CudaEvent;

Result<std::unique_ptr<CudaDevice>> CudaDevice::create(const CudaOptions& options) {
  PSHARD_RETURN_IF_ERROR(cuda::cuda_device_available());
  std::unique_ptr<CudaDevice> d(new CudaDevice(options));
  PSHARD_CUDA_RETURN_IF_ERROR(cudaSetDevice(options.device_ordinal));
  PSHARD_CUDA_RETURN_IF_ERROR(cudaGetDeviceProperties(&d->props_, options.device_ordinal));
  d->info_.backend = "cuda";
  d->info_.name = d->props_.name;
  d->info_.memory_bytes = d->props_.totalGlobalMem;
  PSHARD_RETURN_IF_ERROR(d->streams_.create());
  PSHARD_RETURN_IF_ERROR(d->lt_.create());
  d->ops_ =
      std::make_unique<cuda::CudaOps>(d->streams_.stream(Queue::kCompute), d->sticky_, d->lt_);
  return d;
}

CudaDevice::~CudaDevice() {
  (void)streams_.synchronize_all();
  arena_.release();
}

void CudaDevice::note(cudaError_t e, const char* what, int line) {
  if (e != cudaSuccess)
    sticky_.note(cuda::cuda_status(e, what, __FILE__, line));
}

// Exactly the plan's arena: the kernel scratch lives in its workspace buffer, so the
// budget the plan was made for is all the memory pshard takes.
Result<uint8_t*> CudaDevice::allocate_arena(uint64_t bytes) { return arena_.allocate(bytes); }

void CudaDevice::free_arena() {
  sticky_.note(streams_.synchronize_all());
  graphs_.clear(); // their kernels point into the arena
  drop_workspace();
  arena_.release();
}

void CudaDevice::drop_workspace() {
  workspace_ = nullptr;
  workspace_bytes_ = 0;
  lt_.set_workspace(nullptr, 0);
  ops_->set_workspace({});
}

void CudaDevice::set_workspace(uint8_t* ptr, uint64_t bytes) {
  if (ptr == workspace_ && bytes == workspace_bytes_ && ptr != nullptr)
    return; // the same plan again, or another plan with the same workspace
  // Work queued against the old place may still read it, and the new place may have
  // held another plan's buffers: wait for both. The executor synchronizes after every
  // pass, so this costs nothing there; it keeps any other caller correct.
  sticky_.note(streams_.synchronize_all());
  drop_workspace();
  if (ptr == nullptr)
    return;
  const uint8_t* end = arena_.base() + arena_.size();
  if (ptr < arena_.base() || ptr + bytes > end) {
    sticky_.note(internal_error("the CUDA kernel workspace must lie inside the arena"));
    return;
  }
  if (bytes < cuda::CudaWorkspace::kBytes || reinterpret_cast<uintptr_t>(ptr) % 256 != 0) {
    sticky_.note(invalid_argument(
        "the plan's workspace buffer (" + std::to_string(bytes) + " B at arena offset " +
        std::to_string(ptr - arena_.base()) + ") cannot hold the CUDA kernel workspace (" +
        std::to_string(cuda::CudaWorkspace::kBytes) + " B, 256-byte aligned); recompile the "
        "schedule with pshard-compile against a profile measured with --backend cuda"));
    return;
  }
  workspace_ = ptr;
  workspace_bytes_ = bytes;
  const cuda::CudaWorkspace ws = cuda::CudaWorkspace::at(ptr);
  lt_.set_workspace(ws.lt, cuda::CudaWorkspace::kLtBytes);
  ops_->set_workspace(ws);
}

bool CudaDevice::begin_graph(uint64_t key, int64_t n_tokens) {
  // Larger passes take cuBLASLt and its workspace; a failed device records nothing.
  if (n_tokens <= 0 || n_tokens > cuda::kernels::kMatvecMaxTokens || !ops_->has_workspace() ||
      !sticky_.get().ok())
    return false;
  if (!graphs_.begin(streams_.stream(Queue::kCompute), key))
    return false;
  ops_->begin_recording();
  return true;
}

bool CudaDevice::end_graph(bool replay) {
  if (!graphs_.capturing())
    return false;
  cudaStream_t s = streams_.stream(Queue::kCompute);
  cudaGraph_t graph = graphs_.end_capture(s, sticky_);
  const bool run = replay && graph != nullptr;
  ops_->end_recording(/*upload=*/run); // the ids go in ahead of the graph, in stream order
  if (!run) {
    if (graph != nullptr)
      (void)cudaGraphDestroy(graph);
    return false;
  }
  if (graphs_.launch(s, graph, sticky_))
    return true;
  ops_->end_recording(/*upload=*/false); // forget what only the unlaunched graph uploaded
  return false;
}

Status CudaDevice::register_host_memory(const void* host, uint64_t bytes) {
  return transfer_.register_source(host, bytes);
}

void CudaDevice::unregister_host_memory(const void* host) {
  sticky_.note(streams_.synchronize_all()); // no copy may still read it
  transfer_.unregister_source(host);
}

Result<uint8_t*> CudaDevice::map_host_memory(void* host, uint64_t bytes) {
  return transfer_.map(host, bytes);
}

void CudaDevice::copy_to_device(Queue q, void* dst, const void* src, uint64_t bytes) {
  if (bytes > 0)
    transfer_.copy_to_device(streams_.stream(q), dst, src, bytes, sticky_);
}

void CudaDevice::copy_to_host(Queue q, void* dst, const void* src, uint64_t bytes) {
  if (bytes > 0)
    transfer_.copy_to_host(streams_.stream(q), dst, src, bytes, sticky_);
}

Result<std::unique_ptr<DeviceEvent>> CudaDevice::create_event() { return streams_.create_event(); }

void CudaDevice::record(DeviceEvent& event, Queue q) {
  auto& e = static_cast<CudaEvent&>(event);
  note(cudaEventRecord(e.event, streams_.stream(q)), "record", __LINE__);
  e.recorded = true;
}

void CudaDevice::wait(Queue q, const DeviceEvent& event) {
  // A never-recorded CUDA event counts as complete, as device.h asks.
  const auto& e = static_cast<const CudaEvent&>(event);
  note(cudaStreamWaitEvent(streams_.stream(q), e.event, 0), "wait", __LINE__);
}

Status CudaDevice::synchronize(const DeviceEvent& event) {
  const auto& e = static_cast<const CudaEvent&>(event);
  if (e.recorded)
    note(cudaEventSynchronize(e.event), "synchronize(event)", __LINE__);
  return sticky_.get();
}

Status CudaDevice::synchronize() {
  sticky_.note(streams_.synchronize_all());
  return sticky_.get();
}

Result<int64_t> CudaDevice::completion_time_ns(const DeviceEvent& event) {
  return streams_.completion_time_ns(static_cast<const CudaEvent&>(event));
}

} // namespace pshard
