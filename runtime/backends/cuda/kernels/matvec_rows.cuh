// The warp-per-row dot products shared by the matrix-vector kernels (matvec.cu) and the
// grouped MoE kernels (moe_grouped.cu): one warp computes one output row for up to
// kMatvecMaxTokens tokens; lane l takes the row's 32-value groups l, l + 32, … (for the
// legacy types exactly the blocks, for the K-quants one sub-block of a super-block, eight
// neighbouring lanes sharing its super-scales). Activations stay float.
#pragma once

#include "runtime/backends/cuda/kernels/block_formats.cuh"
#include "runtime/backends/cuda/kernels/kernels.h"

namespace pshard::cuda::kernels::rows {

constexpr int kWarps = 4; // rows per block

// The 32 values of group g of a row (zero past cols, which float rows may end within).
template <TensorType T>
__device__ __forceinline__ void load_group(const uint8_t* row, int64_t g, int64_t cols,
                                           float (&wv)[32]) {
  if constexpr (T == TensorType::kQ8_0) {
    const uint8_t* b = row + g * 34;
    const float d = half_at(b);
#pragma unroll
    for (int i = 0; i < 32; ++i)
      wv[i] = d * static_cast<float>(static_cast<int8_t>(b[2 + i]));
  } else if constexpr (T == TensorType::kQ4_0) {
    const uint8_t* b = row + g * 18;
    const float d = half_at(b);
#pragma unroll
    for (int j = 0; j < 16; ++j) {
      const uint8_t q = b[2 + j];
      wv[j] = d * static_cast<float>((q & 15) - 8);
      wv[j + 16] = d * static_cast<float>((q >> 4) - 8);
    }
  } else if constexpr (!BlockOf<T>::kFloat) {
    // Other block types: group g is a legacy block, or 32 values of a super-block
    // (lanes next to each other read the same super-block, so the loads coalesce).
    using B = BlockOf<T>;
    const uint8_t* b = row + (g * 32 / B::kValues) * B::kBytes;
    const int base = static_cast<int>(g * 32 % B::kValues);
#pragma unroll
    for (int i = 0; i < 32; ++i)
      wv[i] = value_at<T>(b, base + i);
  } else {
#pragma unroll
    for (int i = 0; i < 32; ++i) {
      const int64_t c = g * 32 + i;
      wv[i] = c < cols ? weight_at<T>(row, c) : 0.0f;
    }
  }
}

// Sum over the warp's lanes of acc[t] for each token; lane 0 holds the result.
__device__ __forceinline__ float warp_sum(float v) {
  for (int o = 16; o > 0; o >>= 1)
    v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}

__device__ __forceinline__ void write_sums(const float (&acc)[kMatvecMaxTokens], int nt, float* y,
                                           int64_t ldy) {
#pragma unroll
  for (int t = 0; t < kMatvecMaxTokens; ++t) {
    if (t >= nt)
      break;
    const float v = warp_sum(acc[t]);
    if ((threadIdx.x & 31) == 0)
      y[t * ldy] = v;
  }
}

// The 16 bytes of a float row as values: 4 f32 or 8 f16/bf16.
template <TensorType T> __device__ __forceinline__ void unpack16(const uint4& raw, float* wv) {
  const unsigned words[4] = {raw.x, raw.y, raw.z, raw.w};
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    if constexpr (T == TensorType::kF32) {
      wv[i] = __uint_as_float(words[i]);
    } else if constexpr (T == TensorType::kF16) {
      const float2 f = __half22float2(*reinterpret_cast<const __half2*>(&words[i]));
      wv[2 * i] = f.x;
      wv[2 * i + 1] = f.y;
    } else {
      const float2 f = __bfloat1622float2(*reinterpret_cast<const __nv_bfloat162*>(&words[i]));
      wv[2 * i] = f.x;
      wv[2 * i + 1] = f.y;
    }
  }
}

// This lane's partial sums of dot(row, x[t]) for nt tokens (warp_sum completes them).
template <TensorType T>
__device__ __forceinline__ void row_partial(const uint8_t* row, int64_t cols, const float* x, int nt,
                                            int64_t ldx, float (&acc)[kMatvecMaxTokens]) {
  const int lane = threadIdx.x & 31;
#pragma unroll
  for (int t = 0; t < kMatvecMaxTokens; ++t)
    acc[t] = 0.0f;
  if constexpr (T == TensorType::kF32 || T == TensorType::kF16 || T == TensorType::kBF16) {
    // Float rows that allow it: lane l reads 16-byte chunks l, l + 32, …, so each warp
    // load is 512 contiguous bytes (the whole row streams coalesced). The condition is
    // the same for the whole warp, so the early return keeps it converged.
    constexpr int kPer = T == TensorType::kF32 ? 4 : 8;
    if ((reinterpret_cast<uintptr_t>(row) & 15) == 0 && cols % kPer == 0) {
      const int64_t chunks = cols / kPer;
      for (int64_t c = lane; c < chunks; c += 32) {
        float wv[kPer];
        unpack16<T>(reinterpret_cast<const uint4*>(row)[c], wv);
#pragma unroll
        for (int t = 0; t < kMatvecMaxTokens; ++t) {
          if (t >= nt)
            break;
          const float* xt = x + t * ldx + c * kPer;
          float s = 0.0f;
#pragma unroll
          for (int i = 0; i < kPer; ++i)
            s += wv[i] * xt[i];
          acc[t] += s;
        }
      }
      return;
    }
  }
  const int64_t groups = (cols + 31) / 32;
  for (int64_t g = lane; g < groups; g += 32) {
    float wv[32];
    load_group<T>(row, g, cols, wv);
    const int64_t base = g * 32;
    const int n_valid = static_cast<int>(cols - base < 32 ? cols - base : 32);
#pragma unroll
    for (int t = 0; t < kMatvecMaxTokens; ++t) {
      if (t >= nt)
        break;
      const float* xt = x + t * ldx + base;
      float s = 0.0f;
      if (n_valid == 32) {
#pragma unroll
        for (int i = 0; i < 32; ++i)
          s += wv[i] * xt[i];
      } else {
        for (int i = 0; i < n_valid; ++i)
          s += wv[i] * xt[i];
      }
      acc[t] += s;
    }
  }
}

// y[t * ldy] = dot(row, x[t]) for nt tokens (x[t] at x + t * ldx); lane 0 writes.
template <TensorType T>
__device__ __forceinline__ void row_dot(const uint8_t* row, int64_t cols, const float* x, int nt,
                                        int64_t ldx, float* y, int64_t ldy) {
  float acc[kMatvecMaxTokens];
  row_partial<T>(row, cols, x, nt, ldx, acc);
  write_sums(acc, nt, y, ldy);
}

// SiLU(g) * u, the formula every SiLU-gated kernel uses (one place, so the fused MoE
// kernel rounds as silu_mul does).
__device__ __forceinline__ float silu_times(float g, float u) { return g / (1.0f + expf(-g)) * u; }

} // namespace pshard::cuda::kernels::rows
