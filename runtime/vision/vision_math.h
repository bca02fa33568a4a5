// Small per-row operations of the vision tower that the language model does not have
// (LayerNorm, GELU variants, linear layers with a bias), on host floats.
#pragma once

#include "runtime/core/thread_pool.h"
#include "runtime/vision/projector.h"

#include <cstdint>

namespace pshard {

// y = norm(x) over n rows of d: LayerNorm (weight and bias) or RMSNorm, as the projector
// type says (x and y may alias).
void vision_norm(const ProjectorHParams& hp, const VisionNorm& w, const float* x, float* y,
                 int64_t n, int64_t d);
// y[n x w.rows] = x[n x w.cols] W^T + b.
void vision_linear(const VisionLinear& w, const float* x, int64_t n, float* y, ThreadPool& pool);
void vision_activation(VisionAct act, float* x, int64_t n);
// up[i] = act(gate[i]) * up[i] (gate is scratch: it may be overwritten).
void vision_gated_activation(VisionAct act, float* gate, float* up, int64_t n);

} // namespace pshard
