// AVX-512 VNNI kernels for the K-quants (Q2_K..Q6_K, IQ4_XS): kquant_tile.h over
// 512-bit vectors. A chunk is 64 values, two of the formats' 32-value unpacks side
// by side (one super-block = 4 chunks); vpmaddubsw makes the int16 pair sums and
// VNNI's vpdpwssd multiplies them by the chunk's scales and accumulates, in one
// instruction, into 16 int32 lanes per (row, token). A 2-row x 4-token tile in
// prefill (8 int32 and 8 float accumulators), 4 rows for a single token.
#include "runtime/kernels/simd_exports.h"

#if defined(__AVX512F__)
#include "runtime/kernels/kquant_tile.h"

namespace pshard::kernels::avx512 {
namespace {

struct Avx512Vectors {
  using I = __m512i;
  using F = __m512;
  static constexpr int kChunk = 64;
  static constexpr int kRows = 2, kTokens = 4, kDecodeRows = 4;
  // As the Q4_0/Q8_0 kernels (avx512_quant.cpp): far ahead, into L2.
  static constexpr int64_t kPrefetchAhead = 16384;

  static I zero_i() { return _mm512_setzero_si512(); }
  static F zero_f() { return _mm512_setzero_ps(); }

  template <class Fmt, int C> static I weights(const uint8_t* block) {
    return _mm512_inserti64x4(_mm512_castsi256_si512(Fmt::template unpack<2 * C>(block)),
                              Fmt::template unpack<2 * C + 1>(block), 1);
  }

  // The 16 scales as int32 pairs (s | s << 16), in order.
  using ChunkScales = __m512i;
  static ChunkScales prepare_scales(__m256i sc) {
    const __m512i wide = _mm512_cvtepu16_epi32(sc);
    return _mm512_or_si512(wide, _mm512_slli_epi32(wide, 16));
  }
  // Chunk C holds sub-blocks 4C..4C+3 of 16 values: eight int16 lanes of each scale.
  template <int C> static I chunk_scales(ChunkScales pairs) {
    constexpr int s = 4 * C;
    const __m512i idx = _mm512_setr_epi32(s, s, s, s, s + 1, s + 1, s + 1, s + 1, s + 2, s + 2,
                                          s + 2, s + 2, s + 3, s + 3, s + 3, s + 3);
    return _mm512_permutexvar_epi32(idx, pairs);
  }

  static I load_q(const uint8_t* p) { return _mm512_load_si512(p); }
  static I abs_bytes(I w) { return _mm512_abs_epi8(w); }
  // No vpsignb at 512 bits: negate x where w is negative (w is never 0 here).
  static I sign_of(I x, I w) {
    return _mm512_mask_sub_epi8(x, _mm512_movepi8_mask(w), _mm512_setzero_si512(), x);
  }
  static I dot(I acc, I u, I x, I sc) {
    return _mm512_dpwssd_epi32(acc, _mm512_maddubs_epi16(u, x), sc);
  }
  static I widen(__m256i v) { return _mm512_zextsi256_si512(v); }
  static I sub_i(I a, I b) { return _mm512_sub_epi32(a, b); }
  static F to_float(I v) { return _mm512_cvtepi32_ps(v); }
  static F set1(float f) { return _mm512_set1_ps(f); }
  static F fma(F a, F b, F c) { return _mm512_fmadd_ps(a, b, c); }
  static F fnma(F a, F b, F c) { return _mm512_fnmadd_ps(a, b, c); }
  static float sum(F v) { return _mm512_reduce_add_ps(v); }
};

} // namespace

PSHARD_DEFINE_KQUANT_EXPORTS(Avx512Vectors)

} // namespace pshard::kernels::avx512
#endif
