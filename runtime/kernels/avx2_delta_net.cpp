// AVX2 + FMA: Gated DeltaNet's two sweeps over one head's state (delta_net.h's DeltaStep). The
// columns go in blocks of 32 whose sums (Sᵀk, then Sᵀq) stay in four registers while the
// sweep walks the block's rows; a block's tail is masked.
#include "runtime/kernels/simd_exports.h"

#if defined(__AVX2__) && defined(__FMA__)
#include <immintrin.h>

namespace pshard::kernels::avx2 {
namespace {

constexpr int kLanes = 8, kVectors = 4, kBlock = kLanes * kVectors;

__m256i tail(int64_t rest) {
  const __m256i lanes = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  const int n = rest <= 0 ? 0 : rest >= kLanes ? kLanes : static_cast<int>(rest);
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(n), lanes);
}

} // namespace

void delta_step(const DeltaStep& a) {
  const int64_t dv = a.d_v;
  const __m256 decay = _mm256_set1_ps(a.decay), beta = _mm256_set1_ps(a.beta);
  for (int64_t j0 = 0; j0 < dv; j0 += kBlock) { // S ← S·decay; delta = (v − Sᵀk)·beta
    __m256i m[kVectors];
    __m256 acc[kVectors];
    for (int c = 0; c < kVectors; ++c) {
      m[c] = tail(dv - j0 - c * kLanes);
      acc[c] = _mm256_setzero_ps();
    }
    for (int64_t i = 0; i < a.d_k; ++i) {
      float* row = a.s + i * dv + j0;
      const __m256 ki = _mm256_set1_ps(a.k[i]);
      for (int c = 0; c < kVectors; ++c) {
        const __m256 r = _mm256_mul_ps(_mm256_maskload_ps(row + c * kLanes, m[c]), decay);
        _mm256_maskstore_ps(row + c * kLanes, m[c], r);
        acc[c] = _mm256_fmadd_ps(r, ki, acc[c]);
      }
    }
    for (int c = 0; c < kVectors; ++c) {
      const __m256 v = _mm256_maskload_ps(a.v + j0 + c * kLanes, m[c]);
      _mm256_maskstore_ps(a.delta + j0 + c * kLanes, m[c],
                          _mm256_mul_ps(_mm256_sub_ps(v, acc[c]), beta));
    }
  }
  for (int64_t j0 = 0; j0 < dv; j0 += kBlock) { // S += k ⊗ delta; out = Sᵀq
    __m256i m[kVectors];
    __m256 acc[kVectors], delta[kVectors];
    for (int c = 0; c < kVectors; ++c) {
      m[c] = tail(dv - j0 - c * kLanes);
      acc[c] = _mm256_setzero_ps();
      delta[c] = _mm256_maskload_ps(a.delta + j0 + c * kLanes, m[c]);
    }
    for (int64_t i = 0; i < a.d_k; ++i) {
      float* row = a.s + i * dv + j0;
      const __m256 ki = _mm256_set1_ps(a.k[i]), qi = _mm256_set1_ps(a.q[i]);
      for (int c = 0; c < kVectors; ++c) {
        const __m256 r = _mm256_fmadd_ps(ki, delta[c], _mm256_maskload_ps(row + c * kLanes, m[c]));
        _mm256_maskstore_ps(row + c * kLanes, m[c], r);
        acc[c] = _mm256_fmadd_ps(r, qi, acc[c]);
      }
    }
    for (int c = 0; c < kVectors; ++c)
      _mm256_maskstore_ps(a.out + j0 + c * kLanes, m[c], acc[c]);
  }
}

} // namespace pshard::kernels::avx2
#endif
