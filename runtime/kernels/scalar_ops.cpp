// Portable element-wise and attention kernels: the reference the SIMD paths are
// tested against. Reductions use the fixed lane order of float_lanes.h.
#include "runtime/kernels/scalar_ops.h"

#include "runtime/kernels/float_lanes.h"
#include "runtime/kernels/fp16_inline.h"
#include "runtime/kernels/ops.h"

#include <cmath>

namespace pshard::kernels::scalar {

float sum_squares(const float* x, int64_t n) { return dot_f32(x, x, n); }

void softmax(float* x, int64_t n) {
  if (n <= 0)
    return;
  float max = x[0];
  for (int64_t i = 1; i < n; ++i)
    max = x[i] > max ? x[i] : max;
  // Every entry masked: there is no distribution; zeros are safer than NaN.
  if (std::isinf(max) && max < 0) {
    for (int64_t i = 0; i < n; ++i)
      x[i] = 0.0f;
    return;
  }
  float sum = 0.0f;
  for (int64_t i = 0; i < n; ++i) {
    x[i] = std::exp(x[i] - max);
    sum += x[i];
  }
  const float inv = 1.0f / sum;
  for (int64_t i = 0; i < n; ++i)
    x[i] *= inv;
}

void silu_mul(const float* gate, const float* up, float* out, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    const float g = gate[i];
    out[i] = g / (1.0f + std::exp(-g)) * up[i];
  }
}

// GELU's tanh form as a sigmoid: 0.5 (1 + tanh(z)) = 1 / (1 + e^(-2z)), so every ISA path
// computes it with the exponential SiLU uses.
void gelu_mul(const float* gate, const float* up, float* out, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    const float g = gate[i];
    const float z = g * (kGeluC1 + kGeluC3 * g * g);
    out[i] = g / (1.0f + std::exp(-z)) * up[i];
  }
}

void gelu_erf(float* x, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    const float v = x[i], a = std::fabs(v) * kInvSqrt2;
    const float t = 1.0f / (1.0f + kErfP * a);
    const float poly = t * (kErfA1 + t * (kErfA2 + t * (kErfA3 + t * (kErfA4 + t * kErfA5))));
    const float erf_a = 1.0f - poly * std::exp(-(a * a));
    x[i] = 0.5f * v * (1.0f + (v < 0.0f ? -erf_a : erf_a));
  }
}

namespace {

constexpr size_t kQ8Block = 34; // Q8_0: an f16 scale, then 32 int8 quants

float value_at(const uint8_t* row, TensorType t, int64_t i) {
  switch (t) {
  case TensorType::kF16: {
    uint16_t h;
    __builtin_memcpy(&h, row + 2 * i, 2);
    return half_to_float(h);
  }
  case TensorType::kQ8_0: {
    const uint8_t* b = row + (i / 32) * kQ8Block;
    uint16_t h;
    __builtin_memcpy(&h, b, 2);
    return half_to_float(h) * static_cast<float>(static_cast<int8_t>(b[2 + i % 32]));
  }
  default: {
    float f;
    __builtin_memcpy(&f, row + 4 * i, 4);
    return f;
  }
  }
}

float dot_row(const float* q, const uint8_t* row, TensorType t, int64_t n) {
  if (t == TensorType::kF32)
    return dot_f32(q, reinterpret_cast<const float*>(row), n);
  float sum = 0.0f;
  for (int64_t i = 0; i < n; ++i)
    sum += q[i] * value_at(row, t, i);
  return sum;
}

} // namespace

void attend(const AttendHead& a) {
  score_rows(a, [&](const uint8_t* k, int64_t rows, int64_t at) {
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t g = 0; g < a.group; ++g)
        a.scores[g * a.score_stride() + at + r] =
            dot_row(a.q + g * a.head_dim, k + r * a.k_row_bytes, a.k_type, a.head_dim) * a.scale;
  });
  weigh_scores(a, softmax);
  sum_values(a, [&](const uint8_t* vr, int64_t rows, int64_t at) {
    for (int64_t g = 0; g < a.group; ++g) {
      float* out = a.out + g * a.value_dim();
      const float* w = a.scores + g * a.score_stride() + at;
      for (int64_t j = 0; j < rows; ++j) {
        const uint8_t* v = vr + j * a.v_row_bytes;
        for (int64_t i = 0; i < a.value_dim(); ++i)
          out[i] += w[j] * value_at(v, a.v_type, i);
      }
    }
  });
}

void attend_tile(const AttendHead* heads, int64_t n) {
  for (int64_t i = 0; i < n; ++i)
    attend(heads[i]);
}

void attend_heads(const AttendHead* heads, int64_t n) { scalar::attend_tile(heads, n); }

} // namespace pshard::kernels::scalar
