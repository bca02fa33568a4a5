#include "runtime/vision/vision_math.h"

#include "runtime/kernels/matmul.h"
#include "runtime/kernels/ops.h"

#include <cmath>

namespace pshard {

void vision_norm(const ProjectorHParams& hp, const VisionNorm& w, const float* x, float* y,
                 int64_t n, int64_t d) {
  for (int64_t t = 0; t < n; ++t) {
    const float* xr = x + t * d;
    float* yr = y + t * d;
    if (hp.rms_norm()) {
      rms_norm(xr, w.weight.data, yr, d, hp.eps);
      continue;
    }
    layer_norm(xr, w.weight.data, w.bias.data, yr, d, hp.eps);
  }
}

void vision_linear(const VisionLinear& w, const float* x, int64_t n, float* y, ThreadPool& pool) {
  matmul(w.w, x, n, y, pool);
  const int64_t d = w.w.rows;
  for (int64_t t = 0; t < n; ++t)
    for (int64_t i = 0; i < d; ++i)
      y[t * d + i] += w.b.data[i];
}

void vision_activation(VisionAct act, float* x, int64_t n) {
  switch (act) {
  case VisionAct::kGelu:
    gelu_erf(x, n);
    return;
  case VisionAct::kGeluTanh:
    gelu_tanh(x, n);
    return;
  case VisionAct::kSilu:
    for (int64_t i = 0; i < n; ++i)
      x[i] = x[i] / (1.0f + std::exp(-x[i]));
    return;
  case VisionAct::kQuickGelu:
    for (int64_t i = 0; i < n; ++i)
      x[i] = x[i] / (1.0f + std::exp(-1.702f * x[i]));
    return;
  }
}

void vision_gated_activation(VisionAct act, float* gate, float* up, int64_t n) {
  if (act == VisionAct::kSilu) { // Qwen2.5-VL: the kernels' vector SiLU product
    silu_mul(gate, up, up, n);
    return;
  }
  vision_activation(act, gate, n);
  for (int64_t i = 0; i < n; ++i)
    up[i] *= gate[i];
}

} // namespace pshard
