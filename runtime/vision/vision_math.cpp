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
    double sum = 0.0, sq = 0.0; // double: the mean of C ~ 1280 values, then the variance
    for (int64_t i = 0; i < d; ++i)
      sum += xr[i];
    const double mean = sum / static_cast<double>(d);
    for (int64_t i = 0; i < d; ++i)
      sq += (xr[i] - mean) * (xr[i] - mean);
    const auto inv = static_cast<float>(1.0 / std::sqrt(sq / static_cast<double>(d) + hp.eps));
    for (int64_t i = 0; i < d; ++i)
      yr[i] = (xr[i] - static_cast<float>(mean)) * inv * w.weight.data[i] + w.bias.data[i];
  }
}

void vision_linear(const VisionLinear& w, const float* x, int64_t n, float* y, ThreadPool& pool) {
  matmul(w.w, x, n, y, pool);
  const int64_t d = w.w.rows;
  for (int64_t t = 0; t < n; ++t)
    for (int64_t i = 0; i < d; ++i)
      y[t * d + i] += w.b.data[i];
}

void gelu_erf(float* x, int64_t n) {
  for (int64_t i = 0; i < n; ++i)
    x[i] = 0.5f * x[i] * (1.0f + std::erf(x[i] * 0.70710678118654752f));
}

void vision_activation(VisionAct act, float* x, int64_t n) {
  switch (act) {
  case VisionAct::kGelu:
    gelu_erf(x, n);
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

} // namespace pshard
