// A split MoE pass's device experts on CUDA (Device::run_expert_groups): all of them in
// one upload of their rows, the grouped launches (gate and up fused, down) and one
// download, per chunk of rows the kernel scratch holds — a decode pass is one chunk.
// Launched one expert at a time, as the default does, a top-8 layer would pay up to 8 ×
// (two copies and four launches), the launch storm the grouped kernels exist to avoid,
// and more than the planner prices (one grouped launch per matrix, ExpertPlacement.cpp).
//
// Experts with more rows than the matrix-vector kernels take (prefill) keep the default:
// one GEMM per expert reads its weights once, where the grouped kernels read them once
// per row.
#include "runtime/backends/cuda/cuda_device.h"

#include <algorithm>
#include <vector>

namespace pshard {

void CudaDevice::run_expert_groups(const MoeDispatch& moe, std::span<const ExpertRowGroup> groups,
                                   const float* host_in, float* host_out) {
  int64_t largest = 0;
  for (const ExpertRowGroup& g : groups)
    largest = std::max(largest, g.rows);
  if (largest == 0)
    return;
  if (largest > cuda::kernels::kMatvecMaxTokens || !ops_->has_workspace()) {
    Device::run_expert_groups(moe, groups, host_in, host_out);
    return;
  }
  Result<cuda::MoeChunks> chunks = ops_->expert_row_chunks(moe);
  if (!chunks.ok()) {
    sticky_.note(chunks.status());
    return;
  }
  const cuda::MoeChunks& c = *chunks;
  std::vector<int32_t> experts; // each row's expert
  experts.reserve(static_cast<size_t>(expert_group_rows(groups)));
  for (const ExpertRowGroup& g : groups)
    experts.insert(experts.end(), static_cast<size_t>(g.rows), g.expert);
  const int64_t d = moe.n_embd, rows = static_cast<int64_t>(experts.size());
  float* in = ops_->moe_scratch() + c.in_offset;
  const float* out = ops_->moe_scratch() + c.out_offset;
  for (int64_t r0 = 0; r0 < rows; r0 += c.tokens) {
    const int64_t n = std::min(c.tokens, rows - r0);
    const uint64_t bytes = static_cast<uint64_t>(n * d) * sizeof(float);
    copy_to_device(Queue::kCompute, in, host_in + r0 * d, bytes);
    sticky_.note(ops_->moe_rows(
        moe,
        std::span<const int32_t>(experts).subspan(static_cast<size_t>(r0), static_cast<size_t>(n)),
        c));
    copy_to_host(Queue::kCompute, host_out + r0 * d, out, bytes);
  }
}

} // namespace pshard
