#include "runtime/backends/cuda/cuda_status.h"

#include <cstring>
#include <string>

namespace pshard::cuda {
namespace {

// "file.cpp:123" without the build machine's directories.
std::string where(const char* file, int line) {
  const char* slash = std::strrchr(file, '/');
  return std::string(slash ? slash + 1 : file) + ":" + std::to_string(line);
}

} // namespace

Status cuda_status(cudaError_t error, const char* expr, const char* file, int line) {
  if (error == cudaSuccess)
    return Status::ok_status();
  // The error is this status's now. A runtime call's failure also stays in the thread's
  // last-error slot, and every kernel launcher returns cudaGetLastError(): unread, the
  // next launch would report it as its own (a refused pinned allocation for MoE tables
  // failing the first rms_norm of a dense model). Errors that corrupt the context stay
  // sticky whatever this reads.
  (void)cudaGetLastError();
  const std::string msg = std::string(cudaGetErrorName(error)) + " (" + cudaGetErrorString(error) +
                          ") from " + expr + " at " + where(file, line);
  const StatusCode code =
      error == cudaErrorMemoryAllocation ? StatusCode::kOutOfMemory : StatusCode::kDeviceError;
  return Status(code, msg);
}

Status cublas_status(cublasStatus_t status, const char* expr, const char* file, int line) {
  if (status == CUBLAS_STATUS_SUCCESS)
    return Status::ok_status();
  const std::string msg = std::string("cuBLASLt ") + cublasLtGetStatusName(status) + " (" +
                          cublasLtGetStatusString(status) + ") from " + expr + " at " +
                          where(file, line);
  const StatusCode code =
      status == CUBLAS_STATUS_ALLOC_FAILED ? StatusCode::kOutOfMemory : StatusCode::kDeviceError;
  return Status(code, msg);
}

Status cuda_device_available() {
  int count = 0;
  const cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess) {
    (void)cudaGetLastError(); // not sticky, but keep later calls clean
    return Status(StatusCode::kDeviceError, "no CUDA device: cudaGetDeviceCount returned " +
                                                std::to_string(int(e)) + " (" +
                                                cudaGetErrorString(e) + ")");
  }
  if (count == 0)
    return Status(StatusCode::kDeviceError, "no CUDA device: cudaGetDeviceCount found 0 devices");
  return Status::ok_status();
}

void StickyError::note(const Status& s) {
  if (s.ok())
    return;
  std::lock_guard<std::mutex> lock(mu_);
  if (first_.ok())
    first_ = s;
}

Status StickyError::get() const {
  std::lock_guard<std::mutex> lock(mu_);
  return first_;
}

} // namespace pshard::cuda
