// Matrix-vector products for decode: each warp computes one output row for up to
// kMatvecMaxTokens tokens, so a weight row is read from VRAM once per pass whatever the
// token count — decode is bound by reading the weights, not by arithmetic
// (matvec_rows.cuh: the per-row dot products). Activations stay float (no activation
// quantization), so results differ from the CPU's quantized-activation path by that
// rounding only.
#include "runtime/backends/cuda/kernels/matvec_rows.cuh"
#include "runtime/backends/cuda/kernels/kernels.h"

namespace pshard::cuda::kernels {
namespace {

using rows::kWarps;
using rows::row_dot;

template <TensorType T>
__global__ void matvec_kernel(const uint8_t* w, size_t row_bytes, int64_t rows, int64_t cols,
                              const float* x, int nt, float* y, int64_t ldy) {
  const int64_t r = blockIdx.x * static_cast<int64_t>(kWarps) + threadIdx.x / 32;
  if (r < rows)
    row_dot<T>(w + r * row_bytes, cols, x, nt, cols, y + r, ldy);
}

} // namespace

cudaError_t matvec(TensorType type, const uint8_t* w, size_t row_bytes, int64_t rows, int64_t cols,
                   const float* x, int64_t n_tokens, float* y, int64_t ldy, cudaStream_t s) {
  if (n_tokens > kMatvecMaxTokens)
    return cudaErrorInvalidValue;
  if (rows <= 0 || n_tokens <= 0)
    return cudaGetLastError();
  const unsigned grid = blocks_for(rows, kWarps);
  const int nt = static_cast<int>(n_tokens);
  if (!dispatch_type(type, [&](auto t) {
        matvec_kernel<decltype(t)::value>
            <<<grid, kWarps * 32, 0, s>>>(w, row_bytes, rows, cols, x, nt, y, ldy);
      }))
    return cudaErrorInvalidValue;
  return cudaGetLastError();
}

} // namespace pshard::cuda::kernels
