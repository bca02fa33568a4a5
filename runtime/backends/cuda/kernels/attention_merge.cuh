// Flash-decoding's merge (attention.cu): the chunks of one (token, head) combined into its
// output. Each chunk's partial is laid out as
//
//   [ acc[0] … acc[hd-1] | m | l ]     hd + 2 floats, chunk after chunk
//
// acc the chunk's softmax-weighted value sum left unnormalised against its own running
// max m, l its sum of exp(score - m) (m = -inf, l = 0, acc = 0 for a chunk holding none
// of the token's positions). Rescaled to the overall max M:
//
//   out[d] = sum_c acc_c[d] exp(m_c - M) / sum_c l_c exp(m_c - M)
//
// __host__ __device__ (like block_formats.cuh, compiled by nvcc only), so the arithmetic
// is checked on the host too (no GPU needed).
#pragma once

#include <cmath>
#include <cstdint>

namespace pshard::cuda::kernels {

// The overall max M and 1 / (sum of the rescaled l): what every output value needs.
struct MergeScale {
  float max;
  float inv_sum;
};

__host__ __device__ inline MergeScale attention_merge_scale(const float* parts, int64_t n_chunks,
                                                            int64_t hd) {
  float m = -INFINITY;
  for (int64_t c = 0; c < n_chunks; ++c)
    m = fmaxf(m, parts[c * (hd + 2) + hd]);
  float l = 0.0f;
  for (int64_t c = 0; c < n_chunks; ++c)
    l += parts[c * (hd + 2) + hd + 1] * expf(parts[c * (hd + 2) + hd] - m);
  return {m, 1.0f / l};
}

// Output value d (0 <= d < hd).
__host__ __device__ inline float attention_merge_value(const float* parts, int64_t n_chunks,
                                                       int64_t hd, MergeScale s, int64_t d) {
  float sum = 0.0f;
  for (int64_t c = 0; c < n_chunks; ++c)
    sum += parts[c * (hd + 2) + d] * expf(parts[c * (hd + 2) + hd] - s.max);
  return sum * s.inv_sum;
}

} // namespace pshard::cuda::kernels
