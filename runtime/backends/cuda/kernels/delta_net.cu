// Gated DeltaNet on the GPU (runtime/kernels/delta_net.h has the recurrence): the conv one
// thread per channel, the q/k L2 norms one warp per head row, and the recurrence one block
// per v head whose threads each own one column of the head's state (its d_k values, read
// and written in place), walking the pass's tokens in order.
#include "runtime/backends/cuda/kernels/block_formats.cuh"
#include "runtime/backends/cuda/kernels/kernels.h"

namespace pshard::cuda::kernels {
namespace {

__device__ float sigmoidf_(float x) { return 1.0f / (1.0f + expf(-x)); }

__global__ void conv_kernel(DeltaNetDims d, const float* conv, float* mixed, float* conv_state,
                            bool fresh, int64_t n) {
  const int64_t c = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  const int64_t c_dim = d.conv_dim(), taps = d.conv_kernel, kept = taps - 1;
  if (c >= c_dim)
    return;
  constexpr int64_t kMaxTaps = 8;
  float window[kMaxTaps]; // the last kept inputs, oldest first
  for (int64_t j = 0; j < kept; ++j)
    window[j] = fresh ? 0.0f : conv_state[j * c_dim + c];
  const float* w = conv + c * taps;
  for (int64_t t = 0; t < n; ++t) {
    const float x = mixed[t * c_dim + c];
    float acc = w[kept] * x;
    for (int64_t j = 0; j < kept; ++j)
      acc += w[j] * window[j];
    for (int64_t j = 0; j + 1 < kept; ++j)
      window[j] = window[j + 1];
    if (kept > 0)
      window[kept - 1] = x;
    mixed[t * c_dim + c] = acc * sigmoidf_(acc);
  }
  for (int64_t j = 0; j < kept; ++j)
    conv_state[j * c_dim + c] = window[j];
}

// One warp per row: rows 2i (q, scaled) and 2i + 1 (k) of token i / n_k, head i % n_k.
__global__ void l2_norm_kernel(DeltaNetDims d, float* mixed, int64_t n) {
  const int64_t row = blockIdx.x * static_cast<int64_t>(blockDim.x / 32) + threadIdx.x / 32;
  const int lane = threadIdx.x % 32;
  if (row >= 2 * n * d.n_k_heads)
    return;
  const int64_t i = row / 2, t = i / d.n_k_heads, h = i % d.n_k_heads;
  const bool is_k = row % 2 == 1;
  float* x = mixed + t * d.conv_dim() + (is_k ? d.key_dim() : 0) + h * d.d_k;
  float sum = 0.0f;
  for (int64_t j = lane; j < d.d_k; j += 32)
    sum += x[j] * x[j];
  for (int off = 16; off > 0; off /= 2)
    sum += __shfl_xor_sync(0xffffffffu, sum, off);
  const float scale = is_k ? 1.0f : rsqrtf(static_cast<float>(d.d_k));
  const float inv = scale / fmaxf(sqrtf(sum), d.eps);
  for (int64_t j = lane; j < d.d_k; j += 32)
    x[j] *= inv;
}

__global__ void recurrence_kernel(DeltaNetDims d, const float* ssm_a, const float* dt_bias,
                                  const float* mixed, const float* b, const float* a,
                                  int64_t ba_stride, DeltaNetState st, bool fresh, int64_t n,
                                  float* out) {
  const int64_t h = blockIdx.x, j = threadIdx.x, dk = d.d_k, dv = d.d_v;
  float* s = st.head(h, d.head_state_floats());
  if (j >= dv)
    return;
  if (fresh)
    for (int64_t i = 0; i < dk; ++i)
      s[i * dv + j] = 0.0f;
  const int64_t kh = d.k_head(h);
  for (int64_t t = 0; t < n; ++t) {
    const float* q = mixed + t * d.conv_dim() + kh * dk;
    const float* k = q + d.key_dim();
    const float v = mixed[t * d.conv_dim() + 2 * d.key_dim() + h * dv + j];
    const float beta = sigmoidf_(b[t * ba_stride + d.b_index(h)]);
    const float x = a[t * ba_stride + d.a_index(h)] + dt_bias[h];
    const float softplus = x > 20.0f ? x : log1pf(expf(x));
    const float decay = expf(softplus * ssm_a[h]);
    float kv = 0.0f;
    for (int64_t i = 0; i < dk; ++i) {
      const float si = s[i * dv + j] * decay;
      s[i * dv + j] = si;
      kv += si * k[i];
    }
    const float delta = (v - kv) * beta;
    float o = 0.0f;
    for (int64_t i = 0; i < dk; ++i) {
      const float si = s[i * dv + j] + k[i] * delta;
      s[i * dv + j] = si;
      o += si * q[i];
    }
    out[t * d.value_dim() + h * dv + j] = o;
  }
}

} // namespace

cudaError_t delta_net(const DeltaNetDims& d, const float* conv, const float* ssm_a,
                      const float* dt_bias, float* mixed, const float* b, const float* a,
                      int64_t ba_stride, const DeltaNetState& state, bool fresh, int64_t n,
                      float* out, cudaStream_t s) {
  if (n <= 0)
    return cudaSuccess;
  if (d.conv_kernel < 1 || d.conv_kernel > 8 || d.d_v > 1024)
    return cudaErrorInvalidValue;
  constexpr int kThreads = 256;
  conv_kernel<<<blocks_for(d.conv_dim(), kThreads), kThreads, 0, s>>>(d, conv, mixed, state.conv,
                                                                      fresh, n);
  const int64_t rows = 2 * n * d.n_k_heads;
  l2_norm_kernel<<<blocks_for(rows * 32, kThreads), kThreads, 0, s>>>(d, mixed, n);
  recurrence_kernel<<<static_cast<unsigned>(d.n_v_heads), static_cast<unsigned>(d.d_v), 0, s>>>(
      d, ssm_a, dt_bias, mixed, b, a, ba_stride, state, fresh, n, out);
  return cudaGetLastError();
}

} // namespace pshard::cuda::kernels
