#include "runtime/backends/cuda/cuda_arena.h"

#include "runtime/backends/cuda/cuda_status.h"

#include <string>

namespace pshard::cuda {
namespace {

std::string mib(uint64_t bytes) { return std::to_string(bytes >> 20) + " MiB"; }

} // namespace

Result<uint8_t*> CudaArena::allocate(uint64_t bytes) {
  if (base_ != nullptr)
    return invalid_argument("the CUDA arena is already allocated (" + mib(size_) +
                            "); free it first");
  if (bytes == 0)
    return invalid_argument("a CUDA arena of 0 bytes");
  size_t free_bytes = 0, total_bytes = 0;
  PSHARD_CUDA_RETURN_IF_ERROR(cudaMemGetInfo(&free_bytes, &total_bytes));
  if (bytes > free_bytes)
    return Status(StatusCode::kOutOfMemory,
                  "CUDA arena of " + mib(bytes) + " does not fit: the GPU has " + mib(free_bytes) +
                      " free of " + mib(total_bytes) + "; use a smaller --vram budget");
  void* p = nullptr;
  const cudaError_t e = cudaMalloc(&p, bytes);
  if (e != cudaSuccess) {
    (void)cudaGetLastError(); // an allocation failure is not sticky; clear it
    return cuda_status(e, "cudaMalloc(arena)", __FILE__, __LINE__)
        .with_context("allocating the " + mib(bytes) + " arena");
  }
  base_ = static_cast<uint8_t*>(p);
  size_ = bytes;
  return base_;
}

void CudaArena::release() {
  if (base_ != nullptr)
    (void)cudaFree(base_);
  base_ = nullptr;
  size_ = 0;
}

} // namespace pshard::cuda
