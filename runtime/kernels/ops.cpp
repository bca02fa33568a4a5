// The element-wise and per-token ops. The reductions and exp-heavy ones (RMSNorm's
// sum of squares, softmax, SiLU) run on the active ISA path's kernels
// (kernel_set.h); RoPE's per-pair angles are computed once per call and the
// rotation is cheap, so it stays portable.
#include "runtime/kernels/ops.h"

#include "runtime/kernels/attention_kernel.h"
#include "runtime/kernels/kernel_set.h"
#include "runtime/kernels/rope_math.h"

#include <algorithm>
#include <array>
#include <cmath>

namespace pshard {

void rms_norm(const float *x, const float *weight, float *y, int64_t n, float eps) {
  if (n <= 0)
    return;
  const float mean = kernels::kernel_set().ops.sum_squares(x, n) / static_cast<float>(n);
  const float scale = 1.0f / std::sqrt(mean + eps);
  if (weight == nullptr) {
    for (int64_t i = 0; i < n; ++i)
      y[i] = x[i] * scale;
    return;
  }
  for (int64_t i = 0; i < n; ++i)
    y[i] = x[i] * scale * weight[i];
}

void layer_norm(const float* x, const float* weight, const float* bias, float* y, int64_t n,
                float eps) {
  if (n <= 0)
    return;
  double sum = 0.0, sq = 0.0;
  for (int64_t i = 0; i < n; ++i)
    sum += x[i];
  const double mean = sum / static_cast<double>(n);
  for (int64_t i = 0; i < n; ++i)
    sq += (x[i] - mean) * (x[i] - mean);
  const auto inv = static_cast<float>(1.0 / std::sqrt(sq / static_cast<double>(n) + eps));
  for (int64_t i = 0; i < n; ++i)
    y[i] = (x[i] - static_cast<float>(mean)) * inv * weight[i] + (bias ? bias[i] : 0.0f);
}

void gelu_erf(float* x, int64_t n) { kernels::kernel_set().ops.gelu_erf(x, n); }

void gelu_erf_mul(const float* gate, const float* up, float* out, int64_t n) {
  if (out != gate)
    std::copy_n(gate, n, out);
  gelu_erf(out, n);
  for (int64_t i = 0; i < n; ++i)
    out[i] *= up[i];
}

// The angle of pair i is computed in float exactly as written in ops.h, as
// llama.cpp does, so positions far into a long context round the same way.
// The loop runs over pairs outside heads: each cos/sin is computed once per call.
void rope(float *v, int64_t n_heads, int64_t pos, const RopeParams &p) {
  const int64_t same[3] = {pos, pos, pos};
  rope_multi(v, n_heads, same, p);
}

void rope_multi(float *v, int64_t n_heads, const int64_t pos[3], const RopeParams &p) {
  const int64_t pairs = p.rot_dim / 2;
  const YarnCorrDims corr = yarn_corr_dims(p);
  for (int64_t i = 0; i < pairs; ++i) {
    float c, s;
    rope_pair_cos_sin(p, i, pos[rope_pair_section(p, i)], corr, &c, &s);
    int64_t a, b;
    rope_pair_offsets(p, i, &a, &b);
    for (int64_t h = 0; h < n_heads; ++h) {
      float *head = v + h * p.head_dim;
      const float x0 = head[a], x1 = head[b];
      head[a] = x0 * c - x1 * s;
      head[b] = x0 * s + x1 * c;
    }
  }
}

void softmax(float *x, int64_t n) { kernels::kernel_set().ops.softmax(x, n); }

void silu_mul(const float *gate, const float *up, float *out, int64_t n) {
  kernels::kernel_set().ops.silu_mul(gate, up, out, n);
}

void gelu_mul(const float* gate, const float* up, float* out, int64_t n) {
  kernels::kernel_set().ops.gelu_mul(gate, up, out, n);
}

void gelu_tanh(float* x, int64_t n) {
  static const std::array<float, 256> kOnes = [] {
    std::array<float, 256> a{};
    a.fill(1.0f);
    return a;
  }();
  for (int64_t i = 0; i < n; i += 256) // element-wise, so x may be gate and out at once
    gelu_mul(x + i, kOnes.data(), x + i, std::min<int64_t>(256, n - i));
}

void swiglu_oai(const float* gate, const float* up, float* out, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    const float g = std::min(gate[i], kSwigluOaiLimit);
    const float u = std::clamp(up[i], -kSwigluOaiLimit, kSwigluOaiLimit);
    out[i] = g / (1.0f + std::exp(-kSwigluOaiAlpha * g)) * (u + 1.0f);
  }
}

void scale_inplace(float* x, float s, int64_t n) {
  for (int64_t i = 0; i < n; ++i)
    x[i] *= s;
}

void softcap_inplace(float* x, float cap, int64_t n) {
  const float inv = 1.0f / cap;
  for (int64_t i = 0; i < n; ++i)
    x[i] = cap * std::tanh(x[i] * inv);
}

void attend_head(const AttendHead &a) { kernels::kernel_set().ops.attend(a); }
void attend_block(const AttendBlock& b) { kernels::kernel_set().ops.attend_block(b); }
void attend_tile(const AttendHead* heads, int64_t n) {
  kernels::kernel_set().ops.attend_tile(heads, n);
}
void attend_heads(const AttendHead* heads, int64_t n) {
  kernels::kernel_set().ops.attend_heads(heads, n);
}

void add_inplace(float *y, const float *x, int64_t n) {
  for (int64_t i = 0; i < n; ++i)
    y[i] += x[i];
}

} // namespace pshard
