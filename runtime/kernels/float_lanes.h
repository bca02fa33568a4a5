// Private: the one float reduction order every kernel uses.
//
// Products are summed into kLanes independent accumulators (element i goes to lane
// i % kLanes) and the lanes are added in a fixed tree at the end. The order is
// written out in the source, so the result does not depend on what the compiler
// vectorises, on chunking (as long as chunks are multiples of kLanes) or on the
// thread count; and it is the order an 8-wide SIMD register followed by the usual
// 256 -> 128 -> 64 -> 32 bit horizontal add produces, so an AVX path can match it.
#pragma once

#include <cstdint>

namespace pshard::kernels {

inline constexpr int kLanes = 8;

struct Lanes {
  float acc[kLanes] = {};
};

// acc[i % kLanes] += a[i] * b[i] for i < n, in increasing i.
inline void lanes_add_products(Lanes &l, const float *a, const float *b, int64_t n) {
  float acc[kLanes];
  for (int k = 0; k < kLanes; ++k)
    acc[k] = l.acc[k];
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes)
    for (int k = 0; k < kLanes; ++k)
      acc[k] += a[i + k] * b[i + k];
  for (int k = 0; k < kLanes && i + k < n; ++k) // the tail, fewer than kLanes
    acc[k] += a[i + k] * b[i + k];
  for (int k = 0; k < kLanes; ++k)
    l.acc[k] = acc[k];
}

inline float lanes_total(const Lanes &l) {
  const float *a = l.acc;
  return ((a[0] + a[4]) + (a[2] + a[6])) + ((a[1] + a[5]) + (a[3] + a[7]));
}

inline float dot_f32(const float *a, const float *b, int64_t n) {
  Lanes l;
  lanes_add_products(l, a, b, n);
  return lanes_total(l);
}

} // namespace pshard::kernels
