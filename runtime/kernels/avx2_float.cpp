// AVX2 + FMA + F16C kernels for float weight rows (F32, F16, BF16), for CPUs
// without AVX-512. Weights are widened to f32 in registers (vcvtph2ps for F16, a
// 16-bit shift for BF16) and FMA'd with the f32 activations. Sixteen ymm registers
// allow a 4-row x 2-token tile (8 accumulators); a single token uses 4-row tiles.
// The row tail (fewer than 8 values) is copied into a zero-padded vector.
#include "runtime/kernels/simd_exports.h"

#if defined(__AVX2__) && defined(__FMA__) && defined(__F16C__)
#include "runtime/kernels/avx2_hsum.h"
#include "runtime/kernels/tile_driver.h"
#include "runtime/kernels/unroll.h"

#include <immintrin.h>

namespace pshard::kernels::avx2 {
namespace {

struct F32Weights {
  static constexpr size_t kBytes = 4;
  static __m256 load(const uint8_t* p) { return _mm256_loadu_ps(reinterpret_cast<const float*>(p)); }
};

struct F16Weights {
  static constexpr size_t kBytes = 2;
  static __m256 load(const uint8_t* p) {
    return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
  }
};

struct Bf16Weights {
  static constexpr size_t kBytes = 2;
  static __m256 load(const uint8_t* p) {
    const __m256i wide = _mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
    return _mm256_castsi256_ps(_mm256_slli_epi32(wide, 16));
  }
};

template <class W> struct FloatTile {
  static constexpr int kRows = 4, kTokens = 2, kDecodeRows = 4;

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
    __m256 acc[R][T];
    PSHARD_UNROLL
    for (int i = 0; i < R; ++i)
      PSHARD_UNROLL
      for (int j = 0; j < T; ++j)
        acc[i][j] = _mm256_setzero_ps();

    int64_t k = 0;
    for (; k + 8 <= n; k += 8) {
      __m256 wv[R];
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
        const __m256 xv = _mm256_loadu_ps(xs[j] + k);
        PSHARD_UNROLL
        for (int i = 0; i < R; ++i)
          acc[i][j] = _mm256_fmadd_ps(wv[i], xv, acc[i][j]);
      }
    }
    if (k < n) {
      const int64_t rest = n - k;
      alignas(32) uint8_t wpad[R][32] = {};
      alignas(32) float xpad[T][8] = {};
      PSHARD_UNROLL
      for (int i = 0; i < R; ++i)
        __builtin_memcpy(wpad[i], rows[i] + k * W::kBytes, rest * W::kBytes);
      PSHARD_UNROLL
      for (int j = 0; j < T; ++j)
        __builtin_memcpy(xpad[j], xs[j] + k, rest * sizeof(float));
      PSHARD_UNROLL
      for (int j = 0; j < T; ++j) {
        const __m256 xv = _mm256_load_ps(xpad[j]);
        PSHARD_UNROLL
        for (int i = 0; i < R; ++i)
          acc[i][j] = _mm256_fmadd_ps(W::load(wpad[i]), xv, acc[i][j]);
      }
    }
    PSHARD_UNROLL
    for (int j = 0; j < T; ++j)
      PSHARD_UNROLL
    for (int i = 0; i < R; ++i)
      a.y[(t + j) * a.ldy + r + i] = hsum8(acc[i][j]); // fixed tree: 8 -> 4 -> 2 -> 1
  }
};

} // namespace

void gemm_f32(const MatrixView& w, int64_t r0, int64_t r1, const uint8_t* act, size_t stride,
              int64_t n_tokens, float* y, int64_t ldy) {
  run_tiles<FloatTile<F32Weights>>(w, r0, r1, act, stride, n_tokens, y, ldy);
}

// F16 weights are widened in registers for every token tile, also in prefill:
// vcvtph2ps runs beside the FMAs, and 2-byte weights keep a panel in L2.
void gemm_f16(const MatrixView& w, int64_t r0, int64_t r1, const uint8_t* act, size_t stride,
              int64_t n_tokens, float* y, int64_t ldy) {
  run_tiles<FloatTile<F16Weights>>(w, r0, r1, act, stride, n_tokens, y, ldy);
}

void gemm_bf16(const MatrixView& w, int64_t r0, int64_t r1, const uint8_t* act, size_t stride,
               int64_t n_tokens, float* y, int64_t ldy) {
  run_tiles<FloatTile<Bf16Weights>>(w, r0, r1, act, stride, n_tokens, y, ldy);
}

float stream_sum(const float* data, int64_t n) {
  __m256 s0 = _mm256_setzero_ps(), s1 = s0, s2 = s0, s3 = s0;
  for (int64_t i = 0; i < n; i += 32) {
    s0 = _mm256_add_ps(s0, _mm256_load_ps(data + i));
    s1 = _mm256_add_ps(s1, _mm256_load_ps(data + i + 8));
    s2 = _mm256_add_ps(s2, _mm256_load_ps(data + i + 16));
    s3 = _mm256_add_ps(s3, _mm256_load_ps(data + i + 24));
  }
  return hsum8(_mm256_add_ps(_mm256_add_ps(s0, s1), _mm256_add_ps(s2, s3)));
}

} // namespace pshard::kernels::avx2
#endif
