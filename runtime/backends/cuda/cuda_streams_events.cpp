#include "runtime/backends/cuda/cuda_streams_events.h"

#include "runtime/backends/cuda/cuda_status.h"

#include <chrono>

namespace pshard::cuda {
namespace {

int64_t steady_now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

} // namespace

CudaStreams::~CudaStreams() {
  for (cudaStream_t s : streams_)
    if (s != nullptr)
      (void)cudaStreamDestroy(s);
  if (reference_ != nullptr)
    (void)cudaEventDestroy(reference_);
}

Status CudaStreams::create() {
  for (cudaStream_t& s : streams_)
    PSHARD_CUDA_RETURN_IF_ERROR(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  // The clock's origin: a recorded, completed event and the host time just after. The
  // host reads its clock right after the sync returns, so the origin is late by the
  // sync's wake-up latency (microseconds), the same for every later event.
  PSHARD_CUDA_RETURN_IF_ERROR(cudaEventCreate(&reference_));
  cudaStream_t s = stream(Queue::kCompute);
  PSHARD_CUDA_RETURN_IF_ERROR(cudaEventRecord(reference_, s));
  PSHARD_CUDA_RETURN_IF_ERROR(cudaEventSynchronize(reference_));
  reference_ns_ = steady_now_ns();
  return Status::ok_status();
}

Status CudaStreams::synchronize_all() const {
  for (cudaStream_t s : streams_)
    PSHARD_CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(s));
  return Status::ok_status();
}

Result<std::unique_ptr<DeviceEvent>> CudaStreams::create_event() const {
  cudaEvent_t e = nullptr;
  PSHARD_CUDA_RETURN_IF_ERROR(cudaEventCreate(&e));
  return std::unique_ptr<DeviceEvent>(new CudaEvent(e));
}

Result<int64_t> CudaStreams::completion_time_ns(const CudaEvent& event) const {
  if (!event.recorded)
    return invalid_argument("completion_time_ns of an event that was never recorded");
  float ms = 0;
  PSHARD_CUDA_RETURN_IF_ERROR(cudaEventElapsedTime(&ms, reference_, event.event));
  return reference_ns_ + static_cast<int64_t>(static_cast<double>(ms) * 1e6);
}

} // namespace pshard::cuda
