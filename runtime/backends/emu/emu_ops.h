// The emulated GPU's kernels: each Ops call is queued on the compute thread, which runs
// the CPU implementation. Arguments are captured by value (token ids copied), since
// the call returns before the work runs.
#pragma once

#include "runtime/backends/cpu/cpu_ops.h"
#include "runtime/backends/emu/emu_queue.h"

namespace pshard::emu {

class EmuOps final : public Ops {
public:
  EmuOps(EmuQueue& compute, CpuOps& cpu) : q_(compute), cpu_(cpu) {}

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
  EmuQueue& q_;
  CpuOps& cpu_;
};

} // namespace pshard::emu
