// Matmul and MoE dispatch of the CUDA backend: matrix-vector kernels for decode,
// cuBLASLt for prefill (cuda_ops.h says which path runs when), and the MoE block routed
// on the device so the host never waits for the router.
#include "runtime/backends/cuda/cuda_ops.h"
#include "runtime/backends/cuda/kernels/kernels.h"

#include <algorithm>
#include <vector>

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

// Routing on the device (softmax, top-k, renormalise) — or the host's routes when the
// executor routed the pass and copied only those experts (MoeDispatch::routes) — then
// for each of the k routes of every token: gate and up (each token with its own
// expert's weights), SiLU·mul, down, and the weighted accumulation — in expert-index
// order per token, as the CPU sums.
void CudaOps::moe_dispatch(const float* x, float* router_logits, const MoeDispatch& moe,
                           int64_t n_tokens, float* out) {
  const int64_t n_expert = moe.gate.n_expert, k = moe.n_expert_used;
  const int64_t d = moe.n_embd, ff = moe.n_ff;
  if (n_tokens <= 0 || !need_workspace("moe_dispatch"))
    return;
  if (3 * n_expert > CudaWorkspace::kExpertPtrs || k <= 0) {
    sticky_.note(unsupported("CUDA moe_dispatch: " + std::to_string(n_expert) + " experts, " +
                             std::to_string(k) + " used (at most " +
                             std::to_string(CudaWorkspace::kExpertPtrs / 3) + " experts)"));
    return;
  }
  const MoeRoutes* host = moe.routes.get();
  if (host && (host->n_tokens != n_tokens || host->k != k ||
               host->experts.size() != static_cast<size_t>(n_tokens * k) ||
               host->weights.size() != host->experts.size())) {
    sticky_.note(internal_error("CUDA moe_dispatch: the host's routes cover " +
                                std::to_string(host->n_tokens) + " tokens x " +
                                std::to_string(host->k) + ", the pass " +
                                std::to_string(n_tokens) + " x " + std::to_string(k)));
    return;
  }
  // Expert weight addresses (placed slots or strided), copied in stream order; the host
  // vector may go away on return (pageable copies are staged before the call returns).
  std::vector<const uint8_t*> ptrs(static_cast<size_t>(3 * n_expert));
  for (int64_t e = 0; e < n_expert; ++e) {
    ptrs[static_cast<size_t>(e)] = moe.gate.expert(e).data;
    ptrs[static_cast<size_t>(n_expert + e)] = moe.up.expert(e).data;
    ptrs[static_cast<size_t>(2 * n_expert + e)] = moe.down.expert(e).data;
  }
  note(cudaMemcpyAsync(ws_.expert_ptrs, ptrs.data(), ptrs.size() * sizeof(void*),
                       cudaMemcpyHostToDevice, stream_),
       "moe expert table", __LINE__);
  const uint8_t* const* gate_ptrs = ws_.expert_ptrs;
  const uint8_t* const* up_ptrs = gate_ptrs + n_expert;
  const uint8_t* const* down_ptrs = up_ptrs + n_expert;
  const MatrixView& g = moe.gate.first;
  const MatrixView& u = moe.up.first;
  const MatrixView& dn = moe.down.first;
  const int64_t chunk = std::min<int64_t>(CudaWorkspace::kRoutes / k, 65535);
  for (int64_t t0 = 0; t0 < n_tokens; t0 += chunk) {
    const int64_t nc = std::min(chunk, n_tokens - t0);
    if (host) {
      // Host memory: staged by the driver before the call returns, like the ids.
      const size_t n_routes = static_cast<size_t>(nc * k);
      note(cudaMemcpyAsync(ws_.route_experts, host->experts.data() + t0 * k,
                           n_routes * sizeof(int32_t), cudaMemcpyHostToDevice, stream_),
           "moe host routes", __LINE__);
      note(cudaMemcpyAsync(ws_.route_weights, host->weights.data() + t0 * k,
                           n_routes * sizeof(float), cudaMemcpyHostToDevice, stream_),
           "moe host route weights", __LINE__);
    } else {
      note(kernels::moe_route(router_logits + t0 * n_expert, nc, n_expert, k, moe.normalize_weights,
                              ws_.route_experts,
                              ws_.route_weights, stream_),
           "moe_route", __LINE__);
    }
    for (int64_t j = 0; j < k; ++j) {
      const int32_t* ex = ws_.route_experts + j;
      note(kernels::matvec_routed(g.type, gate_ptrs, ex, k, g.row_bytes, ff, d, x + t0 * d, nc,
                                  moe.gate_buf, stream_),
           "moe gate", __LINE__);
      note(kernels::matvec_routed(u.type, up_ptrs, ex, k, u.row_bytes, ff, d, x + t0 * d, nc,
                                  moe.up_buf, stream_),
           "moe up", __LINE__);
      note(kernels::silu_mul(moe.gate_buf, moe.up_buf, moe.gate_buf, nc * ff, stream_),
           "moe silu_mul", __LINE__);
      note(kernels::matvec_routed(dn.type, down_ptrs, ex, k, dn.row_bytes, d, ff, moe.gate_buf, nc,
                                  moe.expert_out, stream_),
           "moe down", __LINE__);
      note(kernels::moe_accumulate(moe.expert_out, ws_.route_weights + j, k, nc, d, j == 0,
                                   out + t0 * d, stream_),
           "moe accumulate", __LINE__);
    }
  }
}

} // namespace pshard::cuda
