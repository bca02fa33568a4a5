// The transfer engine: host-to-device weight copies, made DMA-able one of two ways.
//
//   kRegister  cudaHostRegister(model mapping, ReadOnly) once; every copy is then a
//              single cudaMemcpyAsync straight from the mapping (no host work per copy).
//   kStaging   copies go through a ring of pinned staging buffers in chunks: the host
//              memcpy's a chunk into a free buffer, the copy stream DMAs it. Costs host
//              memory bandwidth and may block the caller when the ring is full, but
//              works where registering a file mapping is refused.
//
// Which one is faster depends on the platform (IOMMU, page size, driver); gpu-check.sh
// measures both (PSHARD_CUDA_TRANSFER=register|staging) and the default is register,
// falling back to staging when registration fails. Host memory that is neither
// registered nor staged (small activations) goes through the driver's pageable path.
#pragma once

#include "runtime/backends/cuda/cuda_status.h"

#include <cstdint>
#include <cuda_runtime_api.h>
#include <mutex>
#include <vector>

namespace pshard::cuda {

enum class TransferMode { kRegister, kStaging };

struct TransferOptions {
  TransferMode mode = TransferMode::kRegister;
  uint64_t chunk_bytes = 8ull << 20; // staging chunk
  int chunks = 8;                    // staging ring size (chunks * chunk_bytes pinned)
};

// PSHARD_CUDA_TRANSFER=staging|register, else the default.
TransferOptions transfer_options_from_env();
const char* transfer_mode_name(TransferMode m);

class TransferEngine {
public:
  explicit TransferEngine(const TransferOptions& o) : options_(o) {}
  TransferEngine(const TransferEngine&) = delete;
  TransferEngine& operator=(const TransferEngine&) = delete;
  ~TransferEngine();

  // Registers [host, host + bytes) for the whole run (kRegister), or remembers it as a
  // staged source (kStaging). A refused registration switches this range to staging.
  Status register_source(const void* host, uint64_t bytes);
  // Undoes register_source or map for the range that begins at `host`.
  void unregister_source(const void* host);
  // A device address for host memory kernels read and write over the bus. A range inside
  // one mapped already gets its address there: every plan the executor builds maps its
  // streamed attention's KV cache, and the plans of one session share that cache (CUDA
  // refuses to register a range twice).
  Result<uint8_t*> map(void* host, uint64_t bytes);

  // Enqueues the copy on `stream`; failures go to `sticky`.
  void copy_to_device(cudaStream_t stream, void* dst, const void* src, uint64_t bytes,
                      StickyError& sticky);
  // Device-to-host into pageable memory without blocking the caller: the DMA lands in a
  // pinned bounce buffer and a host function on the stream copies it to `dst` (a plain
  // cudaMemcpyAsync to pageable memory would return only once the stream got there,
  // serialising the host's CPU sub-layers behind the GPU's queue).
  void copy_to_host(cudaStream_t stream, void* dst, const void* src, uint64_t bytes,
                    StickyError& sticky);
  TransferMode mode() const { return options_.mode; }

private:
  struct Range {
    const uint8_t* begin;
    uint64_t bytes;
    bool registered; // false: staged
  };
  const Range* find(const void* p, uint64_t bytes) const;
  Status ensure_ring();
  void staged_copy(cudaStream_t stream, uint8_t* dst, const uint8_t* src, uint64_t bytes,
                   StickyError& sticky);

  struct Bounce {
    TransferEngine* engine;
    uint8_t* pinned;
    uint64_t capacity;
    void* dst;
    uint64_t bytes;
  };
  static void CUDART_CB finish_bounce(void* bounce);
  Bounce* take_bounce(uint64_t bytes, StickyError& sticky);

  TransferOptions options_;
  std::mutex bounce_mu_;
  std::vector<Bounce*> bounce_free_; // returned by finish_bounce, reused by size
  std::vector<Bounce*> bounce_all_;
  std::mutex mu_;
  std::vector<Range> ranges_;
  struct Mapping {
    uint8_t* host;
    uint64_t bytes;
    uint8_t* device;
  };
  std::vector<Mapping> mapped_; // map(): until unregister_source or destruction
  std::vector<uint8_t*> ring_;
  std::vector<cudaEvent_t> ring_done_;
  size_t next_ = 0;
};

} // namespace pshard::cuda
