// The per-token and elementwise Ops of the CUDA backend (matmul and MoE are in
// cuda_matmul.cpp): thin launchers over kernels/, with failures kept sticky.
#include "runtime/backends/cuda/cuda_ops.h"

#include "runtime/backends/cuda/kernels/kernels.h"

#include <algorithm>
#include <vector>

namespace pshard::cuda {

CudaOps::CudaOps(cudaStream_t stream, StickyError& sticky, LtMatmul& lt)
    : stream_(stream), sticky_(sticky), lt_(lt) {
  auto staging = MoeHostStaging::create(CudaWorkspace::kExpertPtrs, CudaWorkspace::kRoutes);
  if (staging.ok())
    staging_ = std::move(*staging);
  else
    staging_status_ = Status(staging.status().code(),
                             "CUDA moe_dispatch: no pinned staging for MoE tables and routes: " +
                                 staging.status().message());
}

void CudaOps::note(cudaError_t e, const char* what, int line) {
  if (e != cudaSuccess)
    sticky_.note(cuda_status(e, what, __FILE__, line));
}

bool CudaOps::need_workspace(const char* op) {
  if (ws_.ready())
    return true;
  sticky_.note(invalid_argument(std::string("CUDA ") + op +
                                " without a kernel workspace: the device's set_workspace was "
                                "not given the plan's workspace buffer, or it was too small"));
  return false;
}

void CudaOps::rms_norm(const float* x, const float* weight, float* y, int64_t n_tokens, int64_t d,
                       float eps) {
  note(kernels::rms_norm(x, weight, y, n_tokens, d, eps, stream_), "rms_norm", __LINE__);
}

void CudaOps::layer_norm(const float* x, const float* weight, const float* bias, float* y,
                         int64_t n_tokens, int64_t d, float eps) {
  note(kernels::layer_norm(x, weight, bias, y, n_tokens, d, eps, stream_), "layer_norm", __LINE__);
}

void CudaOps::rope(float* x, int64_t n_tokens, int64_t n_heads, int64_t pos0, const RopeParams& p) {
  if (p.positions) { // text-only M-RoPE (null positions) is plain NeoX and runs here
    sticky_.note(unsupported("CUDA rope: M-RoPE image positions (qwen2vl with an image) are "
                             "not implemented on this backend yet; run with --backend cpu"));
    return;
  }
  if (p.rot_dim / 2 > kernels::kMaxRopePairs) {
    sticky_.note(unsupported("CUDA rope: " + std::to_string(p.rot_dim) +
                             " rotated dimensions a head, this backend takes at most " +
                             std::to_string(2 * kernels::kMaxRopePairs) +
                             "; run with --backend cpu"));
    return;
  }
  note(kernels::rope(x, n_tokens, n_heads, pos0, p, stream_), "rope", __LINE__);
}

namespace {

kernels::KvRows rows_of(const KvView& kv) {
  kernels::KvRows r;
  r.k = kv.k;
  r.v = kv.v;
  r.kv_dim = kv.kv_dim;
  r.v_dim = kv.v_values();
  r.k_row_bytes = kv.k_row_bytes();
  r.v_row_bytes = kv.v_row_bytes();
  r.k_type = kv.k_type;
  r.v_type = kv.v_type;
  r.pages = kv.pages;
  r.page_tokens = kv.page_tokens;
  r.ring = kv.ring;
  return r;
}

} // namespace

void CudaOps::kv_append(const KvView& kv, const float* k, const float* v, int64_t pos0,
                        int64_t n_tokens) {
  if (!kv.pages && kv.k_type == TensorType::kF32 && kv.v_type == TensorType::kF32 &&
      (kv.ring == 0 || pos0 % kv.ring + n_tokens <= kv.ring)) { // rows in one run
    const int64_t row0 = kv.ring > 0 ? pos0 % kv.ring : pos0;
    const auto bytes = [](int64_t floats) { return static_cast<size_t>(floats) * sizeof(float); };
    note(cudaMemcpyAsync(kv.k + bytes(row0 * kv.kv_dim), k, bytes(n_tokens * kv.kv_dim),
                         cudaMemcpyDeviceToDevice, stream_),
         "kv_append K", __LINE__);
    note(cudaMemcpyAsync(kv.v + bytes(row0 * kv.v_values()), v, bytes(n_tokens * kv.v_values()),
                         cudaMemcpyDeviceToDevice, stream_),
         "kv_append V", __LINE__);
    return;
  }
  const kernels::KvRows r = rows_of(kv);
  note(kernels::kv_store(k, n_tokens, r, false, pos0, stream_), "kv_append K", __LINE__);
  note(kernels::kv_store(v, n_tokens, r, true, pos0, stream_), "kv_append V", __LINE__);
}

void CudaOps::attention(const float* q, const KvView& kv, const AttentionDims& shape, int64_t pos0,
                        int64_t n_tokens, float* out) {
  if (shape.value_dim() != shape.head_dim) {
    sticky_.note(unsupported(
        "CUDA attention: values narrower than keys (DeepSeek's latent attention: keys of " +
        std::to_string(shape.head_dim) + " values, values of " +
        std::to_string(shape.value_dim()) +
        ") are not implemented on this backend yet; run with --backend cpu"));
    return;
  }
  // Decode splits the positions across blocks, their partials in the workspace's
  // activation scratch (the GEMMs' and MoE's, idle while attention runs in stream order).
  auto* scratch = ws_.ready() ? reinterpret_cast<float*>(ws_.act) : nullptr;
  kernels::AttentionShape dims{shape.n_head, shape.n_head_kv,     shape.head_dim,
                               shape.window, shape.score_scale(), shape.softcap};
  dims.temp_scale = shape.temp_scale;
  dims.temp_length = shape.temp_length;
  dims.sinks = shape.sinks;
  dims.causal = shape.causal;
  dims.symmetric_window = shape.symmetric_window;
  dims.chunked = shape.chunked;
  note(kernels::attention(q, rows_of(kv), dims, pos0, n_tokens, out, stream_, scratch,
                          CudaWorkspace::kScratchBytes),
       "attention", __LINE__);
}

void CudaOps::gelu(float* x, int64_t n) {
  note(kernels::gelu_erf(x, n, stream_), "gelu", __LINE__);
}

void CudaOps::silu_mul(const float* gate, const float* up, float* out, int64_t n) {
  note(kernels::silu_mul(gate, up, out, n, stream_), "silu_mul", __LINE__);
}

void CudaOps::gelu_erf_mul(const float* gate, const float* up, float* out, int64_t n) {
  note(kernels::gelu_erf_mul(gate, up, out, n, stream_), "gelu_erf_mul", __LINE__);
}

void CudaOps::gelu_mul(const float* gate, const float* up, float* out, int64_t n) {
  note(kernels::gelu_mul(gate, up, out, n, stream_), "gelu_mul", __LINE__);
}

void CudaOps::swiglu_oai(const float* gate, const float* up, float* out, int64_t n) {
  note(kernels::swiglu_oai(gate, up, out, n, stream_), "swiglu_oai", __LINE__);
}

void CudaOps::scale(float* x, float s, int64_t n) {
  note(kernels::scale(x, s, n, stream_), "scale", __LINE__);
}

void CudaOps::softcap(float* x, float cap, int64_t n) {
  note(kernels::softcap(x, cap, n, stream_), "softcap", __LINE__);
}

void CudaOps::add(float* y, const float* x, int64_t n) {
  note(kernels::add(y, x, n, stream_), "add", __LINE__);
}

void CudaOps::add_bias(float* y, const float* bias, int64_t n_tokens, int64_t d) {
  note(kernels::add_bias(y, bias, n_tokens, d, stream_), "add_bias", __LINE__);
}

void CudaOps::matmul_heads(const ExpertMatrices&, const float*, int64_t, int64_t, int64_t, float*,
                           int64_t, int64_t) {
  // Only latent attention multiplies per head, and this backend does not run it yet
  // (CudaOps::attention says so too).
  sticky_.note(unsupported("CUDA matmul_heads: DeepSeek's latent attention is not implemented "
                           "on this backend yet; run with --backend cpu"));
}

void CudaOps::copy_rows(const float* x, int64_t x_stride, float* y, int64_t y_stride,
                        int64_t n_rows, int64_t width) {
  if (n_rows <= 0 || width <= 0)
    return;
  note(cudaMemcpy2DAsync(y, static_cast<size_t>(y_stride) * sizeof(float), x,
                         static_cast<size_t>(x_stride) * sizeof(float),
                         static_cast<size_t>(width) * sizeof(float), static_cast<size_t>(n_rows),
                         cudaMemcpyDeviceToDevice, stream_),
       "copy_rows", __LINE__);
}

void CudaOps::add_gated(float* y, const float* x, const float* gate, int64_t n_tokens, int64_t d) {
  note(kernels::add_gated(y, x, gate, n_tokens, d, stream_), "add_gated", __LINE__);
}

void CudaOps::sigmoid_mul(float* x, const float* gate, int64_t n) {
  note(kernels::sigmoid_mul(x, gate, n, stream_), "sigmoid_mul", __LINE__);
}

void CudaOps::delta_net(const DeltaNetDims& dims, const DeltaNetWeights& w, float* mixed,
                        const float* b, const float* a, int64_t ba_stride, const KvView& state,
                        int64_t pos0, int64_t n_tokens, float* out) {
  note(kernels::delta_net(dims, w.conv, w.ssm_a, w.dt_bias, mixed, b, a, ba_stride,
                          delta_net_state(dims, state), pos0 == 0, n_tokens, out, stream_),
       "delta_net", __LINE__);
}

void CudaOps::begin_recording() {
  recording_ = true;
  recorded_ids_.clear();
}

void CudaOps::end_recording(bool upload) {
  recording_ = false;
  if (!upload)
    tables_.reset(); // their uploads were nodes of the dropped graph
  if (upload && !recorded_ids_.empty() && ws_.ready())
    note(cudaMemcpyAsync(ws_.ids, recorded_ids_.data(), recorded_ids_.size() * sizeof(int32_t),
                         cudaMemcpyHostToDevice, stream_),
         "embed_rows ids of a graph", __LINE__);
}

void CudaOps::embed_rows(const MatrixView& table, std::span<const TokenId> tokens, float* out) {
  if (tokens.empty() || !need_workspace("embed_rows"))
    return;
  if (recording_) {
    // One upload per graph, before its launch: a second embedding in the same pass, or
    // more ids than the workspace holds, would need copies inside the graph.
    if (!recorded_ids_.empty() || static_cast<int64_t>(tokens.size()) > CudaWorkspace::kIds) {
      sticky_.note(internal_error(
          "CUDA embed_rows in a recorded pass: " + std::to_string(tokens.size()) + " ids after " +
          std::to_string(recorded_ids_.size()) + " (a graph takes one embedding of at most " +
          std::to_string(CudaWorkspace::kIds) + " ids)"));
      return;
    }
    recorded_ids_.assign(tokens.begin(), tokens.end());
    note(kernels::embed_rows(table.type, table.data, table.row_bytes, table.cols, ws_.ids,
                             static_cast<int64_t>(tokens.size()), out, stream_),
         "embed_rows", __LINE__);
    return;
  }
  // Token ids are host memory: copied into the workspace in stream order. A pageable
  // source is staged by the driver before cudaMemcpyAsync returns, so the caller's
  // span may go away right after this call.
  const int64_t n = static_cast<int64_t>(tokens.size());
  const int64_t chunk = std::min<int64_t>(CudaWorkspace::kIds, 65535); // grid.y
  for (int64_t t0 = 0; t0 < n; t0 += chunk) {
    const int64_t nc = std::min<int64_t>(chunk, n - t0);
    note(cudaMemcpyAsync(ws_.ids, tokens.data() + t0, static_cast<size_t>(nc) * sizeof(int32_t),
                         cudaMemcpyHostToDevice, stream_),
         "embed_rows ids", __LINE__);
    note(kernels::embed_rows(table.type, table.data, table.row_bytes, table.cols, ws_.ids, nc,
                             out + t0 * table.cols, stream_),
         "embed_rows", __LINE__);
  }
}

} // namespace pshard::cuda
