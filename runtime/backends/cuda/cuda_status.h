// CUDA runtime and cuBLASLt errors as pshard statuses, with the failing expression, file
// and line, so a device failure reads like any other error and never aborts.
//
//   PSHARD_CUDA_RETURN_IF_ERROR(cudaMalloc(&p, bytes));        // returns a Status
//   sticky.note(PSHARD_CUDA_STATUS(cudaMemcpyAsync(...)));      // enqueue paths keep it
//
// cudaErrorMemoryAllocation maps to kOutOfMemory (callers test for it); everything else
// is kDeviceError. A failure turned into a status is also read out of CUDA's per-thread
// last error, so the next kernel launch does not report it again as its own.
#pragma once

#include "runtime/core/status.h"

#include <cublasLt.h>
#include <cuda_runtime_api.h>
#include <mutex>

namespace pshard::cuda {

Status cuda_status(cudaError_t error, const char* expr, const char* file, int line);
Status cublas_status(cublasStatus_t status, const char* expr, const char* file, int line);

// Ok when a CUDA device can be used; otherwise why not, e.g. "no CUDA device:
// cudaGetDeviceCount returned 35 (CUDA driver version is insufficient...)". Tests skip on it.
Status cuda_device_available();

// The first asynchronous failure of a device, returned by its next synchronize (CUDA's
// sticky errors). Thread-safe: the executor may enqueue from more than one thread.
class StickyError {
public:
  void note(const Status& s);
  // The first failure noted, if any (it stays: a failed device stays failed).
  Status get() const;

private:
  mutable std::mutex mu_;
  Status first_;
};

} // namespace pshard::cuda

#define PSHARD_CUDA_STATUS(expr) ::pshard::cuda::cuda_status((expr), #expr, __FILE__, __LINE__)
#define PSHARD_CUBLAS_STATUS(expr) ::pshard::cuda::cublas_status((expr), #expr, __FILE__, __LINE__)
#define PSHARD_CUDA_RETURN_IF_ERROR(expr) PSHARD_RETURN_IF_ERROR(PSHARD_CUDA_STATUS(expr))
#define PSHARD_CUBLAS_RETURN_IF_ERROR(expr) PSHARD_RETURN_IF_ERROR(PSHARD_CUBLAS_STATUS(expr))
