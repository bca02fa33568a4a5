// The grouped MoE kernels: every route of every token of a chunk in ONE launch per MoE
// matrix, so a block costs the router (or the host's routes) plus three launches
// whatever k is, instead of five per route. A route is (token t, slot j) at index
// t * k + j; grid.y is the route, grid.x the output rows (kWarps per block, one warp
// per row: the warp-per-row dot products of matvec_rows.cuh, so results round as the
// matrix-vector kernels do).
//
// An expert's matrix starts at table[e] when there is a table (experts placed at
// scattered addresses) and at base + e * stride otherwise (a block resident as one
// tensor needs no table at all, so nothing is uploaded for it).
#include "runtime/backends/cuda/kernels/matvec_rows.cuh"

namespace pshard::cuda::kernels {
namespace {

using rows::kWarps;

__device__ __forceinline__ const uint8_t* expert_matrix(const ExpertAddress& a, int32_t e) {
  return a.table ? a.table[e] : a.base + static_cast<size_t>(e) * a.stride;
}

// gpt-oss's clamped SwiGLU (runtime/kernels/ops.h's swiglu_oai).
__device__ __forceinline__ float swiglu_oai_times(float g, float u) {
  const float x = fminf(g, kSwigluOaiLimit), y = fminf(fmaxf(u, -kSwigluOaiLimit), kSwigluOaiLimit);
  return x / (1.0f + expf(-kSwigluOaiAlpha * x)) * (y + 1.0f);
}

// act[route * ff + r] = act(gate_e[r] . x_t + bg) * (up_e[r] . x_t + bu), gate and up of
// type T.
template <TensorType T>
__global__ void moe_gate_up_kernel(ExpertAddress gate, ExpertAddress up, const int32_t* experts,
                                   int64_t k, size_t row_bytes, int64_t ff, int64_t d,
                                   const float* x, ExpertGlu glu, float* act) {
  const int64_t r = blockIdx.x * static_cast<int64_t>(kWarps) + threadIdx.x / 32;
  const int64_t route = blockIdx.y;
  if (r >= ff)
    return;
  const int32_t e = experts[route];
  const float* xt = x + (route / k) * d;
  float g[kMatvecMaxTokens], u[kMatvecMaxTokens];
  rows::row_partial<T>(expert_matrix(gate, e) + r * row_bytes, d, xt, 1, d, g);
  rows::row_partial<T>(expert_matrix(up, e) + r * row_bytes, d, xt, 1, d, u);
  float gs = rows::warp_sum(g[0]), us = rows::warp_sum(u[0]);
  if ((threadIdx.x & 31) != 0)
    return;
  if (glu.gate_bias) {
    gs += glu.gate_bias[e * ff + r];
    us += glu.up_bias[e * ff + r];
  }
  act[route * ff + r] = glu.swiglu_oai ? swiglu_oai_times(gs, us) : rows::silu_times(gs, us);
}

// y[route * rows + r] = W_e[r] . x[(route / routes_per_x) * cols] (+ bias[e * rows + r]).
template <TensorType T>
__global__ void moe_grouped_matvec_kernel(ExpertAddress w, const int32_t* experts,
                                          int64_t routes_per_x, size_t row_bytes, int64_t rows,
                                          int64_t cols, const float* x, const float* bias,
                                          float* y) {
  const int64_t r = blockIdx.x * static_cast<int64_t>(kWarps) + threadIdx.x / 32;
  const int64_t route = blockIdx.y;
  if (r >= rows)
    return;
  const int32_t e = experts[route];
  float* out = y + route * rows + r;
  rows::row_dot<T>(expert_matrix(w, e) + r * row_bytes, cols, x + (route / routes_per_x) * cols,
                   1, cols, out, rows);
  if (bias && (threadIdx.x & 31) == 0) // row_dot's lane 0 wrote the dot just now
    *out += bias[e * rows + r];
}

// out[t][i] = sum over j in slot order of w[t * k + j] * eo[t * k + j][i]: the first term
// assigned, each next one added, as moe_accumulate did one launch per slot (and as the
// CPU sums, the slots being in expert-index order).
__global__ void moe_combine_kernel(const float* eo, const float* w, int64_t k, int64_t n_tokens,
                                   int64_t d, float* out) {
  const int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (i >= n_tokens * d)
    return;
  const int64_t t = i / d, c = i % d;
  const float* et = eo + t * k * d + c;
  const float* wt = w ? w + t * k : nullptr;
  float acc = wt ? wt[0] * et[0] : et[0];
  for (int64_t j = 1; j < k; ++j)
    acc = acc + (wt ? wt[j] * et[j * d] : et[j * d]);
  out[i] = acc;
}

__global__ void moe_weighted_rows_kernel(const float* x, const float* w, int64_t k,
                                         int64_t n_routes, int64_t d, float* rows) {
  const int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (i >= n_routes * d)
    return;
  const int64_t r = i / d, c = i % d;
  rows[i] = x[(r / k) * d + c] * w[r];
}

bool routes_fit(int64_t n_routes) { return n_routes <= kMaxGroupedRoutes; }

} // namespace

cudaError_t moe_gate_up(TensorType type, const ExpertAddress& gate, const ExpertAddress& up,
                        const int32_t* experts, int64_t k, size_t row_bytes, int64_t ff, int64_t d,
                        const float* x, int64_t n_routes, const ExpertGlu& glu, float* act,
                        cudaStream_t s) {
  if (ff <= 0 || n_routes <= 0)
    return cudaGetLastError();
  if (!routes_fit(n_routes) || k <= 0)
    return cudaErrorInvalidValue; // grid.y; the caller chunks
  const dim3 grid(blocks_for(ff, kWarps), static_cast<unsigned>(n_routes));
  if (!dispatch_type(type, [&](auto t) {
        moe_gate_up_kernel<decltype(t)::value>
            <<<grid, kWarps * 32, 0, s>>>(gate, up, experts, k, row_bytes, ff, d, x, glu, act);
      }))
    return cudaErrorInvalidValue;
  return cudaGetLastError();
}

cudaError_t moe_grouped_matvec(TensorType type, const ExpertAddress& w, const int32_t* experts,
                               int64_t routes_per_x, size_t row_bytes, int64_t rows, int64_t cols,
                               const float* x, int64_t n_routes, const float* bias, float* y,
                               cudaStream_t s) {
  if (rows <= 0 || n_routes <= 0)
    return cudaGetLastError();
  if (!routes_fit(n_routes) || routes_per_x <= 0)
    return cudaErrorInvalidValue;
  const dim3 grid(blocks_for(rows, kWarps), static_cast<unsigned>(n_routes));
  if (!dispatch_type(type, [&](auto t) {
        moe_grouped_matvec_kernel<decltype(t)::value>
            <<<grid, kWarps * 32, 0, s>>>(w, experts, routes_per_x, row_bytes, rows, cols, x,
                                          bias, y);
      }))
    return cudaErrorInvalidValue;
  return cudaGetLastError();
}

cudaError_t moe_weighted_rows(const float* x, const float* weights, int64_t k, int64_t n_routes,
                              int64_t d, float* rows, cudaStream_t s) {
  const int64_t n = n_routes * d;
  if (k <= 0)
    return cudaErrorInvalidValue;
  if (n > 0)
    moe_weighted_rows_kernel<<<blocks_for(n, 256), 256, 0, s>>>(x, weights, k, n_routes, d, rows);
  return cudaGetLastError();
}

cudaError_t moe_combine(const float* expert_out, const float* weights, int64_t k, int64_t n_tokens,
                        int64_t d, float* out, cudaStream_t s) {
  const int64_t n = n_tokens * d;
  if (k <= 0)
    return cudaErrorInvalidValue;
  if (n > 0)
    moe_combine_kernel<<<blocks_for(n, 256), 256, 0, s>>>(expert_out, weights, k, n_tokens, d, out);
  return cudaGetLastError();
}

} // namespace pshard::cuda::kernels
