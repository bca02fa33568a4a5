// The host CPU as an Ops: each call runs before it returns, split over a thread pool.
// This is pshard's reference path: the emulated GPU runs these same functions, so
// every backend but CUDA reproduces its results bit for bit.
//
//   ThreadPool pool(8);
//   CpuOps cpu(pool);
//   cpu.matmul(w, x, n_tokens, y);  // done when it returns
#pragma once

#include "runtime/core/thread_pool.h"
#include "runtime/device/expert_groups.h"
#include "runtime/device/ops.h"

#include <vector>

namespace pshard {

class CpuOps final : public Ops {
public:
  explicit CpuOps(ThreadPool& pool) : pool_(pool) {}
  ThreadPool& pool() { return pool_; }

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
  void add_gated(float* y, const float* x, const float* gate, int64_t n_tokens,
                 int64_t d) override;
  void sigmoid_mul(float* x, const float* gate, int64_t n) override;
  void delta_net(const DeltaNetDims& dims, const DeltaNetWeights& w, float* mixed, const float* b,
                 const float* a, int64_t ba_stride, const KvView& state, int64_t pos0,
                 int64_t n_tokens, float* out) override;
  void embed_rows(const MatrixView& table, std::span<const TokenId> tokens, float* out) override;
  void moe_dispatch(const float* x, float* router_logits, const MoeDispatch& moe, int64_t n_tokens,
                    float* out) override;

private:
  ThreadPool& pool_;
};

// One token's route to an expert, with its renormalised weight.
struct MoeRoute {
  int64_t token;
  float weight;
};

// Each token's router logits turned into probabilities in place (softmax or sigmoid), then
// its top-k experts and their weights as `gating` says (MoeGating; selection_bias in host
// memory): routes[e] lists the tokens of expert e in token order. Shared by the dispatch and by
// the executor, which routes on the host to stream only the experts a pass needs.
std::vector<std::vector<MoeRoute>> moe_routes(float* router_logits, int64_t n_tokens,
                                              int64_t n_expert, int64_t n_expert_used,
                                              const MoeGating& gating);

// The rows of x expert e's routes name, gathered into `rows` (r.size() x d); with
// `weight_inputs` (MoeGating's: Llama 4) each times its route's weight.
void moe_gather(const std::vector<MoeRoute>& r, const float* x, int64_t d, float* rows,
                bool weight_inputs);
// out[token] += weight · y[i] over expert e's routes (y[i] as it is with `weight_inputs`):
// the one summation every plan shares, so experts that ran anywhere add up alike when taken
// in ascending order.
void moe_accumulate(const std::vector<MoeRoute>& r, const float* y, int64_t d, float* out,
                    bool weight_inputs);

} // namespace pshard
