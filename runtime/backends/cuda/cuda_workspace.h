// The CUDA backend's kernel scratch, carved from the start of the plan's workspace
// buffer (CudaDevice::set_workspace): cuBLASLt's workspace, the f16/bf16 copies of
// activations and the dequantized weight rows that prefill GEMMs read, token ids, MoE
// routes and expert pointer tables. Fixed size, so every GEMM is chunked to fit it.
// The CUDA measurer reports kBytes as the profile's kernel_workspace_bytes, which the
// planner reserves in every GPU plan (profiles/reference/make_reference.py repeats the
// figure for the reference profiles: change both together).
#pragma once

#include <cstddef>
#include <cstdint>

namespace pshard::cuda {

struct CudaWorkspace {
  static constexpr size_t kLtBytes = 4ull << 20;
  static constexpr size_t kActBytes = 8ull << 20;     // activations as f16/bf16
  static constexpr size_t kWeightBytes = 24ull << 20; // dequantized weight rows (f16)
  static constexpr int64_t kIds = 65536;              // token ids per embed chunk
  static constexpr int64_t kRoutes = 65536;           // token x k routes per MoE chunk
  static constexpr int64_t kExpertPtrs = 3 * 1024;    // gate, up, down tables
  // The act and weight regions, adjacent (at() lays them out so): one scratch for the
  // grouped MoE launches and decode attention's chunk partials, which no GEMM overlaps in
  // stream order.
  static constexpr size_t kScratchBytes = kActBytes + kWeightBytes;
  static constexpr size_t kBytes =
      kLtBytes + kActBytes + kWeightBytes + kIds * 4 + kRoutes * 8 + kExpertPtrs * sizeof(void*);

  uint8_t* lt = nullptr;
  uint8_t* act = nullptr;
  uint8_t* weight = nullptr;
  int32_t* ids = nullptr;
  int32_t* route_experts = nullptr;
  float* route_weights = nullptr;
  const uint8_t** expert_ptrs = nullptr;

  bool ready() const { return lt != nullptr; }

  // Lays the regions out from `base` (256-byte aligned: every region size is a
  // multiple of 256, so each region is too).
  static CudaWorkspace at(uint8_t* base) {
    CudaWorkspace w;
    if (base == nullptr)
      return w;
    w.lt = base;
    w.act = w.lt + kLtBytes;
    w.weight = w.act + kActBytes;
    w.ids = reinterpret_cast<int32_t*>(w.weight + kWeightBytes);
    w.route_experts = w.ids + kIds;
    w.route_weights = reinterpret_cast<float*>(w.route_experts + kRoutes);
    w.expert_ptrs = reinterpret_cast<const uint8_t**>(w.route_weights + kRoutes);
    return w;
  }
};

} // namespace pshard::cuda
