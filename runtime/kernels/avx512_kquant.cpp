// AVX-512 VNNI kernels for the K-quants (Q2_K..Q6_K, IQ4_XS): kquant_tile.h over
// 512-bit vectors. A chunk is 64 values, two of the formats' 32-value unpacks side
// by side (one super-block = 4 chunks); vpmaddubsw makes the int16 pair sums and
// VNNI's vpdpwssd multiplies them by the chunk's scales and accumulates, in one
// instruction, into 16 int32 lanes per (row, token). A 2-row x 8-token tile in
// prefill, 4 rows for a single token.
#include "runtime/kernels/simd_exports.h"

#if defined(__AVX512F__)
#include "runtime/kernels/kquant_tile.h"

namespace pshard::kernels::avx512 {
namespace {

// A chunk's 64 codes straight in 512 bits where that pays. The generic path is two
// 256-bit unpacks and an insert. Q6_K keeps a chunk's low bits in one 64-byte run and
// its high bits in one 32-byte run, so one load, one broadcast and per-half shifts do
// it in about half the vector instructions: its single-token kernel +9 % in cache,
// +22 % from RAM (kernels_bench, one thread, medians of 5 alternated runs; from RAM the
// old and new ranges do not overlap). Q4_K and Q5_K done the same way measured no faster (their decode is not bound by the unpacking), so they keep the generic
// path. The codes are the same bytes either way.
template <class Fmt> struct WideChunk {
  template <int C> static __m512i codes(const uint8_t* block) {
    return _mm512_inserti64x4(_mm512_castsi256_si512(Fmt::template unpack<2 * C>(block)),
                              Fmt::template unpack<2 * C + 1>(block), 1);
  }
};

// Q6_K: chunk C covers sub-groups g = 2(C % 2), +1 of half h = C / 2: the low (C even)
// or high (C odd) nibbles of the 64 bytes ql[64h..64h+63], and bits 2g..2g+1 of
// qh[32h..32h+31] moved to bits 4..5 (left by 4 and 2, or right by 0 and 2).
template <> struct WideChunk<Q6KFormat> {
  template <int C> static __m512i codes(const uint8_t* block) {
    constexpr int h = C / 2;
    __m512i ql = _mm512_loadu_si512(block + kQ6KQl + 64 * h);
    if constexpr (C % 2 == 1)
      ql = _mm512_srli_epi16(ql, 4);
    ql = _mm512_and_si512(ql, _mm512_set1_epi8(15));
    const __m512i qh = _mm512_broadcast_i64x4(
        _mm256_loadu_si256(reinterpret_cast<const __m256i*>(block + kQ6KQh + 32 * h)));
    const __m512i moved = C % 2 == 0
                              ? _mm512_sllv_epi64(qh, _mm512_set_epi64(2, 2, 2, 2, 4, 4, 4, 4))
                              : _mm512_srlv_epi64(qh, _mm512_set_epi64(2, 2, 2, 2, 0, 0, 0, 0));
    return _mm512_ternarylogic_epi32(ql, moved, _mm512_set1_epi8(0x30), 0xF8); // ql | (moved & mask)
  }
};

struct Avx512Vectors {
  using I = __m512i;
  using F = __m512;
  static constexpr int kChunk = 64;
  // 2 rows x 8 tokens in prefill: the float accumulators, touched once per super-block,
  // live on the stack, and each row's unpacked chunk serves twice the tokens; one
  // thread, 128 tokens: Q4_K +8 %, Q6_K +9 %, Q2_K +2 % over 2 x 6, which was +5 % over
  // 2 x 4 (3 x 4 and 4 x 4 were slower).
  static constexpr int kRows = 2, kTokens = 8, kDecodeRows = 4;
  // As the Q4_0/Q8_0 kernels (avx512_quant.cpp): far ahead, into L2.
  static constexpr int64_t kPrefetchAhead = 16384;

  static I zero_i() { return _mm512_setzero_si512(); }
  static F zero_f() { return _mm512_setzero_ps(); }

  template <class Fmt, int C> static I weights(const uint8_t* block) {
    return WideChunk<Fmt>::template codes<C>(block);
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
