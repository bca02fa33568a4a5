// AVX-512: Gated DeltaNet's two sweeps over one head's state (delta_net.h's DeltaStep). The
// columns go in blocks of 64 whose sums (Sᵀk, then Sᵀq) stay in four registers while the
// sweep walks the block's rows; a block's tail is masked.
#include "runtime/kernels/simd_exports.h"

#if defined(__AVX512F__)
#include <immintrin.h>

namespace pshard::kernels::avx512 {
namespace {

constexpr int kLanes = 16, kVectors = 4, kBlock = kLanes * kVectors;

__mmask16 tail(int64_t rest) {
  if (rest <= 0)
    return 0;
  return rest >= kLanes ? static_cast<__mmask16>(0xffff) : static_cast<__mmask16>((1u << rest) - 1);
}

} // namespace

void delta_step(const DeltaStep& a) {
  const int64_t dv = a.d_v;
  const __m512 decay = _mm512_set1_ps(a.decay), beta = _mm512_set1_ps(a.beta);
  for (int64_t j0 = 0; j0 < dv; j0 += kBlock) { // S ← S·decay; delta = (v − Sᵀk)·beta
    __mmask16 m[kVectors];
    __m512 acc[kVectors];
    for (int c = 0; c < kVectors; ++c) {
      m[c] = tail(dv - j0 - c * kLanes);
      acc[c] = _mm512_setzero_ps();
    }
    for (int64_t i = 0; i < a.d_k; ++i) {
      float* row = a.s + i * dv + j0;
      const __m512 ki = _mm512_set1_ps(a.k[i]);
      for (int c = 0; c < kVectors; ++c) {
        const __m512 r = _mm512_mul_ps(_mm512_maskz_loadu_ps(m[c], row + c * kLanes), decay);
        _mm512_mask_storeu_ps(row + c * kLanes, m[c], r);
        acc[c] = _mm512_fmadd_ps(r, ki, acc[c]);
      }
    }
    for (int c = 0; c < kVectors; ++c) {
      const __m512 v = _mm512_maskz_loadu_ps(m[c], a.v + j0 + c * kLanes);
      _mm512_mask_storeu_ps(a.delta + j0 + c * kLanes, m[c],
                            _mm512_mul_ps(_mm512_sub_ps(v, acc[c]), beta));
    }
  }
  for (int64_t j0 = 0; j0 < dv; j0 += kBlock) { // S += k ⊗ delta; out = Sᵀq
    __mmask16 m[kVectors];
    __m512 acc[kVectors], delta[kVectors];
    for (int c = 0; c < kVectors; ++c) {
      m[c] = tail(dv - j0 - c * kLanes);
      acc[c] = _mm512_setzero_ps();
      delta[c] = _mm512_maskz_loadu_ps(m[c], a.delta + j0 + c * kLanes);
    }
    for (int64_t i = 0; i < a.d_k; ++i) {
      float* row = a.s + i * dv + j0;
      const __m512 ki = _mm512_set1_ps(a.k[i]), qi = _mm512_set1_ps(a.q[i]);
      for (int c = 0; c < kVectors; ++c) {
        const __m512 r =
            _mm512_fmadd_ps(ki, delta[c], _mm512_maskz_loadu_ps(m[c], row + c * kLanes));
        _mm512_mask_storeu_ps(row + c * kLanes, m[c], r);
        acc[c] = _mm512_fmadd_ps(r, qi, acc[c]);
      }
    }
    for (int c = 0; c < kVectors; ++c)
      _mm512_mask_storeu_ps(a.out + j0 + c * kLanes, m[c], acc[c]);
  }
}

} // namespace pshard::kernels::avx512
#endif
