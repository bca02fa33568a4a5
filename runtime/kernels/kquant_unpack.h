// Private, for the AVX2 and AVX-512 files: the K-quant super-blocks (layouts in
// tensor_type.h) unpacked into the integer form the SIMD tile multiplies with the
// q8k activations (act_quant.h), written once with 256-bit (AVX2) instructions,
// which the AVX-512 file may use too.
//
// A format F gives, per super-block,
//   F::scales(b)      16 int16 scales, entry s for values 16s..16s+15 (types with
//                     sub-blocks of 32 repeat each), 16 int16 "mins" (see Mins),
//                     and the float super-scales d and dm;
//   F::unpack<K>(b)   the 32 codes of values 32K..32K+31 as bytes, in value order:
//                     unsigned (0..63) or, for kSigned types, the signed values.
// so that dot(block, x) = d_x * (d * sum_s sc[s] * sum code * q - dm * sum_s mins[s] * bsums[s]).
//   Mins::kOffset    codes carry an offset: mins = offset * sc and dm = d, so both
//                    integer sums fold into one (Q3_K: code - 4, Q6_K: code - 32)
//   Mins::kSeparate  a true minimum with its own super-scale dm = dmin (Q2_K, Q4_K, Q5_K)
//   Mins::kNone      no minimum (IQ4_XS)
// Codes stay below 64, or are the IQ4 table's signed values, so vpmaddubsw's
// pairs (at most 2 * 127 * 127) never saturate.
//
// Internal linkage throughout (see kernel_set.h).
#pragma once

#include "runtime/kernels/block_decode.h"

#include <immintrin.h>

namespace pshard::kernels {
namespace {

enum class Mins { kNone, kOffset, kSeparate };

struct KScales {
  __m256i sc, mins;
  float d, dm;
};

inline __m256i loadu256(const uint8_t* p) {
  return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
}

// Moves bits From..From+Width-1 of every byte to To.. (and clears the rest); the
// 16-bit shifts never carry a neighbouring byte's bits into the kept ones for the
// uses below (the kept bits come from within the same byte).
template <int From, int To, int Width = 1> __m256i move_bits(__m256i v) {
  const __m256i mask = _mm256_set1_epi8(static_cast<char>(((1 << Width) - 1) << To));
  if constexpr (From < To)
    return _mm256_and_si256(_mm256_slli_epi16(v, To - From), mask);
  else if constexpr (From > To)
    return _mm256_and_si256(_mm256_srli_epi16(v, From - To), mask);
  else
    return _mm256_and_si256(v, mask);
}

// The 2-bit field at bit Shift of every byte.
template <int Shift> __m256i two_bits(__m256i v) {
  return _mm256_and_si256(_mm256_srli_epi16(v, Shift), _mm256_set1_epi8(3));
}

template <bool High> __m256i nibbles(__m256i v) {
  const __m256i mask = _mm256_set1_epi8(15);
  return High ? _mm256_and_si256(_mm256_srli_epi16(v, 4), mask) : _mm256_and_si256(v, mask);
}

// The f16 at p (f16_one) or the two at p (f16_pair) widened with F16C: exact, as
// half_to_float, in a few instructions instead of a dozen scalar ones per value (a
// single-token matmul decodes every super-block header once per row).
inline float f16_one(const uint8_t* p) {
  uint16_t h;
  std::memcpy(&h, p, 2);
  return _mm_cvtss_f32(_mm_cvtph_ps(_mm_cvtsi32_si128(h)));
}
inline void f16_pair(const uint8_t* p, float* first, float* second) {
  const __m128 v = _mm_cvtph_ps(_mm_cvtsi32_si128(static_cast<int>(u32_at(p))));
  *first = _mm_cvtss_f32(v);
  *second = _mm_cvtss_f32(_mm_movehdup_ps(v));
}

// 8 unsigned per-32 scales / mins (bytes) repeated into 16 int16 entries each.
inline __m256i repeat_pairs_u8(__m128i bytes, bool high_half) {
  return _mm256_cvtepu8_epi16(high_half ? _mm_unpackhi_epi8(bytes, bytes)
                                        : _mm_unpacklo_epi8(bytes, bytes));
}

struct Q2KFormat {
  static constexpr size_t kBytes = kQ2KBytes;
  static constexpr Mins kMins = Mins::kSeparate;
  static constexpr bool kSigned = false;
  static KScales scales(const uint8_t* b) {
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(b + kQ2KScales));
    const __m128i mask = _mm_set1_epi8(15);
    KScales k{_mm256_cvtepu8_epi16(_mm_and_si128(v, mask)),
              _mm256_cvtepu8_epi16(_mm_and_si128(_mm_srli_epi16(v, 4), mask)), 0.0f, 0.0f};
    f16_pair(b + kQ2KD, &k.d, &k.dm);
    return k;
  }
  template <int K> static __m256i unpack(const uint8_t* b) {
    return two_bits<2 * (K % 4)>(loadu256(b + kQ2KQs + 32 * (K / 4)));
  }
};

struct Q3KFormat {
  static constexpr size_t kBytes = kQ3KBytes;
  static constexpr Mins kMins = Mins::kOffset;
  static constexpr bool kSigned = false;
  // The 16 six-bit scales from the 12 bytes s[0..11]: scale j's low four bits are
  // the low (j < 8) or high nibble of s[j % 8], its top two bits field j / 4 of
  // s[8 + j % 4]. In vector registers, as for Q4_K: the scalar form was most of
  // a single-token Q3_K matmul's work per super-block.
  static KScales scales(const uint8_t* b) {
    // The 16 bytes ending with the scales (4 bytes of codes, then s[0..11]): the
    // block ends 2 bytes after them, so reading on past them could leave the tensor.
    const __m128i q = _mm_loadu_si128(reinterpret_cast<const __m128i*>(b + kQ3KScales - 4));
    const __m128i low =
        _mm_shuffle_epi8(q, _mm_setr_epi8(4, 5, 6, 7, 8, 9, 10, 11, 4, 5, 6, 7, 8, 9, 10, 11));
    const __m128i nib = _mm_and_si128(_mm_blend_epi16(low, _mm_srli_epi16(low, 4), 0xF0),
                                      _mm_set1_epi8(15)); // high nibbles for 8..15
    // s[8..11] in every dword, field k (bits 2k..2k+1) of dword k moved to bits 4..5.
    const __m128i top = _mm_shuffle_epi8(
        q, _mm_setr_epi8(12, 13, 14, 15, 12, 13, 14, 15, 12, 13, 14, 15, 12, 13, 14, 15));
    const __m128i two = _mm_slli_epi16(
        _mm_and_si128(_mm_srlv_epi32(top, _mm_setr_epi32(0, 2, 4, 6)), _mm_set1_epi8(3)), 4);
    const __m128i codes = _mm_or_si128(nib, two);
    const __m256i sc = _mm256_cvtepi8_epi16(_mm_sub_epi8(codes, _mm_set1_epi8(32)));
    const float d = f16_one(b + kQ3KD);
    return {sc, _mm256_slli_epi16(sc, 2), d, d};
  }
  template <int K> static __m256i unpack(const uint8_t* b) {
    const __m256i low = two_bits<2 * (K % 4)>(loadu256(b + kQ3KQs + 32 * (K / 4)));
    return _mm256_or_si256(low, move_bits<K, 2>(loadu256(b + kQ3KHmask)));
  }
};

template <bool Fifth> struct Q45KFormat {
  static constexpr size_t kBytes = Fifth ? kQ5KBytes : kQ4KBytes;
  static constexpr size_t kQs = Fifth ? kQ5KQs : kQ4KQs;
  static constexpr Mins kMins = Mins::kSeparate;
  static constexpr bool kSigned = false;
  // The 12 scale bytes q[0..11] hold, for sub-block j < 4, scale q[j] & 63 and min
  // q[j+4] & 63; for j >= 4, scale (q[j+4] & 15) | (q[j-4] >> 6) << 4 and min
  // (q[j+4] >> 4) | (q[j] >> 6) << 4. Decoded in vector registers (one load, two
  // byte shuffles, masks): as scalar code this was half of a single-token Q4_K
  // matmul's instructions (kernels_bench with the header decode removed ran 1.75x).
  static KScales scales(const uint8_t* b) {
    // The 16 bytes from the scales: 12 scale bytes and 4 bytes of codes, unused.
    const __m128i q = _mm_loadu_si128(reinterpret_cast<const __m128i*>(b + kQ4KScales));
    // Result bytes 0..7: the scales of sub-blocks 0..7; bytes 8..15: their mins.
    // low: the byte holding each result's low bits (its high nibble for mins 4..7);
    // top: the byte whose bits 6..7 become bits 4..5 of results 4..7 and 12..15.
    const __m128i low =
        _mm_shuffle_epi8(q, _mm_setr_epi8(0, 1, 2, 3, 8, 9, 10, 11, 4, 5, 6, 7, 8, 9, 10, 11));
    const __m128i top =
        _mm_shuffle_epi8(q, _mm_setr_epi8(-1, -1, -1, -1, 0, 1, 2, 3, -1, -1, -1, -1, 4, 5, 6, 7));
    const __m128i lows = _mm_blend_epi16(low, _mm_srli_epi16(low, 4), 0xC0); // bytes 12..15 >> 4
    const __m128i keep =
        _mm_setr_epi8(63, 63, 63, 63, 15, 15, 15, 15, 63, 63, 63, 63, 15, 15, 15, 15);
    const __m128i v = _mm_or_si128(_mm_and_si128(lows, keep),
                                   _mm_and_si128(_mm_srli_epi16(top, 2), _mm_set1_epi8(0x30)));
    KScales k{repeat_pairs_u8(v, false), repeat_pairs_u8(v, true), 0.0f, 0.0f};
    f16_pair(b, &k.d, &k.dm);
    return k;
  }
  template <int K> static __m256i unpack(const uint8_t* b) {
    const __m256i low = nibbles<K % 2 == 1>(loadu256(b + kQs + 32 * (K / 2)));
    if constexpr (!Fifth)
      return low;
    else
      return _mm256_or_si256(low, move_bits<K, 4>(loadu256(b + kQ5KQh)));
  }
};

struct Q6KFormat {
  static constexpr size_t kBytes = kQ6KBytes;
  static constexpr Mins kMins = Mins::kOffset;
  static constexpr bool kSigned = false;
  static KScales scales(const uint8_t* b) {
    const __m256i sc =
        _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(b + kQ6KScales)));
    const float d = f16_one(b + kQ6KD);
    return {sc, _mm256_slli_epi16(sc, 5), d, d};
  }
  // Values 128h + 32g + l: low nibble of ql[64h + 32(g % 2) + l] (high for g >= 2),
  // upper two bits at bit 2g of qh[32h + l].
  template <int K> static __m256i unpack(const uint8_t* b) {
    constexpr int h = K / 4, g = K % 4;
    const __m256i low = nibbles<(g >= 2)>(loadu256(b + kQ6KQl + 64 * h + 32 * (g % 2)));
    const __m256i qh = loadu256(b + kQ6KQh + 32 * h);
    return _mm256_or_si256(low, move_bits<2 * g, 4, 2>(qh));
  }
};

struct Iq4XsFormat {
  static constexpr size_t kBytes = kIq4XsBytes;
  static constexpr Mins kMins = Mins::kNone;
  static constexpr bool kSigned = true;
  // The 8 six-bit codes, byte s = code of sub-block s: nibble s of scales_l and the
  // 2-bit field s of scales_h, each spread to byte s by shift-and-mask steps.
  static KScales scales(const uint8_t* b) {
    uint64_t low = u32_at(b + kIq4XsScalesL);
    low = (low | low << 16) & 0x0000ffff0000ffffull;
    low = (low | low << 8) & 0x00ff00ff00ff00ffull;
    low = (low | low << 4) & 0x0f0f0f0f0f0f0f0full;
    uint16_t h;
    std::memcpy(&h, b + kIq4XsScalesH, 2);
    uint64_t high = h;
    high = (high | high << 24) & 0x000000ff000000ffull;
    high = (high | high << 12) & 0x000f000f000f000full;
    high = (high | high << 6) & 0x0303030303030303ull;
    const __m128i codes =
        _mm_sub_epi8(_mm_cvtsi64_si128(static_cast<long long>(low | high << 4)), _mm_set1_epi8(32));
    return {_mm256_cvtepi8_epi16(_mm_unpacklo_epi8(codes, codes)), _mm256_setzero_si256(),
            f16_one(b), 0.0f};
  }
  template <int K> static __m256i unpack(const uint8_t* b) {
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(b + kIq4XsQs + 16 * K));
    const __m128i mask = _mm_set1_epi8(15);
    const __m256i idx =
        _mm256_set_m128i(_mm_and_si128(_mm_srli_epi16(v, 4), mask), _mm_and_si128(v, mask));
    const __m128i table = _mm_loadu_si128(reinterpret_cast<const __m128i*>(kIq4Values));
    return _mm256_shuffle_epi8(_mm256_set_m128i(table, table), idx);
  }
};

// Quantizes 256 activations into the q8k form (act_quant.h) with the same IEEE
// operations as quantize_act_values, so the same q and d bit for bit.
inline float quantize_super_block_avx2(const float* x, int8_t* q) {
  const __m256 sign = _mm256_set1_ps(-0.0f);
  __m256 amax = _mm256_setzero_ps();
  for (int j = 0; j < kSuperValues; j += 8)
    amax = _mm256_max_ps(_mm256_andnot_ps(sign, _mm256_loadu_ps(x + j)),
                         amax); // NaN: skipped, as in the scalar loop
  __m128 m = _mm_max_ps(_mm256_castps256_ps128(amax), _mm256_extractf128_ps(amax, 1));
  m = _mm_max_ps(m, _mm_movehl_ps(m, m));
  m = _mm_max_ss(m, _mm_movehdup_ps(m));
  const float d = _mm_cvtss_f32(m) / 127.0f;
  const __m256 id = _mm256_set1_ps(d != 0.0f ? 1.0f / d : 0.0f);
  const __m256 half = _mm256_set1_ps(0.5f), one = _mm256_set1_ps(1.0f),
               lim = _mm256_set1_ps(127.0f);
  auto codes = [&](const float* p) {
    const __m256 v = _mm256_mul_ps(_mm256_loadu_ps(p), id);
    __m256 t = _mm256_round_ps(v, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
    const __m256 frac = _mm256_sub_ps(v, t);
    t = _mm256_add_ps(t, _mm256_and_ps(_mm256_cmp_ps(frac, half, _CMP_GE_OQ), one));
    t = _mm256_sub_ps(
        t, _mm256_and_ps(_mm256_cmp_ps(frac, _mm256_xor_ps(half, sign), _CMP_LE_OQ), one));
    t = _mm256_max_ps(_mm256_xor_ps(lim, sign), _mm256_min_ps(lim, t));
    return _mm256_cvttps_epi32(t);
  };
  for (int j = 0; j < kSuperValues; j += 32) {
    const __m256i ab = _mm256_packs_epi32(codes(x + j), codes(x + j + 8));
    const __m256i cd = _mm256_packs_epi32(codes(x + j + 16), codes(x + j + 24));
    const __m256i bytes = _mm256_permutevar8x32_epi32(_mm256_packs_epi16(ab, cd),
                                                      _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
    _mm256_store_si256(reinterpret_cast<__m256i*>(q + j), bytes);
  }
  return d;
}

} // namespace
} // namespace pshard::kernels
