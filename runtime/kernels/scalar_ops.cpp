// Portable element-wise and attention kernels: the reference the SIMD paths are
// tested against. Reductions use the fixed lane order of float_lanes.h.
#include "runtime/kernels/float_lanes.h"
#include "runtime/kernels/scalar_ops.h"

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

void attend(const AttendHead& a) {
  for_each_kv_run(a, [&](int64_t j0, const float* k, const float*, int64_t n) {
    for (int64_t j = 0; j < n; ++j)
      a.scores[j0 + j] = dot_f32(a.q, k + j * a.kv_stride, a.head_dim) * a.scale;
  });
  softmax(a.scores, a.n_kv);
  for (int64_t i = 0; i < a.head_dim; ++i)
    a.out[i] = 0.0f;
  for_each_kv_run(a, [&](int64_t j0, const float*, const float* vr, int64_t n) {
    for (int64_t j = 0; j < n; ++j) {
      const float* v = vr + j * a.kv_stride;
      const float w = a.scores[j0 + j];
      for (int64_t i = 0; i < a.head_dim; ++i)
        a.out[i] += w * v[i];
    }
  });
}

} // namespace pshard::kernels::scalar
