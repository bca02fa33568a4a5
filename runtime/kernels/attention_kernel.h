// Attention of one query head over a KV cache, vectorised on the active ISA path:
//   out = softmax(scale * (K q)) V   over cached positions 0 .. n_kv - 1
// K and V rows are kv_stride floats apart (the cache's row width); q, out and
// each K/V row hold head_dim floats. Two passes (scores, then the weighted sum),
// so the result depends on nothing but the inputs.
//
//   AttendHead a{q, kv.k + off, kv.v + off, kv_dim, n_kv, head_dim, 1 / sqrt(hd), out, scores};
//   attend_head(a);   // scores: scratch of n_kv floats
#pragma once

#include <cstdint>

namespace pshard {

struct AttendHead {
  const float* q = nullptr;
  const float* k = nullptr;
  const float* v = nullptr;
  int64_t kv_stride = 0;
  int64_t n_kv = 0;
  int64_t head_dim = 0;
  float scale = 1.0f;
  float* out = nullptr;
  float* scores = nullptr;
};

void attend_head(const AttendHead& a);

} // namespace pshard
