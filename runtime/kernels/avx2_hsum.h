// The sum of an AVX2 register's 8 floats in one fixed tree (8 -> 4 -> 2 -> 1), the order
// float_lanes.h's portable sum restates so the paths agree. For the files compiled with
// AVX2's flags only; internal linkage (kernel_set.h).
#pragma once

#include <immintrin.h>

namespace pshard::kernels {
namespace {

inline float hsum8(__m256 v) {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  return _mm_cvtss_f32(_mm_add_ss(s, _mm_movehdup_ps(s)));
}

} // namespace
} // namespace pshard::kernels
