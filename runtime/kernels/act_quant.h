// Private, for the ISA files: the q8 activation format of quantized matmuls.
//
// Before a quantized matmul each token's activations are quantized once, in blocks
// of 32 values, exactly like Q8_0 weights but with a float scale:
//   d = max|x| / 127,  q = round-half-away(x / d)  (computed as x * (1 / d))
// The integer dot product of a weight block with q is then exact, and only the
// per-block scaling rounds. Every path and every thread count quantizes with these
// same IEEE operations, so the q and d values are identical everywhere; the paths
// only lay them out differently for their loads.
//
// Everything here has internal linkage (anonymous namespace): the ISA files are
// compiled with different -m flags and must not share out-of-line copies.
#pragma once

#include <cstdint>

namespace pshard::kernels {
namespace {

constexpr int kActBlock = 32;

// roundf without the libm call: truncate, then step away from zero when the
// dropped fraction is at least one half (v - trunc(v) is exact for any float).
inline float round_half_away(float v) {
  const float t = __builtin_truncf(v);
  const float frac = v - t;
  if (frac >= 0.5f)
    return t + 1.0f;
  if (frac <= -0.5f)
    return t - 1.0f;
  return t;
}

// Quantizes 32 values into q; returns the block's scale d.
inline float quantize_act_block(const float* x, int8_t* q) {
  float amax = 0.0f;
  for (int j = 0; j < kActBlock; ++j) {
    const float a = __builtin_fabsf(x[j]);
    amax = a > amax ? a : amax;
  }
  const float d = amax / 127.0f;
  const float id = d != 0.0f ? 1.0f / d : 0.0f;
  for (int j = 0; j < kActBlock; ++j) {
    float v = round_half_away(x[j] * id);
    // Only reachable when 1 / d overflowed (|x| below ~1e-36): keep the cast defined.
    v = v > 127.0f ? 127.0f : v < -127.0f ? -127.0f : v;
    q[j] = static_cast<int8_t>(v);
  }
  return d;
}

// Rounds a block count up to `multiple`.
constexpr int64_t round_up(int64_t n, int64_t multiple) {
  return (n + multiple - 1) / multiple * multiple;
}

} // namespace
} // namespace pshard::kernels
