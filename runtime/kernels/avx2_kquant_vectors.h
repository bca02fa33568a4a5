// Private, for the AVX2 and AVX2-VNNI K-quant files: kquant_tile.h's vector policy over
// 256-bit vectors. A chunk is 32 values (one super-block = 8 chunks); vpmaddubsw then
// vpmaddwd with the chunk's scales, added into 8 int32 lanes per (row, token), or one
// vpdpwssd for the last two where the including file is compiled for AVX-VNNI. Sixteen
// ymm registers hold a 2-row x 2-token tile (4 int32 and 4 float accumulators, the
// rows' codes and scales). Internal linkage (kernel_set.h).
#pragma once

#include "runtime/kernels/avx2_hsum.h"
#include "runtime/kernels/kquant_tile.h"

namespace pshard::kernels {
namespace {

struct Avx2Vectors {
  using I = __m256i;
  using F = __m256;
  static constexpr int kChunk = 32;
  static constexpr int kRows = 2, kTokens = 2, kDecodeRows = 2;
  static constexpr int64_t kPrefetchAhead = 4096;

  static I zero_i() { return _mm256_setzero_si256(); }
  static F zero_f() { return _mm256_setzero_ps(); }

  template <class Fmt, int C> static I weights(const uint8_t* block) {
    return Fmt::template unpack<C>(block);
  }

  // The 16 scales as int32 pairs (s | s << 16): lo = [p0..p3 | p8..p11],
  // hi = [p4..p7 | p12..p15] (vpunpck works within 128-bit halves).
  struct ChunkScales {
    __m256i lo, hi;
  };
  static ChunkScales prepare_scales(__m256i sc) {
    return {_mm256_unpacklo_epi16(sc, sc), _mm256_unpackhi_epi16(sc, sc)};
  }
  // Chunk C holds sub-blocks 2C and 2C+1 of 16 values: eight int16 lanes of each scale.
  template <int C> static I chunk_scales(const ChunkScales& s) {
    constexpr int base = (C % 2) * 2 + (C / 4) * 4;
    const __m256i idx =
        _mm256_setr_epi32(base, base, base, base, base + 1, base + 1, base + 1, base + 1);
    return _mm256_permutevar8x32_epi32((C / 2) % 2 == 0 ? s.lo : s.hi, idx);
  }

  static I load_q(const uint8_t* p) {
    return _mm256_load_si256(reinterpret_cast<const __m256i*>(p));
  }
  static I abs_bytes(I w) { return _mm256_abs_epi8(w); }
  static I sign_of(I x, I w) { return _mm256_sign_epi8(x, w); }
  // sc * (u . x) added into acc: with AVX-VNNI one vpdpwssd does vpmaddwd's products and
  // the add (both wrap the same way, so the same int32 lanes).
  static I dot(I acc, I u, I x, I sc) {
#if defined(__AVXVNNI__)
    return _mm256_dpwssd_avx_epi32(acc, _mm256_maddubs_epi16(u, x), sc);
#else
    return _mm256_add_epi32(acc, _mm256_madd_epi16(_mm256_maddubs_epi16(u, x), sc));
#endif
  }
  static I widen(__m256i v) { return v; }
  static I sub_i(I a, I b) { return _mm256_sub_epi32(a, b); }
  static F to_float(I v) { return _mm256_cvtepi32_ps(v); }
  static F set1(float f) { return _mm256_set1_ps(f); }
  static F fma(F a, F b, F c) { return _mm256_fmadd_ps(a, b, c); }
  static F fnma(F a, F b, F c) { return _mm256_fnmadd_ps(a, b, c); }
  static float sum(F v) { return hsum8(v); }
};

} // namespace
} // namespace pshard::kernels
