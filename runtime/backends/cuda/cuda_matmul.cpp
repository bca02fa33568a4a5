// Matmuls of the CUDA backend: matrix-vector kernels for decode, cuBLASLt for prefill
// (cuda_ops.h says which path runs when). The MoE dispatch is in cuda_moe.cpp.
#include "runtime/backends/cuda/cuda_ops.h"
#include "runtime/backends/cuda/kernels/kernels.h"

#include <algorithm>

namespace pshard::cuda {
namespace {

bool is_quantized(TensorType t) { return tensor_type_traits(t).block_values > 1; }

} // namespace

void CudaOps::matmul(const MatrixView& w, const float* x, int64_t n_tokens, float* y) {
  if (n_tokens <= 0 || w.rows <= 0)
    return;
  if (n_tokens <= kernels::kMatvecMaxTokens) {
    note(kernels::matvec(w.type, w.data, w.row_bytes, w.rows, w.cols, x, n_tokens, y, w.rows,
                         stream_),
         "matvec", __LINE__);
    return;
  }
  if (!need_workspace("matmul"))
    return;
  sticky_.note(is_quantized(w.type) ? gemm_quant(w, x, n_tokens, y)
                                    : gemm_float(w, x, n_tokens, y));
}

// f32: one GEMM. f16/bf16: activations converted to the weight's type, in token chunks
// that fit the workspace.
Status CudaOps::gemm_float(const MatrixView& w, const float* x, int64_t n_tokens, float* y) {
  GemmArgs g;
  g.a = w.data;
  g.m = w.rows;
  g.k = w.cols;
  g.ldd = w.rows;
  if (w.type == TensorType::kF32) {
    g.type = CUDA_R_32F;
    g.lda = static_cast<int64_t>(w.row_bytes / 4);
    g.b = x;
    g.n = n_tokens;
    g.d = y;
    return lt_.gemm(g, stream_);
  }
  const bool bf16 = w.type == TensorType::kBF16;
  g.type = bf16 ? CUDA_R_16BF : CUDA_R_16F;
  g.lda = static_cast<int64_t>(w.row_bytes / 2);
  const int64_t chunk = std::max<int64_t>(1, CudaWorkspace::kActBytes / 2 / w.cols);
  for (int64_t t0 = 0; t0 < n_tokens; t0 += chunk) {
    g.n = std::min(chunk, n_tokens - t0);
    PSHARD_CUDA_RETURN_IF_ERROR(
        kernels::convert_floats(x + t0 * w.cols, g.n * w.cols, ws_.act, bf16, stream_));
    g.b = ws_.act;
    g.d = y + t0 * w.rows;
    PSHARD_RETURN_IF_ERROR(lt_.gemm(g, stream_));
  }
  return Status::ok_status();
}

// Block types: activations to f16 per token chunk, weights dequantized to f16 per row
// chunk, one GEMM per (token chunk, row chunk) writing a block of y.
Status CudaOps::gemm_quant(const MatrixView& w, const float* x, int64_t n_tokens, float* y) {
  const int64_t token_chunk = std::max<int64_t>(1, CudaWorkspace::kActBytes / 2 / w.cols);
  const int64_t row_chunk = std::clamp<int64_t>(CudaWorkspace::kWeightBytes / 2 / w.cols, 1, 65535);
  GemmArgs g;
  g.type = CUDA_R_16F;
  g.lda = w.cols;
  g.k = w.cols;
  g.ldd = w.rows;
  g.a = ws_.weight;
  g.b = ws_.act;
  for (int64_t t0 = 0; t0 < n_tokens; t0 += token_chunk) {
    g.n = std::min(token_chunk, n_tokens - t0);
    PSHARD_CUDA_RETURN_IF_ERROR(
        kernels::convert_floats(x + t0 * w.cols, g.n * w.cols, ws_.act, false, stream_));
    for (int64_t r0 = 0; r0 < w.rows; r0 += row_chunk) {
      g.m = std::min(row_chunk, w.rows - r0);
      PSHARD_CUDA_RETURN_IF_ERROR(kernels::dequantize_to_half(
          w.type, w.data + r0 * w.row_bytes, w.row_bytes, g.m, w.cols, ws_.weight, stream_));
      g.d = y + t0 * w.rows + r0;
      PSHARD_RETURN_IF_ERROR(lt_.gemm(g, stream_));
    }
  }
  return Status::ok_status();
}

} // namespace pshard::cuda
