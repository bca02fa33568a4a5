#include "runtime/backends/emu/emu_ops.h"

#include <memory>
#include <vector>

namespace pshard::emu {

void EmuOps::rms_norm(const float* x, const float* weight, float* y, int64_t n_tokens, int64_t d,
                      float eps) {
  q_.push_work([=, this] { cpu_.rms_norm(x, weight, y, n_tokens, d, eps); });
}

void EmuOps::layer_norm(const float* x, const float* weight, const float* bias, float* y,
                        int64_t n_tokens, int64_t d, float eps) {
  q_.push_work([=, this] { cpu_.layer_norm(x, weight, bias, y, n_tokens, d, eps); });
}

void EmuOps::matmul(const MatrixView& w, const float* x, int64_t n_tokens, float* y) {
  q_.push_work([=, this] { cpu_.matmul(w, x, n_tokens, y); });
}

void EmuOps::rope(float* x, int64_t n_tokens, int64_t n_heads, int64_t pos0, const RopeParams& p) {
  if (!p.positions) {
    q_.push_work([=, this] { cpu_.rope(x, n_tokens, n_heads, pos0, p); });
    return;
  }
  // M-RoPE positions are host memory owned by the caller's pass: keep a copy, as for
  // token ids, since the work runs later.
  auto pos = std::make_shared<std::vector<int32_t>>(p.positions, p.positions + 3 * n_tokens);
  q_.push_work([=, this] {
    RopeParams own = p;
    own.positions = pos->data();
    cpu_.rope(x, n_tokens, n_heads, pos0, own);
  });
}

void EmuOps::kv_append(const KvView& kv, const float* k, const float* v, int64_t pos0,
                       int64_t n_tokens) {
  q_.push_work([=, this] { cpu_.kv_append(kv, k, v, pos0, n_tokens); });
}

void EmuOps::attention(const float* q, const KvView& kv, const AttentionDims& shape, int64_t pos0,
                       int64_t n_tokens, float* out) {
  q_.push_work([=, this] { cpu_.attention(q, kv, shape, pos0, n_tokens, out); });
}

void EmuOps::silu_mul(const float* gate, const float* up, float* out, int64_t n) {
  q_.push_work([=, this] { cpu_.silu_mul(gate, up, out, n); });
}

void EmuOps::gelu(float* x, int64_t n) {
  q_.push_work([=, this] { cpu_.gelu(x, n); });
}

void EmuOps::gelu_erf_mul(const float* gate, const float* up, float* out, int64_t n) {
  q_.push_work([=, this] { cpu_.gelu_erf_mul(gate, up, out, n); });
}

void EmuOps::gelu_mul(const float* gate, const float* up, float* out, int64_t n) {
  q_.push_work([=, this] { cpu_.gelu_mul(gate, up, out, n); });
}

void EmuOps::swiglu_oai(const float* gate, const float* up, float* out, int64_t n) {
  q_.push_work([=, this] { cpu_.swiglu_oai(gate, up, out, n); });
}

void EmuOps::scale(float* x, float s, int64_t n) {
  q_.push_work([=, this] { cpu_.scale(x, s, n); });
}

void EmuOps::softcap(float* x, float cap, int64_t n) {
  q_.push_work([=, this] { cpu_.softcap(x, cap, n); });
}

void EmuOps::add(float* y, const float* x, int64_t n) {
  q_.push_work([=, this] { cpu_.add(y, x, n); });
}

void EmuOps::add_bias(float* y, const float* bias, int64_t n_tokens, int64_t d) {
  q_.push_work([=, this] { cpu_.add_bias(y, bias, n_tokens, d); });
}

void EmuOps::matmul_heads(const ExpertMatrices& w, const float* x, int64_t x_stride, int64_t x_head,
                          int64_t n_tokens, float* y, int64_t y_stride, int64_t y_head) {
  q_.push_work(
      [=, this] { cpu_.matmul_heads(w, x, x_stride, x_head, n_tokens, y, y_stride, y_head); });
}

void EmuOps::copy_rows(const float* x, int64_t x_stride, float* y, int64_t y_stride,
                       int64_t n_rows, int64_t width) {
  q_.push_work([=, this] { cpu_.copy_rows(x, x_stride, y, y_stride, n_rows, width); });
}

void EmuOps::add_gated(float* y, const float* x, const float* gate, int64_t n_tokens, int64_t d) {
  q_.push_work([=, this] { cpu_.add_gated(y, x, gate, n_tokens, d); });
}

void EmuOps::sigmoid_mul(float* x, const float* gate, int64_t n) {
  q_.push_work([=, this] { cpu_.sigmoid_mul(x, gate, n); });
}

void EmuOps::delta_net(const DeltaNetDims& dims, const DeltaNetWeights& w, float* mixed,
                       const float* b, const float* a, int64_t ba_stride, const KvView& state,
                       int64_t pos0, int64_t n_tokens, float* out) {
  q_.push_work(
      [=, this] { cpu_.delta_net(dims, w, mixed, b, a, ba_stride, state, pos0, n_tokens, out); });
}

void EmuOps::embed_rows(const MatrixView& table, std::span<const TokenId> tokens, float* out) {
  q_.push_work([=, this, ids = std::vector<TokenId>(tokens.begin(), tokens.end())] {
    cpu_.embed_rows(table, ids, out);
  });
}

void EmuOps::moe_dispatch(const float* x, float* router_logits, const MoeDispatch& moe,
                          int64_t n_tokens, float* out) {
  q_.push_work([=, this] { cpu_.moe_dispatch(x, router_logits, moe, n_tokens, out); });
}

} // namespace pshard::emu
