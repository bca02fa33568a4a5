// Page-locked host staging of what the CUDA MoE dispatch uploads: the expert pointer
// tables (a mirror of the workspace's expert_ptrs region, slot for slot) and the host's
// routes (two halves used in turn). A copy from pinned memory is a true asynchronous
// DMA (and the only kind a CUDA graph can replay), so the host must not rewrite a buffer
// while its last copy is still queued: each slot and half has an event recorded after
// its copy, waited on before the next write (outside graph capture; under capture the
// table cache never rewrites a slot the graph uses). Allocated once, when the Ops are
// created: cudaHostAlloc is not allowed while a stream captures.
//
//   auto staging = MoeHostStaging::create();                // at CudaOps creation
//   staging->upload_table(slot, table, device_slot, stream, /*capturing=*/false);
//   staging->upload_routes(experts, weights, n, dev_experts, dev_weights, stream);
#pragma once

#include "runtime/core/status.h"

#include <cstdint>
#include <cuda_runtime_api.h>
#include <memory>
#include <span>
#include <vector>

namespace pshard::cuda {

class MoeHostStaging {
public:
  // table_capacity: pointers of the device's table region; route_capacity: routes per
  // upload (one chunk).
  static Result<std::unique_ptr<MoeHostStaging>> create(int64_t table_capacity,
                                                        int64_t route_capacity);
  ~MoeHostStaging();
  MoeHostStaging(const MoeHostStaging&) = delete;
  MoeHostStaging& operator=(const MoeHostStaging&) = delete;

  // Writes `table` into pinned slot `slot` (slot * table.size() pointers in) and enqueues
  // its copy to `device_slot`.
  Status upload_table(int64_t slot, std::span<const uint8_t* const> table,
                      const uint8_t** device_slot, cudaStream_t s, bool capturing);
  // n routes (experts and weights) through the next pinned half to the device arrays.
  Status upload_routes(const int32_t* experts, const float* weights, int64_t n,
                       int32_t* device_experts, float* device_weights, cudaStream_t s);

private:
  MoeHostStaging() = default;
  // Waits for the last copy out of a buffer (no-op before its first), then records the
  // next after it is enqueued.
  Status wait(cudaEvent_t& e);
  Status recorded(cudaEvent_t& e, cudaStream_t s);

  int64_t table_capacity_ = 0, route_capacity_ = 0;
  const uint8_t** tables_ = nullptr;    // pinned, table_capacity_ pointers
  uint8_t* routes_ = nullptr;           // pinned, 2 halves of route_capacity_ x (int32 + float)
  std::vector<cudaEvent_t> table_done_; // per slot start (index slot * size), lazily created
  cudaEvent_t route_done_[2] = {nullptr, nullptr};
  int next_half_ = 0;
};

} // namespace pshard::cuda
