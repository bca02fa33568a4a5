// Launchers of the CUDA backend's kernels, callable from plain C++ (only cudaStream_t
// crosses). Each enqueues on `stream` and returns the launch's error (a bad
// configuration); failures while running surface at the next synchronize.
//
// Pointers are device addresses. Weight rows follow GGUF's layouts
// (runtime/tensor/tensor_type.h); quantized rows hold whole 32-value blocks.
#pragma once

#include "runtime/kernels/delta_net.h"
#include "runtime/kernels/ops.h"
#include "runtime/tensor/tensor_type.h"

#include <cstdint>
#include <cuda_runtime_api.h>

namespace pshard::cuda::kernels {

// The matrix-vector path takes at most this many tokens per weight read.
inline constexpr int kMatvecMaxTokens = 8;

// --- elementwise.cu ---------------------------------------------------------------------
cudaError_t rms_norm(const float* x, const float* w, float* y, int64_t n_tokens, int64_t d,
                     float eps, cudaStream_t s);
// runtime/kernels/ops.h's LayerNorm (weight and bias), one block per row.
cudaError_t layer_norm(const float* x, const float* w, const float* b, float* y, int64_t n_tokens,
                       int64_t d, float eps, cudaStream_t s);
// x[i] = gelu(x[i]), the exact (erf) form.
cudaError_t gelu_erf(float* x, int64_t n, cudaStream_t s);
// RoPE pairs one launch takes (rot_dim / 2): their powers travel as a kernel argument.
inline constexpr int64_t kMaxRopePairs = 128;
// p.freq_factors: a device pointer or null.
cudaError_t rope(float* x, int64_t n_tokens, int64_t n_heads, int64_t pos0, const RopeParams& p,
                 cudaStream_t s);
// y[t][i] += bias[i] over n_tokens rows of d.
cudaError_t add_bias(float* y, const float* bias, int64_t n_tokens, int64_t d, cudaStream_t s);
// y[t][i] += sigmoid(gate[t]) * x[t][i] over n_tokens rows of d.
cudaError_t add_gated(float* y, const float* x, const float* gate, int64_t n_tokens, int64_t d,
                      cudaStream_t s);
cudaError_t silu_mul(const float* gate, const float* up, float* out, int64_t n, cudaStream_t s);
// x[i] *= sigmoid(gate[i]).
cudaError_t sigmoid_mul(float* x, const float* gate, int64_t n, cudaStream_t s);
// out[i] = gelu(gate[i]) * up[i] (tanh form, runtime/kernels/ops.h's kGeluC1/kGeluC3).
cudaError_t gelu_mul(const float* gate, const float* up, float* out, int64_t n, cudaStream_t s);
// out[i] = gelu(gate[i]) * up[i], GELU's exact form (ModernBERT's GeGLU).
cudaError_t gelu_erf_mul(const float* gate, const float* up, float* out, int64_t n, cudaStream_t s);
// gpt-oss's clamped SwiGLU (runtime/kernels/ops.h's kSwigluOaiAlpha / kSwigluOaiLimit).
cudaError_t swiglu_oai(const float* gate, const float* up, float* out, int64_t n, cudaStream_t s);
cudaError_t scale(float* x, float factor, int64_t n, cudaStream_t s);
// x[i] = cap * tanh(x[i] / cap)
cudaError_t softcap(float* x, float cap, int64_t n, cudaStream_t s);
cudaError_t add(float* y, const float* x, int64_t n, cudaStream_t s);
// out[t] = row ids[t] of the table as floats (ids: device memory).
cudaError_t embed_rows(TensorType type, const uint8_t* table, size_t row_bytes, int64_t cols,
                       const int32_t* ids, int64_t n_tokens, float* out, cudaStream_t s);
// rows x cols of `type` to half (dst dense, ld = cols), for cuBLASLt.
cudaError_t dequantize_to_half(TensorType type, const uint8_t* w, size_t row_bytes, int64_t rows,
                               int64_t cols, void* dst_half, cudaStream_t s);
// n floats to half (to_bf16 = false) or bfloat16.
cudaError_t convert_floats(const float* x, int64_t n, void* dst, bool to_bf16, cudaStream_t s);

// --- matvec.cu --------------------------------------------------------------------------
// y[t][r] = dot(W row r, x[t]) for n_tokens <= kMatvecMaxTokens (y's row stride: ldy).
cudaError_t matvec(TensorType type, const uint8_t* w, size_t row_bytes, int64_t rows, int64_t cols,
                   const float* x, int64_t n_tokens, float* y, int64_t ldy, cudaStream_t s);

// --- attention.cu -----------------------------------------------------------------------
// One layer's KV cache in VRAM (runtime/device/ops.h's KvView, device pointers).
struct KvRows {
  uint8_t* k = nullptr;
  uint8_t* v = nullptr;
  int64_t kv_dim = 0, v_dim = 0; // values of a K row and of a V row
  size_t k_row_bytes = 0, v_row_bytes = 0;
  TensorType k_type = TensorType::kF32, v_type = TensorType::kF32;
  const int32_t* pages = nullptr; // device memory; null: contiguous
  int64_t page_tokens = 0;
  int64_t ring = 0; // not paged: position p at row p % ring (0: at row p)
};
// Rows of n_tokens tokens (x: n_tokens x kv_dim floats, or v_dim for V) into K (values false) or V at
// positions [pos0, pos0 + n_tokens), converted to the cache's type.
cudaError_t kv_store(const float* x, int64_t n_tokens, const KvRows& kv, bool values,
                     int64_t pos0, cudaStream_t s);
// runtime/device/ops.h's AttentionDims (that header is C++20, .cu files are not): the
// geometry, a sliding window (0: none), the scores' scale and soft-cap (0: none).
struct AttentionShape {
  int64_t n_head = 0, n_head_kv = 0, head_dim = 0, window = 0;
  float scale = 1.0f, softcap = 0.0f;
  float temp_scale = 0.0f; // Mistral 3's attention temperature (AttentionDims::score_scale)
  int64_t temp_length = 0;
  const float* sinks = nullptr; // gpt-oss: n_head sink logits (device memory), or null
  bool causal = true;           // false (encoders): every token sees [0, pos0 + n_tokens)
  bool symmetric_window = false; // the window centred on the query (AttentionDims')
  bool chunked = false;          // Llama 4: the query's chunk of `window` positions so far
};
// Causal attention of n_tokens queries over the cache, token t at pos0 + t seeing the
// positions of its window (shape.causal false: all n_tokens tokens' positions). With `scratch`
// (device memory, free for the launch's duration) and at most kAttentionSplitMaxTokens tokens, the
// positions are split into chunks run side by side and merged (flash-decoding).
cudaError_t attention(const float* q, const KvRows& kv, const AttentionShape& shape, int64_t pos0,
                      int64_t n_tokens, float* out, cudaStream_t s, float* scratch = nullptr,
                      size_t scratch_bytes = 0);
// The split a launch takes: chunks of kAttentionChunk positions (doubled until at most
// kAttentionMaxChunks, and as many as the scratch holds partials for: hd + 2 floats per
// token, head and chunk); chunk 0 = no split. Host code, so tests can check it here.
inline constexpr int64_t kAttentionSplitMaxTokens = kMatvecMaxTokens;
inline constexpr int64_t kAttentionChunk = 256;
inline constexpr int64_t kAttentionMaxChunks = 64;
struct AttentionSplit {
  int64_t chunk = 0;
  int64_t n_chunks = 1;
};
AttentionSplit plan_attention_split(int64_t n_head, int64_t head_dim, int64_t pos0,
                                    int64_t n_tokens, size_t scratch_bytes);

// --- moe.cu -----------------------------------------------------------------------------
// How moe_route weighs (the device's MoeGating): probabilities by softmax, or by each
// logit's sigmoid; the top k of probability + selection_bias (device memory, or null);
// weights the unbiased probabilities, renormalised when `normalize`, times `scale`.
struct RouteGating {
  bool sigmoid = false;
  bool normalize = true;
  float scale = 1.0f;
  const float* selection_bias = nullptr;
  int64_t n_groups = 1, n_groups_used = 1; // group-limited routing (at most 64 groups)
};
// Each token's n_expert logits turned into probabilities (in place), top-k (ties to the
// lower index), weighed as `g` says; each token's k routes sorted by expert index, so sums
// run in the CPU's order.
cudaError_t moe_route(float* logits, int64_t n_tokens, int64_t n_expert, int64_t k,
                      const RouteGating& g, int32_t* experts, float* weights, cudaStream_t s);

// --- moe_grouped.cu ---------------------------------------------------------------------
// Every route of a chunk in one launch per MoE matrix (a route is token t's slot j, index
// t * k + j; experts[route] its expert, device memory). At most kMaxGroupedRoutes routes
// per launch (grid.y); the caller chunks by tokens.
inline constexpr int64_t kMaxGroupedRoutes = 65535;

// Where expert e's matrix starts: table[e] (a device array; experts placed at scattered
// addresses) or, without a table, base + e * stride (a block stored as one tensor).
struct ExpertAddress {
  const uint8_t* const* table = nullptr;
  const uint8_t* base = nullptr;
  size_t stride = 0;
};
// What a family adds to the experts' gated half (gpt-oss): per-expert biases of gate and
// up (expert e's row at e * ff, device memory; null: none) and the clamped SwiGLU
// (runtime/kernels/ops.h's swiglu_oai) instead of SiLU.
struct ExpertGlu {
  const float* gate_bias = nullptr;
  const float* up_bias = nullptr;
  bool swiglu_oai = false;
};
// act[route * ff + r] = act(gate_e row r . x[t] + bg) * (up_e row r . x[t] + bu) for
// n_routes routes, gate and up both of `type` (d columns, row_bytes each): the gated
// FFN's first half, fused.
cudaError_t moe_gate_up(TensorType type, const ExpertAddress& gate, const ExpertAddress& up,
                        const int32_t* experts, int64_t k, size_t row_bytes, int64_t ff, int64_t d,
                        const float* x, int64_t n_routes, const ExpertGlu& glu, float* act,
                        cudaStream_t s);
// y[route * rows + r] = W_e row r . x[(route / routes_per_x) * cols] (+ bias[e * rows + r]
// when bias is set) for n_routes routes: down (routes_per_x = 1: each route's own
// activations), or gate / up alone (routes_per_x = k: the token's input) when they differ
// in type.
cudaError_t moe_grouped_matvec(TensorType type, const ExpertAddress& w, const int32_t* experts,
                               int64_t routes_per_x, size_t row_bytes, int64_t rows, int64_t cols,
                               const float* x, int64_t n_routes, const float* bias, float* y,
                               cudaStream_t s);
// rows[r] = x[r / k] * weights[r] (d values each) for n_routes routes: each route's input
// row carrying its weight (Llama 4's experts).
cudaError_t moe_weighted_rows(const float* x, const float* weights, int64_t k, int64_t n_routes,
                              int64_t d, float* rows, cudaStream_t s);
// out[t] = sum over j = 0..k-1, in that order, of weights[t * k + j] * expert_out[t * k + j]
// (d values each) for n_tokens tokens; weights null: each 1 (the inputs carried them).
cudaError_t moe_combine(const float* expert_out, const float* weights, int64_t k, int64_t n_tokens,
                        int64_t d, float* out, cudaStream_t s);

// --- delta_net.cu -----------------------------------------------------------------------
// One sequence's Gated DeltaNet pass (runtime/kernels/delta_net.h): the conv in place on
// `mixed`, the state read and written (zeroed first when `fresh`), out n x value_dim.
cudaError_t delta_net(const DeltaNetDims& d, const float* conv, const float* ssm_a,
                      const float* dt_bias, float* mixed, const float* b, const float* a,
                      int64_t ba_stride, const DeltaNetState& state, bool fresh, int64_t n,
                      float* out, cudaStream_t s);

} // namespace pshard::cuda::kernels
