// Per-token and elementwise kernels: RMSNorm, RoPE, SiLU·mul, residual, bias and gated
// adds, embedding
// gather, and the conversions feeding cuBLASLt. All memory-bound; written for clarity.
#include "runtime/backends/cuda/kernels/matvec_rows.cuh"
#include "runtime/backends/cuda/kernels/kernels.h"
#include "runtime/kernels/rope_math.h"

#include <optional>

namespace pshard::cuda::kernels {
namespace {

constexpr int kThreads = 256;

// A block's sum of v over its threads (kThreads), every thread getting it.
__device__ float block_sum(float v) {
  for (int o = 16; o > 0; o >>= 1)
    v += __shfl_xor_sync(0xffffffffu, v, o);
  __shared__ float warp_sums[kThreads / 32];
  __syncthreads(); // a previous call's readers are done with warp_sums
  if ((threadIdx.x & 31) == 0)
    warp_sums[threadIdx.x / 32] = v;
  __syncthreads();
  float total = 0.0f;
  for (int i = 0; i < kThreads / 32; ++i)
    total += warp_sums[i];
  return total;
}

// One block per token: sum of squares reduced in shared memory, then scale (times w[i],
// unless w is null).
__global__ void rms_norm_kernel(const float* x, const float* w, float* y, int64_t d, float eps) {
  const float* xr = x + blockIdx.x * d;
  float* yr = y + blockIdx.x * d;
  float sum = 0.0f;
  for (int64_t i = threadIdx.x; i < d; i += blockDim.x)
    sum += xr[i] * xr[i];
  const float scale = rsqrtf(block_sum(sum) / static_cast<float>(d) + eps);
  for (int64_t i = threadIdx.x; i < d; i += blockDim.x)
    yr[i] = xr[i] * scale * (w ? w[i] : 1.0f);
}

__global__ void layer_norm_kernel(const float* x, const float* w, const float* b, float* y,
                                  int64_t d, float eps) {
  const float* xr = x + blockIdx.x * d;
  float* yr = y + blockIdx.x * d;
  float sum = 0.0f;
  for (int64_t i = threadIdx.x; i < d; i += blockDim.x)
    sum += xr[i];
  const float mean = block_sum(sum) / static_cast<float>(d);
  float sq = 0.0f;
  for (int64_t i = threadIdx.x; i < d; i += blockDim.x)
    sq += (xr[i] - mean) * (xr[i] - mean);
  const float inv = rsqrtf(block_sum(sq) / static_cast<float>(d) + eps);
  for (int64_t i = threadIdx.x; i < d; i += blockDim.x)
    yr[i] = (xr[i] - mean) * inv * w[i] + (b ? b[i] : 0.0f); // ModernBERT: no bias
}

__global__ void gelu_erf_kernel(float* x, int64_t n) {
  const int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (i < n)
    x[i] = 0.5f * x[i] * (1.0f + erff(x[i] * kInvSqrt2));
}

// Each pair's powers, computed on the host (rope_math.h says why), passed by value and
// read in place (__grid_constant__: indexing it does not copy the 1 KiB to each thread).
struct RopePowersTable {
  RopePairPowers pair[kMaxRopePairs];
};

// The table for p, kept for the next launch: the powers depend on a few fields that stay
// the same for every RoPE launch of a model, and recomputing 128 powf per launch would
// cost a decode step ~100 launches' worth of host microseconds.
const RopePowersTable& powers_for(const RopeParams& p) {
  struct Key {
    int64_t rot_dim;
    float freq_base;
    bool llama3_keys; // llama3 divisors from the scaling keys
    float scaling_factor, low_freq_factor, high_freq_factor;
    int64_t n_ctx_orig;
    bool operator==(const Key& o) const { // CUDA 17: no defaulted comparison
      return rot_dim == o.rot_dim && freq_base == o.freq_base && llama3_keys == o.llama3_keys &&
             scaling_factor == o.scaling_factor && low_freq_factor == o.low_freq_factor &&
             high_freq_factor == o.high_freq_factor && n_ctx_orig == o.n_ctx_orig;
    }
    bool operator!=(const Key& o) const { return !(*this == o); }
  };
  thread_local std::optional<Key> last;
  thread_local RopePowersTable table;
  const bool llama3 = p.freq_factors == nullptr && p.scaling == RopeScaling::kLlama3;
  const Key key{p.rot_dim,
                p.freq_base,
                llama3,
                llama3 ? p.scaling_factor : 0.0f,
                llama3 ? p.low_freq_factor : 0.0f,
                llama3 ? p.high_freq_factor : 0.0f,
                llama3 ? p.n_ctx_orig : 0};
  if (last != key) {
    for (int64_t i = 0; i < p.rot_dim / 2 && i < kMaxRopePairs; ++i)
      table.pair[i] = rope_pair_powers(p, i);
    last = key;
  }
  return table;
}

// One thread per (token, head, pair); the angle from rope_math.h, as the CPU computes it.
__global__ void rope_kernel(float* x, int64_t n_tokens, int64_t n_heads, int64_t pos0,
                            RopeParams rp, YarnCorrDims corr,
                            const __grid_constant__ RopePowersTable powers) {
  const int64_t pairs = rp.rot_dim / 2;
  const int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (i >= n_tokens * n_heads * pairs)
    return;
  const int64_t p = i % pairs, h = (i / pairs) % n_heads, t = i / (pairs * n_heads);
  float c, s;
  rope_pair_cos_sin(rp, p, pos0 + t, corr, powers.pair[p], &c, &s);
  int64_t a, b;
  rope_pair_offsets(rp, p, &a, &b);
  float* head = x + (t * n_heads + h) * rp.head_dim;
  const float x0 = head[a], x1 = head[b];
  head[a] = x0 * c - x1 * s;
  head[b] = x0 * s + x1 * c;
}

__global__ void add_bias_kernel(float* y, const float* bias, int64_t n, int64_t d) {
  const int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (i < n)
    y[i] += bias[i % d];
}

__global__ void add_gated_kernel(float* y, const float* x, const float* gate, int64_t n,
                                 int64_t d) {
  const int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (i < n)
    y[i] += x[i] / (1.0f + expf(-gate[i / d]));
}

__global__ void sigmoid_mul_kernel(float* x, const float* g, int64_t n) {
  const int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (i < n)
    x[i] /= 1.0f + expf(-g[i]);
}

__global__ void silu_mul_kernel(const float* g, const float* u, float* out, int64_t n) {
  const int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (i < n)
    out[i] = rows::silu_times(g[i], u[i]);
}

__global__ void gelu_erf_mul_kernel(const float* g, const float* u, float* out, int64_t n) {
  const int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (i < n)
    out[i] = 0.5f * g[i] * (1.0f + erff(g[i] * kInvSqrt2)) * u[i];
}

__global__ void gelu_mul_kernel(const float* g, const float* u, float* out, int64_t n) {
  const int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (i < n) {
    const float x = g[i], z = x * (kGeluC1 + kGeluC3 * x * x);
    out[i] = x / (1.0f + expf(-z)) * u[i];
  }
}

__global__ void swiglu_oai_kernel(const float* g, const float* u, float* out, int64_t n) {
  const int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (i < n) {
    const float x = fminf(g[i], kSwigluOaiLimit);
    const float y = fminf(fmaxf(u[i], -kSwigluOaiLimit), kSwigluOaiLimit);
    out[i] = x / (1.0f + expf(-kSwigluOaiAlpha * x)) * (y + 1.0f);
  }
}

__global__ void scale_kernel(float* x, float factor, int64_t n) {
  const int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (i < n)
    x[i] *= factor;
}

__global__ void softcap_kernel(float* x, float cap, int64_t n) {
  const int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (i < n)
    x[i] = cap * tanhf(x[i] / cap);
}

__global__ void add_kernel(float* y, const float* x, int64_t n) {
  const int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (i < n)
    y[i] += x[i];
}

template <TensorType T>
__global__ void embed_kernel(const uint8_t* table, size_t row_bytes, int64_t cols,
                             const int32_t* ids, float* out) {
  const uint8_t* row = table + static_cast<size_t>(ids[blockIdx.y]) * row_bytes;
  const int64_t c = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (c < cols)
    out[blockIdx.y * cols + c] = weight_at<T>(row, c);
}

template <TensorType T>
__global__ void dequant_kernel(const uint8_t* w, size_t row_bytes, int64_t cols, __half* dst) {
  const int64_t c = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (c < cols)
    dst[blockIdx.y * cols + c] = __float2half(weight_at<T>(w + blockIdx.y * row_bytes, c));
}

__global__ void convert_kernel(const float* x, int64_t n, void* dst, bool to_bf16) {
  const int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (i >= n)
    return;
  if (to_bf16)
    static_cast<__nv_bfloat16*>(dst)[i] = __float2bfloat16(x[i]);
  else
    static_cast<__half*>(dst)[i] = __float2half(x[i]);
}

} // namespace

cudaError_t rms_norm(const float* x, const float* w, float* y, int64_t n_tokens, int64_t d,
                     float eps, cudaStream_t s) {
  if (n_tokens > 0)
    rms_norm_kernel<<<static_cast<unsigned>(n_tokens), kThreads, 0, s>>>(x, w, y, d, eps);
  return cudaGetLastError();
}

cudaError_t layer_norm(const float* x, const float* w, const float* b, float* y, int64_t n_tokens,
                       int64_t d, float eps, cudaStream_t s) {
  if (n_tokens > 0)
    layer_norm_kernel<<<static_cast<unsigned>(n_tokens), kThreads, 0, s>>>(x, w, b, y, d, eps);
  return cudaGetLastError();
}

cudaError_t gelu_erf(float* x, int64_t n, cudaStream_t s) {
  if (n > 0)
    gelu_erf_kernel<<<blocks_for(n, kThreads), kThreads, 0, s>>>(x, n);
  return cudaGetLastError();
}

cudaError_t rope(float* x, int64_t n_tokens, int64_t n_heads, int64_t pos0, const RopeParams& p,
                 cudaStream_t s) {
  const int64_t pairs = p.rot_dim / 2;
  if (pairs > kMaxRopePairs)
    return cudaErrorInvalidValue; // CudaOps::rope refuses it first, with the reason
  const int64_t n = n_tokens * n_heads * pairs;
  if (n <= 0)
    return cudaGetLastError();
  rope_kernel<<<blocks_for(n, kThreads), kThreads, 0, s>>>(x, n_tokens, n_heads, pos0, p,
                                                           yarn_corr_dims(p), powers_for(p));
  return cudaGetLastError();
}

cudaError_t add_bias(float* y, const float* bias, int64_t n_tokens, int64_t d, cudaStream_t s) {
  const int64_t n = n_tokens * d;
  if (n > 0)
    add_bias_kernel<<<blocks_for(n, kThreads), kThreads, 0, s>>>(y, bias, n, d);
  return cudaGetLastError();
}

cudaError_t add_gated(float* y, const float* x, const float* gate, int64_t n_tokens, int64_t d,
                      cudaStream_t s) {
  const int64_t n = n_tokens * d;
  if (n > 0)
    add_gated_kernel<<<blocks_for(n, kThreads), kThreads, 0, s>>>(y, x, gate, n, d);
  return cudaGetLastError();
}

cudaError_t sigmoid_mul(float* x, const float* g, int64_t n, cudaStream_t s) {
  if (n > 0)
    sigmoid_mul_kernel<<<blocks_for(n, kThreads), kThreads, 0, s>>>(x, g, n);
  return cudaGetLastError();
}

cudaError_t silu_mul(const float* g, const float* u, float* out, int64_t n, cudaStream_t s) {
  if (n > 0)
    silu_mul_kernel<<<blocks_for(n, kThreads), kThreads, 0, s>>>(g, u, out, n);
  return cudaGetLastError();
}

cudaError_t gelu_erf_mul(const float* g, const float* u, float* out, int64_t n, cudaStream_t s) {
  if (n > 0)
    gelu_erf_mul_kernel<<<blocks_for(n, kThreads), kThreads, 0, s>>>(g, u, out, n);
  return cudaGetLastError();
}

cudaError_t gelu_mul(const float* g, const float* u, float* out, int64_t n, cudaStream_t s) {
  if (n > 0)
    gelu_mul_kernel<<<blocks_for(n, kThreads), kThreads, 0, s>>>(g, u, out, n);
  return cudaGetLastError();
}

cudaError_t swiglu_oai(const float* g, const float* u, float* out, int64_t n, cudaStream_t s) {
  if (n > 0)
    swiglu_oai_kernel<<<blocks_for(n, kThreads), kThreads, 0, s>>>(g, u, out, n);
  return cudaGetLastError();
}

cudaError_t scale(float* x, float factor, int64_t n, cudaStream_t s) {
  if (n > 0)
    scale_kernel<<<blocks_for(n, kThreads), kThreads, 0, s>>>(x, factor, n);
  return cudaGetLastError();
}

cudaError_t softcap(float* x, float cap, int64_t n, cudaStream_t s) {
  if (n > 0 && cap > 0.0f)
    softcap_kernel<<<blocks_for(n, kThreads), kThreads, 0, s>>>(x, cap, n);
  return cudaGetLastError();
}

cudaError_t add(float* y, const float* x, int64_t n, cudaStream_t s) {
  if (n > 0)
    add_kernel<<<blocks_for(n, kThreads), kThreads, 0, s>>>(y, x, n);
  return cudaGetLastError();
}

cudaError_t embed_rows(TensorType type, const uint8_t* table, size_t row_bytes, int64_t cols,
                       const int32_t* ids, int64_t n_tokens, float* out, cudaStream_t s) {
  if (n_tokens <= 0 || cols <= 0)
    return cudaGetLastError();
  const dim3 grid(blocks_for(cols, kThreads), static_cast<unsigned>(n_tokens));
  if (!dispatch_type(type, [&](auto t) {
        embed_kernel<decltype(t)::value>
            <<<grid, kThreads, 0, s>>>(table, row_bytes, cols, ids, out);
      }))
    return cudaErrorInvalidValue;
  return cudaGetLastError();
}

cudaError_t dequantize_to_half(TensorType type, const uint8_t* w, size_t row_bytes, int64_t rows,
                               int64_t cols, void* dst, cudaStream_t s) {
  if (rows <= 0 || cols <= 0)
    return cudaGetLastError();
  const dim3 grid(blocks_for(cols, kThreads), static_cast<unsigned>(rows));
  if (!dispatch_type(type, [&](auto t) {
        dequant_kernel<decltype(t)::value>
            <<<grid, kThreads, 0, s>>>(w, row_bytes, cols, static_cast<__half*>(dst));
      }))
    return cudaErrorInvalidValue;
  return cudaGetLastError();
}

cudaError_t convert_floats(const float* x, int64_t n, void* dst, bool to_bf16, cudaStream_t s) {
  if (n > 0)
    convert_kernel<<<blocks_for(n, kThreads), kThreads, 0, s>>>(x, n, dst, to_bf16);
  return cudaGetLastError();
}

} // namespace pshard::cuda::kernels
