// The MoE router on the device: softmax, top-k (ties to the lower index), weights
// (renormalised when the model asks); moe_grouped.cu runs the experts. One thread per token for
// routing — n_expert is at most a few hundred, and this runs once per MoE block.
#include "runtime/backends/cuda/kernels/block_formats.cuh"
#include "runtime/backends/cuda/kernels/kernels.h"

#include <cmath>

namespace pshard::cuda::kernels {
namespace {

constexpr int kMaxUsed = 64;

__global__ void moe_route_kernel(float* logits, int64_t n_tokens, int64_t n_expert, int64_t k,
                                 bool normalize, int32_t* experts, float* weights) {
  const int64_t t = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (t >= n_tokens)
    return;
  float* p = logits + t * n_expert;
  float mx = -INFINITY;
  for (int64_t e = 0; e < n_expert; ++e)
    mx = fmaxf(mx, p[e]);
  float sum = 0.0f;
  for (int64_t e = 0; e < n_expert; ++e) {
    p[e] = expf(p[e] - mx);
    sum += p[e];
  }
  for (int64_t e = 0; e < n_expert; ++e)
    p[e] /= sum;
  // Selection in probability order (strictly greater wins, so ties go to the lower
  // index), summing as the CPU does, then sorted by expert index for the combine.
  int32_t chosen[kMaxUsed];
  float chosen_sum = 0.0f;
  for (int64_t i = 0; i < k; ++i) {
    int32_t best = -1;
    for (int64_t e = 0; e < n_expert; ++e) {
      bool taken = false;
      for (int64_t j = 0; j < i; ++j)
        taken = taken || chosen[j] == e;
      if (!taken && (best < 0 || p[e] > p[best]))
        best = static_cast<int32_t>(e);
    }
    chosen[i] = best;
    chosen_sum += p[best];
  }
  for (int64_t i = 1; i < k; ++i)
    for (int64_t j = i; j > 0 && chosen[j - 1] > chosen[j]; --j) {
      const int32_t tmp = chosen[j];
      chosen[j] = chosen[j - 1];
      chosen[j - 1] = tmp;
    }
  for (int64_t i = 0; i < k; ++i) {
    experts[t * k + i] = chosen[i];
    weights[t * k + i] = normalize ? p[chosen[i]] / chosen_sum : p[chosen[i]];
  }
}

} // namespace

cudaError_t moe_route(float* logits, int64_t n_tokens, int64_t n_expert, int64_t k,
                      bool normalize, int32_t* experts, float* weights, cudaStream_t s) {
  if (k <= 0 || k > kMaxUsed || k > n_expert)
    return cudaErrorInvalidValue;
  if (n_tokens > 0)
    moe_route_kernel<<<blocks_for(n_tokens, 64), 64, 0, s>>>(logits, n_tokens, n_expert, k,
                                                             normalize, experts, weights);
  return cudaGetLastError();
}

} // namespace pshard::cuda::kernels
