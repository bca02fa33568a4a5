// Private, for the ISA files: the 8-bit activation formats of quantized matmuls.
//
// Before a quantized matmul each token's activations are quantized once, in blocks,
// exactly like Q8_0 weights but with a float scale:
//   d = max|x| / 127,  q = round-half-away(x / d)  (computed as x * (1 / d))
// The integer dot product of a weight block with q is then exact, and only the
// per-block scaling rounds. Every path and every thread count quantizes with these
// same IEEE operations, so the q and d values are identical everywhere; the paths
// only lay them out differently for their loads.
//
// q8 (legacy weight types, blocks of 32 values): one d per 32 values; each ISA
// path lays q, d and its precomputed corrections out its own way (see its file).
//
// q8k (K-quants and IQ4_XS, super-blocks of 256 values): one d per 256 values, and
// the sums of every 16 quants, which the weights' per-sub-block minimums and code
// offsets need (sum_i (s * c_i - m) * q_i = s * sum c_i q_i - m * sum q_i). One
// layout for every path, per token, for nsb = cols / 256 super-blocks:
//   q      nsb * 256 int8     natural order, 64-aligned
//   d      nsb float
//   bsums  nsb * 16 int16     bsums[16 * b + k] = sum of q[256 * b + 16 * k ..+16]
// padded to a multiple of 64 bytes.
//
// Everything here has internal linkage (anonymous namespace): the ISA files are
// compiled with different -m flags and must not share out-of-line copies.
#pragma once

#include <cstddef>
#include <cstdint>

namespace pshard::kernels {
namespace {

constexpr int kActBlock = 32;
constexpr int kActSuperBlock = 256;

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

// Quantizes n values into q; returns the block's scale d.
inline float quantize_act_values(const float* x, int n, int8_t* q) {
  float amax = 0.0f;
  for (int j = 0; j < n; ++j) {
    const float a = __builtin_fabsf(x[j]);
    amax = a > amax ? a : amax;
  }
  const float d = amax / 127.0f;
  const float id = d != 0.0f ? 1.0f / d : 0.0f;
  for (int j = 0; j < n; ++j) {
    float v = round_half_away(x[j] * id);
    // Only reachable when 1 / d overflowed (|x| below ~1e-36): keep the cast defined.
    v = v > 127.0f ? 127.0f : v < -127.0f ? -127.0f : v;
    q[j] = static_cast<int8_t>(v);
  }
  return d;
}

// Quantizes 32 values into q; returns the block's scale d.
inline float quantize_act_block(const float* x, int8_t* q) {
  return quantize_act_values(x, kActBlock, q);
}

// Rounds a block count up to `multiple`.
constexpr int64_t round_up(int64_t n, int64_t multiple) {
  return (n + multiple - 1) / multiple * multiple;
}

// The q8k layout of one token (see above).
struct Q8kLayout {
  int64_t nsb;
  static Q8kLayout of(int64_t cols) { return {cols / kActSuperBlock}; }
  size_t bytes() const { return static_cast<size_t>(round_up(nsb * (kActSuperBlock + 4 + 32), 64)); }
  size_t d_offset() const { return static_cast<size_t>(nsb * kActSuperBlock); }
  size_t bsums_offset() const { return d_offset() + static_cast<size_t>(nsb) * 4; }
};

// The 16 sums of a super-block's 256 quants, in plain loops.
inline void q8k_sums(const int8_t* q, int16_t* sums) {
  for (int k = 0; k < 16; ++k) {
    int sum = 0;
    for (int j = 0; j < 16; ++j)
      sum += q[16 * k + j];
    sums[k] = static_cast<int16_t>(sum);
  }
}

// Packs one token in the q8k layout, one super-block at a time through
// `quantize(x, q)` (256 values; returns d) and `sums(q, sums)` (16 exact sums).
template <class Quantize, class Sums>
void pack_q8k_with(const float* x, int64_t cols, uint8_t* dst, Quantize quantize, Sums sums) {
  const Q8kLayout l = Q8kLayout::of(cols);
  int8_t* q = reinterpret_cast<int8_t*>(dst);
  float* d = reinterpret_cast<float*>(dst + l.d_offset());
  int16_t* bsums = reinterpret_cast<int16_t*>(dst + l.bsums_offset());
  for (int64_t b = 0; b < l.nsb; ++b) {
    int8_t* qb = q + b * kActSuperBlock;
    d[b] = quantize(x + b * kActSuperBlock, qb);
    sums(qb, bsums + 16 * b);
  }
}

} // namespace
} // namespace pshard::kernels
