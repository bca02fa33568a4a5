// The element-wise and per-token ops. The reductions and exp-heavy ones (RMSNorm's
// sum of squares, softmax, SiLU) run on the active ISA path's kernels
// (kernel_set.h); RoPE's per-pair angles are computed once per call and the
// rotation is cheap, so it stays portable.
#include "runtime/kernels/ops.h"

#include "runtime/kernels/attention_kernel.h"
#include "runtime/kernels/kernel_set.h"

#include <cmath>

namespace pshard {

void rms_norm(const float *x, const float *weight, float *y, int64_t n, float eps) {
  if (n <= 0)
    return;
  const float mean = kernels::kernel_set().ops.sum_squares(x, n) / static_cast<float>(n);
  const float scale = 1.0f / std::sqrt(mean + eps);
  for (int64_t i = 0; i < n; ++i)
    y[i] = x[i] * scale * weight[i];
}

// The angle of pair i is computed in float exactly as written in ops.h, as
// llama.cpp does, so positions far into a long context round the same way.
// The loop runs over pairs outside heads: each cos/sin is computed once per call.
void rope(float *v, int64_t n_heads, int64_t pos, const RopeParams &p) {
  const int64_t pairs = p.rot_dim / 2;
  for (int64_t i = 0; i < pairs; ++i) {
    const float exponent = -2.0f * static_cast<float>(i) / static_cast<float>(p.rot_dim);
    float theta = static_cast<float>(pos) * p.freq_scale * std::pow(p.freq_base, exponent);
    if (p.freq_factors != nullptr)
      theta /= p.freq_factors[i];
    const float c = std::cos(theta), s = std::sin(theta);
    for (int64_t h = 0; h < n_heads; ++h) {
      float *pair = v + h * p.head_dim + 2 * i;
      const float x0 = pair[0], x1 = pair[1];
      pair[0] = x0 * c - x1 * s;
      pair[1] = x0 * s + x1 * c;
    }
  }
}

void softmax(float *x, int64_t n) { kernels::kernel_set().ops.softmax(x, n); }

void silu_mul(const float *gate, const float *up, float *out, int64_t n) {
  kernels::kernel_set().ops.silu_mul(gate, up, out, n);
}

void attend_head(const AttendHead &a) { kernels::kernel_set().ops.attend(a); }

void add_inplace(float *y, const float *x, int64_t n) {
  for (int64_t i = 0; i < n; ++i)
    y[i] += x[i];
}

} // namespace pshard
