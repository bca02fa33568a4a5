#include "runtime/backends/cpu/cpu_ops.h"

#include "runtime/kernels/quantize.h"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace pshard {

void CpuOps::rms_norm(const float* x, const float* weight, float* y, int64_t n_tokens, int64_t d,
                      float eps) {
  for (int64_t t = 0; t < n_tokens; ++t)
    pshard::rms_norm(x + t * d, weight, y + t * d, d, eps);
}

void CpuOps::layer_norm(const float* x, const float* weight, const float* bias, float* y,
                        int64_t n_tokens, int64_t d, float eps) {
  for (int64_t t = 0; t < n_tokens; ++t)
    pshard::layer_norm(x + t * d, weight, bias, y + t * d, d, eps);
}

void CpuOps::matmul(const MatrixView& w, const float* x, int64_t n_tokens, float* y) {
  pshard::matmul(w, x, n_tokens, y, pool_);
}

void CpuOps::rope(float* x, int64_t n_tokens, int64_t n_heads, int64_t pos0, const RopeParams& p) {
  const int64_t row = n_heads * p.head_dim;
  for (int64_t t = 0; t < n_tokens; ++t) {
    if (!p.positions) {
      pshard::rope(x + t * row, n_heads, pos0 + t, p);
      continue;
    }
    const int32_t* tp = p.positions + 3 * t;
    const int64_t pos[3] = {tp[0], tp[1], tp[2]};
    pshard::rope_multi(x + t * row, n_heads, pos, p);
  }
}

namespace {

// One row of kv_dim floats into the cache's element type (F32 copied, F16 rounded to
// nearest even, Q8_0 quantized as ggml does).
void store_row(const float* x, TensorType type, int64_t n, uint8_t* dst) {
  if (type == TensorType::kF32)
    std::memcpy(dst, x, static_cast<size_t>(n) * sizeof(float));
  else
    (void)quantize_row(type, x, dst, n); // whole blocks: checked when the cache was made
}

} // namespace

void CpuOps::kv_append(const KvView& kv, const float* k, const float* v, int64_t pos0,
                       int64_t n_tokens) {
  for (int64_t t = 0; t < n_tokens; ++t) {
    store_row(k + t * kv.kv_dim, kv.k_type, kv.kv_dim, kv.k_row(pos0 + t));
    store_row(v + t * kv.v_values(), kv.v_type, kv.v_values(), kv.v_row(pos0 + t));
  }
}

void CpuOps::silu_mul(const float* gate, const float* up, float* out, int64_t n) {
  pshard::silu_mul(gate, up, out, n);
}

void CpuOps::gelu_mul(const float* gate, const float* up, float* out, int64_t n) {
  pshard::gelu_mul(gate, up, out, n);
}

// Spread over the pool: a BERT pass's GELU is as many values as its FFN's activations.
void CpuOps::gelu(float* x, int64_t n) {
  constexpr int64_t kChunk = 4096;
  pool_.parallel_for((n + kChunk - 1) / kChunk, [&](int64_t begin, int64_t end) {
    for (int64_t c = begin; c < end; ++c)
      gelu_erf(x + c * kChunk, std::min(kChunk, n - c * kChunk));
  });
}

void CpuOps::gelu_erf_mul(const float* gate, const float* up, float* out, int64_t n) {
  constexpr int64_t kChunk = 4096;
  pool_.parallel_for((n + kChunk - 1) / kChunk, [&](int64_t begin, int64_t end) {
    for (int64_t c = begin; c < end; ++c) {
      const int64_t at = c * kChunk;
      pshard::gelu_erf_mul(gate + at, up + at, out + at, std::min(kChunk, n - at));
    }
  });
}

void CpuOps::swiglu_oai(const float* gate, const float* up, float* out, int64_t n) {
  pshard::swiglu_oai(gate, up, out, n);
}

void CpuOps::scale(float* x, float s, int64_t n) { scale_inplace(x, s, n); }

void CpuOps::softcap(float* x, float cap, int64_t n) { softcap_inplace(x, cap, n); }

void CpuOps::add(float* y, const float* x, int64_t n) { add_inplace(y, x, n); }

void CpuOps::add_bias(float* y, const float* bias, int64_t n_tokens, int64_t d) {
  for (int64_t t = 0; t < n_tokens; ++t)
    add_inplace(y + t * d, bias, d);
}

void CpuOps::matmul_heads(const ExpertMatrices& w, const float* x, int64_t x_stride, int64_t x_head,
                          int64_t n_tokens, float* y, int64_t y_stride, int64_t y_head) {
  // A head's product is small (DeepSeek-V3's 512 x 128): one a thread, not each split.
  pool_.parallel_for(w.n_expert, [&](int64_t begin, int64_t end) {
    for (int64_t h = begin; h < end; ++h)
      matmul_strided(w.expert(h), x + h * x_head, x_stride, n_tokens, y + h * y_head, y_stride);
  });
}

void CpuOps::copy_rows(const float* x, int64_t x_stride, float* y, int64_t y_stride,
                       int64_t n_rows, int64_t width) {
  for (int64_t r = 0; r < n_rows; ++r)
    std::memcpy(y + r * y_stride, x + r * x_stride, static_cast<size_t>(width) * sizeof(float));
}

void CpuOps::add_gated(float* y, const float* x, const float* gate, int64_t n_tokens, int64_t d) {
  for (int64_t t = 0; t < n_tokens; ++t) {
    const float g = 1.0f / (1.0f + std::exp(-gate[t]));
    for (int64_t i = 0; i < d; ++i)
      y[t * d + i] += g * x[t * d + i];
  }
}

void CpuOps::sigmoid_mul(float* x, const float* gate, int64_t n) {
  for (int64_t i = 0; i < n; ++i)
    x[i] *= 1.0f / (1.0f + std::exp(-gate[i]));
}

void CpuOps::delta_net(const DeltaNetDims& dims, const DeltaNetWeights& w, float* mixed,
                       const float* b, const float* a, int64_t ba_stride, const KvView& state,
                       int64_t pos0, int64_t n_tokens, float* out) {
  delta_net_forward(pool_, dims, w.conv, w.ssm_a, w.dt_bias, mixed, b, a, ba_stride,
                    delta_net_state(dims, state), pos0, n_tokens, out);
}

void CpuOps::embed_rows(const MatrixView& table, std::span<const TokenId> tokens, float* out) {
  for (size_t t = 0; t < tokens.size(); ++t) {
    const uint8_t* row = table.data + static_cast<size_t>(tokens[t]) * table.row_bytes;
    dequantize_row(table.type, row, out + static_cast<int64_t>(t) * table.cols, table.cols);
  }
}

} // namespace pshard
