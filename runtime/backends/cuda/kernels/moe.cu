// The MoE router on the device: softmax or sigmoid, top-k (ties to the lower index; by
// probability + selection bias when the model has one), weights (renormalised and scaled
// when the model asks); moe_grouped.cu runs the experts. One thread per token for
// routing — n_expert is at most a few hundred, and this runs once per MoE block.
#include "runtime/backends/cuda/kernels/block_formats.cuh"
#include "runtime/backends/cuda/kernels/kernels.h"

#include <cmath>

namespace pshard::cuda::kernels {
namespace {

constexpr int kMaxUsed = 64;
constexpr int kMaxGroups = 64;

// Group-limited routing: whether each of the n_groups groups is among the n_used whose two
// best choosing scores sum highest (ties to the lower group), as the CPU decides.
template <typename Key>
__device__ void best_groups(Key key, int64_t n_expert, int64_t n_groups, int64_t n_used,
                            bool* kept) {
  const int64_t per = n_expert / n_groups;
  float score[kMaxGroups];
  for (int64_t gr = 0; gr < n_groups; ++gr) {
    float best = -INFINITY, second = -INFINITY;
    for (int64_t e = gr * per; e < (gr + 1) * per; ++e) {
      const float v = key(e);
      if (v > best) {
        second = best;
        best = v;
      } else if (v > second) {
        second = v;
      }
    }
    score[gr] = per > 1 ? best + second : best;
    kept[gr] = false;
  }
  for (int64_t i = 0; i < n_used; ++i) {
    int64_t top = -1;
    for (int64_t gr = 0; gr < n_groups; ++gr)
      if (!kept[gr] && (top < 0 || score[gr] > score[top]))
        top = gr;
    kept[top] = true;
  }
}

__device__ void softmax_in_place(float* p, int64_t n) {
  float mx = -INFINITY;
  for (int64_t e = 0; e < n; ++e)
    mx = fmaxf(mx, p[e]);
  float sum = 0.0f;
  for (int64_t e = 0; e < n; ++e) {
    p[e] = expf(p[e] - mx);
    sum += p[e];
  }
  for (int64_t e = 0; e < n; ++e)
    p[e] /= sum;
}

__global__ void moe_route_kernel(float* logits, int64_t n_tokens, int64_t n_expert, int64_t k,
                                 RouteGating g, int32_t* experts, float* weights) {
  const int64_t t = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (t >= n_tokens)
    return;
  float* p = logits + t * n_expert;
  if (g.sigmoid)
    for (int64_t e = 0; e < n_expert; ++e)
      p[e] = 1.0f / (1.0f + expf(-p[e]));
  else
    softmax_in_place(p, n_expert);
  const float* bias = g.selection_bias;
  auto biased = [&](int64_t e) { return bias ? p[e] + bias[e] : p[e]; };
  bool kept[kMaxGroups];
  const bool grouped = g.n_groups > 1;
  if (grouped)
    best_groups(biased, n_expert, g.n_groups, g.n_groups_used, kept);
  const int64_t per = grouped ? n_expert / g.n_groups : n_expert;
  auto key = [&](int64_t e) { return !grouped || kept[e / per] ? biased(e) : -INFINITY; };
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
      if (!taken && (best < 0 || key(e) > key(best)))
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
    weights[t * k + i] = (g.normalize ? p[chosen[i]] / chosen_sum : p[chosen[i]]) * g.scale;
  }
}

} // namespace

cudaError_t moe_route(float* logits, int64_t n_tokens, int64_t n_expert, int64_t k,
                      const RouteGating& g, int32_t* experts, float* weights, cudaStream_t s) {
  if (k <= 0 || k > kMaxUsed || k > n_expert || g.n_groups > kMaxGroups ||
      (g.n_groups > 1 && n_expert % g.n_groups != 0))
    return cudaErrorInvalidValue;
  if (n_tokens > 0)
    moe_route_kernel<<<blocks_for(n_tokens, 64), 64, 0, s>>>(logits, n_tokens, n_expert, k, g,
                                                             experts, weights);
  return cudaGetLastError();
}

} // namespace pshard::cuda::kernels
