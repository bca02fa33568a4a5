// The VRAM arena: exactly one cudaMalloc of the plan's size. The budget contract (peak
// VRAM never above the budget) rests on the executor placing everything inside it.
// A request past the device's free memory fails as kOutOfMemory before cudaMalloc is
// tried, naming both sizes, so the message says what would fix it.
#pragma once

#include "runtime/core/status.h"

#include <cstdint>

namespace pshard::cuda {

class CudaArena {
public:
  CudaArena() = default;
  CudaArena(const CudaArena&) = delete;
  CudaArena& operator=(const CudaArena&) = delete;
  ~CudaArena() { release(); }

  Result<uint8_t*> allocate(uint64_t bytes);
  // Frees the arena; the caller has synchronized every stream that may use it.
  void release();
  uint8_t* base() const { return base_; }
  uint64_t size() const { return size_; }

private:
  uint8_t* base_ = nullptr;
  uint64_t size_ = 0;
};

} // namespace pshard::cuda
