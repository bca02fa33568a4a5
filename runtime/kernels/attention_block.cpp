// The portable key-block step of the vision tower's tiled attention (attention_kernel.h's
// AttendBlock): one query at a time, a dot product of eight interleaved partial sums in
// a fixed tree, scalar exponentials.
#include "runtime/kernels/scalar_ops.h"

#include <algorithm>
#include <cmath>

namespace pshard::kernels::scalar {
namespace {

float dot8(const float* a, const float* b, int64_t n) {
  float s[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    for (int l = 0; l < 8; ++l)
      s[l] += a[i + l] * b[i + l];
  for (; i < n; ++i)
    s[i % 8] += a[i] * b[i];
  return ((s[0] + s[4]) + (s[1] + s[5])) + ((s[2] + s[6]) + (s[3] + s[7]));
}

} // namespace

void attend_block(const AttendBlock& b) {
  const int64_t hd = b.head_dim;
  float scores[kAttendBlockKeys];
  for (int64_t i = 0; i < b.nq; ++i) {
    const float* q = b.q + i * b.q_stride;
    float block_max = -INFINITY;
    for (int64_t j = 0; j < b.nb; ++j) {
      scores[j] = b.scale * dot8(q, b.k + j * b.kv_stride, hd);
      block_max = std::max(block_max, scores[j]);
    }
    // Raise the running max to cover this block, rescaling what was summed so far.
    const float m = std::max(b.max[i], block_max);
    const float rescale = std::exp(b.max[i] - m); // 0 on the first block (-inf)
    float* acc = b.acc + i * hd;
    float sum = b.sum[i] * rescale;
    for (int64_t d = 0; d < hd; ++d)
      acc[d] *= rescale;
    for (int64_t j = 0; j < b.nb; ++j) {
      const float p = std::exp(scores[j] - m);
      sum += p;
      const float* vr = b.v + j * b.kv_stride;
      for (int64_t d = 0; d < hd; ++d)
        acc[d] += p * vr[d];
    }
    b.max[i] = m;
    b.sum[i] = sum;
  }
}

} // namespace pshard::kernels::scalar
