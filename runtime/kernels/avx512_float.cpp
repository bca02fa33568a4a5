// AVX-512 kernels for float weight rows (F32, F16, BF16): weights widened to f32
// in registers (vcvtph2ps for F16, a 16-bit shift for BF16) and FMA'd with the
// f32 activations. A 4-row x 6-token register tile (24 accumulators of 16 lanes)
// widens each weight vector once for six tokens; a single token uses 4-row tiles,
// four independent weight streams. The row tail uses masked loads.
#include "runtime/kernels/simd_exports.h"

#if defined(__AVX512F__)
#include "runtime/kernels/tile_driver.h"
#include "runtime/kernels/unroll.h"

#include <immintrin.h>

namespace pshard::kernels::avx512 {
namespace {

struct F32Weights {
  static constexpr size_t kBytes = 4;
  static __m512 load(const uint8_t* p) { return _mm512_loadu_ps(p); }
  static __m512 load_tail(const uint8_t* p, __mmask16 m) { return _mm512_maskz_loadu_ps(m, p); }
};

struct F16Weights {
  static constexpr size_t kBytes = 2;
  static __m512 load(const uint8_t* p) {
    return _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
  }
  static __m512 load_tail(const uint8_t* p, __mmask16 m) {
    return _mm512_cvtph_ps(_mm256_maskz_loadu_epi16(m, p));
  }
};

struct Bf16Weights {
  static constexpr size_t kBytes = 2;
  static __m512 widen(__m256i h) {
    return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16));
  }
  static __m512 load(const uint8_t* p) {
    return widen(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
  }
  static __m512 load_tail(const uint8_t* p, __mmask16 m) {
    return widen(_mm256_maskz_loadu_epi16(m, p));
  }
};

template <class W> struct FloatTile {
  static constexpr int kRows = 4, kTokens = 6, kDecodeRows = 4;

  template <int R, int T> static void tile(const TileArgs& a, int64_t r, int64_t t) {
    const int64_t n = a.w.cols;
    const uint8_t* rows[R];
    PSHARD_UNROLL
    for (int i = 0; i < R; ++i)
      rows[i] = a.w.data + (r + i) * a.w.row_bytes;
    const float* xs[T];
    PSHARD_UNROLL
    for (int j = 0; j < T; ++j)
      xs[j] = reinterpret_cast<const float*>(a.act + (t + j) * a.act_stride);
    __m512 acc[R][T];
    PSHARD_UNROLL
    for (int i = 0; i < R; ++i)
      PSHARD_UNROLL
      for (int j = 0; j < T; ++j)
        acc[i][j] = _mm512_setzero_ps();

    int64_t k = 0;
    for (; k + 16 <= n; k += 16) {
      __m512 wv[R];
      PSHARD_UNROLL
      for (int i = 0; i < R; ++i) {
        // Weights come from a file mapping in 4 KiB pages, where the hardware
        // prefetchers stop: prefetch ahead in every row, into L2 (T1: into L1
        // the lines arrive far too early and evict the tile's operands).
        _mm_prefetch(reinterpret_cast<const char*>(rows[i] + k * W::kBytes + 4096), _MM_HINT_T1);
        wv[i] = W::load(rows[i] + k * W::kBytes);
      }
      PSHARD_UNROLL
      for (int j = 0; j < T; ++j) {
        const __m512 xv = _mm512_loadu_ps(xs[j] + k);
        PSHARD_UNROLL
        for (int i = 0; i < R; ++i)
          acc[i][j] = _mm512_fmadd_ps(wv[i], xv, acc[i][j]);
      }
    }
    if (k < n) {
      const __mmask16 m = static_cast<__mmask16>((1u << (n - k)) - 1);
      __m512 wv[R];
      PSHARD_UNROLL
      for (int i = 0; i < R; ++i)
        wv[i] = W::load_tail(rows[i] + k * W::kBytes, m);
      PSHARD_UNROLL
      for (int j = 0; j < T; ++j) {
        const __m512 xv = _mm512_maskz_loadu_ps(m, xs[j] + k);
        PSHARD_UNROLL
        for (int i = 0; i < R; ++i)
          acc[i][j] = _mm512_fmadd_ps(wv[i], xv, acc[i][j]);
      }
    }
    PSHARD_UNROLL
    for (int j = 0; j < T; ++j)
      PSHARD_UNROLL
      for (int i = 0; i < R; ++i)
        a.y[(t + j) * a.ldy + r + i] = _mm512_reduce_add_ps(acc[i][j]);
  }
};

} // namespace

void gemm_f32(const MatrixView& w, int64_t r0, int64_t r1, const uint8_t* act, size_t stride,
              int64_t n_tokens, float* y, int64_t ldy) {
  run_tiles<FloatTile<F32Weights>>(w, r0, r1, act, stride, n_tokens, y, ldy);
}

// F16 and BF16 weights are widened in registers for every token tile, also in
// prefill: vcvtph2ps (or the BF16 shift) runs beside the FMAs, four per 24 FMAs,
// and reading 2-byte weights keeps a panel's weights in L2 at half the bytes.
void gemm_f16(const MatrixView& w, int64_t r0, int64_t r1, const uint8_t* act, size_t stride,
              int64_t n_tokens, float* y, int64_t ldy) {
  run_tiles<FloatTile<F16Weights>>(w, r0, r1, act, stride, n_tokens, y, ldy);
}

void gemm_bf16(const MatrixView& w, int64_t r0, int64_t r1, const uint8_t* act, size_t stride,
               int64_t n_tokens, float* y, int64_t ldy) {
  run_tiles<FloatTile<Bf16Weights>>(w, r0, r1, act, stride, n_tokens, y, ldy);
}

float stream_sum(const float* data, int64_t n) {
  __m512 s0 = _mm512_setzero_ps(), s1 = s0, s2 = s0, s3 = s0;
  for (int64_t i = 0; i < n; i += 64) {
    s0 = _mm512_add_ps(s0, _mm512_load_ps(data + i));
    s1 = _mm512_add_ps(s1, _mm512_load_ps(data + i + 16));
    s2 = _mm512_add_ps(s2, _mm512_load_ps(data + i + 32));
    s3 = _mm512_add_ps(s3, _mm512_load_ps(data + i + 48));
  }
  return _mm512_reduce_add_ps(_mm512_add_ps(_mm512_add_ps(s0, s1), _mm512_add_ps(s2, s3)));
}

} // namespace pshard::kernels::avx512
#endif
