// The CUDA backend's Ops: every call enqueues kernels (or cuBLASLt GEMMs) on the compute
// stream and returns; a failure is kept in the device's sticky error and reported by
// the next Device::synchronize, as ops.h requires.
//
// Matmuls: up to kernels::kMatvecMaxTokens tokens run the matrix-vector kernels (decode:
// one read of the weights); more tokens run cuBLASLt — f32 weights directly, f16/bf16
// weights against activations converted to the same type, Q8_0/Q4_0 weights
// dequantized to f16 in row chunks into the workspace (prefill: compute-bound, so the
// extra pass over the weights is cheap next to the GEMM).
#pragma once

#include "runtime/backends/cuda/cublaslt_matmul.h"
#include "runtime/backends/cuda/cuda_moe_staging.h"
#include "runtime/backends/cuda/cuda_status.h"
#include "runtime/backends/cuda/cuda_workspace.h"
#include "runtime/backends/cuda/kernels/kernels.h"
#include "runtime/backends/cuda/moe_grouped_plan.h"
#include "runtime/device/ops.h"

#include <cuda_runtime_api.h>
#include <memory>
#include <span>
#include <vector>

namespace pshard::cuda {

class CudaOps final : public Ops {
public:
  // Allocates the MoE dispatch's pinned staging (a failure is reported by the first
  // moe_dispatch, the only op that needs it).
  CudaOps(cudaStream_t stream, StickyError& sticky, LtMatmul& lt);
  // The workspace moves with the arena (null while there is none); the expert tables it
  // held are gone with it.
  void set_workspace(const CudaWorkspace& ws) {
    if (ws.expert_ptrs != ws_.expert_ptrs)
      tables_.reset();
    ws_ = ws;
  }
  bool has_workspace() const { return ws_.ready(); }
  // While the device records a pass as a graph (cuda_graphs.h): embed_rows keeps the
  // token ids on the host instead of copying them (a pageable copy cannot be captured)
  // and its kernel reads them from the workspace, where end_recording(true) uploads
  // them on the stream just before the graph launches. end_recording(false): the
  // recording is dropped, so the expert tables it uploaded never reached the device and
  // the table cache forgets them (call it too when a graph fails to launch).
  void begin_recording();
  void end_recording(bool upload);

  void rms_norm(const float* x, const float* weight, float* y, int64_t n_tokens, int64_t d,
                float eps) override;
  void layer_norm(const float* x, const float* weight, const float* bias, float* y,
                  int64_t n_tokens, int64_t d, float eps) override;
  void matmul(const MatrixView& w, const float* x, int64_t n_tokens, float* y) override;
  void rope(float* x, int64_t n_tokens, int64_t n_heads, int64_t pos0,
            const RopeParams& p) override;
  void kv_append(const KvView& kv, const float* k, const float* v, int64_t pos0,
                 int64_t n_tokens) override;
  void attention(const float* q, const KvView& kv, const AttentionDims& shape, int64_t pos0,
                 int64_t n_tokens, float* out) override;
  void silu_mul(const float* gate, const float* up, float* out, int64_t n) override;
  void gelu_mul(const float* gate, const float* up, float* out, int64_t n) override;
  void gelu(float* x, int64_t n) override;
  void gelu_erf_mul(const float* gate, const float* up, float* out, int64_t n) override;
  void swiglu_oai(const float* gate, const float* up, float* out, int64_t n) override;
  void scale(float* x, float s, int64_t n) override;
  void softcap(float* x, float cap, int64_t n) override;
  void add(float* y, const float* x, int64_t n) override;
  void add_bias(float* y, const float* bias, int64_t n_tokens, int64_t d) override;
  void matmul_heads(const ExpertMatrices& w, const float* x, int64_t x_stride, int64_t x_head,
                    int64_t n_tokens, float* y, int64_t y_stride, int64_t y_head) override;
  void copy_rows(const float* x, int64_t x_stride, float* y, int64_t y_stride, int64_t n_rows,
                 int64_t width) override;
  void add_gated(float* y, const float* x, const float* gate, int64_t n_tokens, int64_t d) override;
  void sigmoid_mul(float* x, const float* gate, int64_t n) override;
  void delta_net(const DeltaNetDims& dims, const DeltaNetWeights& w, float* mixed, const float* b,
                 const float* a, int64_t ba_stride, const KvView& state, int64_t pos0,
                 int64_t n_tokens, float* out) override;
  void embed_rows(const MatrixView& table, std::span<const TokenId> tokens, float* out) override;
  void moe_dispatch(const float* x, float* router_logits, const MoeDispatch& moe, int64_t n_tokens,
                    float* out) override;

  // A split MoE pass's device experts (CudaDevice::run_expert_groups), one chunk of rows
  // at a time: expert_row_chunks says how many rows a chunk holds and where its input
  // rows (in_offset) and outputs (out_offset) lie in moe_scratch(); moe_rows runs row r
  // through expert experts[r] (host memory) from the chunk's inputs to its outputs —
  // one launch for gate and up, one for down, whatever the experts.
  Result<MoeChunks> expert_row_chunks(const MoeDispatch& moe) const;
  Status moe_rows(const MoeDispatch& moe, std::span<const int32_t> experts, const MoeChunks& c);
  float* moe_scratch() const { return reinterpret_cast<float*>(ws_.act); }

private:
  void note(cudaError_t e, const char* what, int line);
  bool need_workspace(const char* op);
  Status gemm_float(const MatrixView& w, const float* x, int64_t n_tokens, float* y);
  Status gemm_quant(const MatrixView& w, const float* x, int64_t n_tokens, float* y);
  Status moe_grouped(const float* x, float* router_logits, const MoeDispatch& moe,
                     int64_t n_tokens, float* out);
  Status expert_addresses(const MoeDispatch& moe, uint64_t capture,
                          kernels::ExpertAddress (&a)[3]);
  struct ExpertScratch {
    float* act; // n_routes x n_ff: SiLU(gate) * up (gate alone when unfused)
    float* up;  // unfused only: up
    float* eo;  // n_routes x n_embd: each route's expert output
  };
  Status expert_products(const MoeDispatch& moe, const kernels::ExpertAddress (&addr)[3], int64_t k,
                         const float* x, int64_t n_routes, const ExpertScratch& out);

  cudaStream_t stream_;
  StickyError& sticky_;
  LtMatmul& lt_;
  CudaWorkspace ws_;
  bool recording_ = false;
  std::vector<TokenId> recorded_ids_;
  std::unique_ptr<MoeHostStaging> staging_;
  Status staging_status_;
  ExpertTableCache tables_{CudaWorkspace::kExpertPtrs};
  std::vector<const uint8_t*> table_; // the current block's table, reused between calls
  std::vector<float> unit_weights_;   // moe_rows' route weights (unused: the host sums)
};

} // namespace pshard::cuda
