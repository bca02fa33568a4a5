// Private, for avx512_quant.cpp only: the weight loaders of the legacy 32-value
// blocks. A loader reads a pair of blocks (b1 null: a lone last block, whose half
// reads as zero) into the layout described in avx512_quant.cpp: 64 unsigned bytes
// for vpdpbusd and the per-lane scales as floats (f16 widened; MXFP4's from its E8M0
// byte), and for the types with a minimum (kMin) the per-lane minimums too. It also
// names the activation packing it needs: kOffset (subtracted through the
// corrections), kSplitHalves.
//
// Internal linkage throughout (see kernel_set.h).
#pragma once

#include "runtime/kernels/block_decode.h" // kE8m0HalfScales
#include "runtime/tensor/tensor_type.h"

#include <cstddef>
#include <cstdint>
#include <immintrin.h>

namespace pshard::kernels {
namespace {

constexpr size_t kQ8Block = 34, kQ4Block = 18;

// A pair of weight scales (f16) spread over the 16 lanes by `idx`. The two
// halves go into one xmm with a load and an insert (b1 null: a lone last block).
__m512 pair_scales(const uint8_t* b0, const uint8_t* b1, __m512i idx) {
  uint16_t d0, d1 = 0;
  __builtin_memcpy(&d0, b0, 2);
  if (b1 != nullptr)
    __builtin_memcpy(&d1, b1, 2);
  const __m128i h = _mm_insert_epi16(_mm_cvtsi32_si128(d0), d1, 1);
  return _mm512_permutexvar_ps(idx, _mm512_castps128_ps512(_mm_cvtph_ps(h)));
}

// A pair of MXFP4 scales (E8M0 bytes at b0[0], b1[0]) spread like pair_scales'.
__m512 pair_e8m0_scales(const uint8_t* b0, const uint8_t* b1, __m512i idx) {
  const __m128 d0 = _mm_load_ss(&kE8m0HalfScales.of[b0[0]]);
  const __m128 d1 = b1 != nullptr ? _mm_load_ss(&kE8m0HalfScales.of[b1[0]]) : _mm_setzero_ps();
  return _mm512_permutexvar_ps(idx, _mm512_castps128_ps512(_mm_unpacklo_ps(d0, d1)));
}

// The nibbles of a pair's quant bytes (qs1 null: zeros): [lo(b) lo(b+1) hi(b) hi(b+1)].
__m512i pair_nibbles(const uint8_t* qs0, const uint8_t* qs1) {
  const __m128i a = _mm_loadu_si128(reinterpret_cast<const __m128i*>(qs0));
  const __m128i c =
      qs1 != nullptr ? _mm_loadu_si128(reinterpret_cast<const __m128i*>(qs1)) : _mm_setzero_si128();
  const __m256i v = _mm256_inserti128_si256(_mm256_castsi128_si256(a), c, 1);
  const __m256i mask = _mm256_set1_epi8(0x0f);
  const __m256i lo = _mm256_and_si256(v, mask);
  const __m256i hi = _mm256_and_si256(_mm256_srli_epi16(v, 4), mask);
  return _mm512_inserti64x4(_mm512_castsi256_si512(lo), hi, 1);
}

// Q4_0's nibbles of a pair with the high ones left in place (16 times their value):
// [lo(b) lo(b+1) 16 hi(b) 16 hi(b+1)]; the packing divides those lanes' activation
// scales by 16 (kHiScale), so the products come out the same, bit for bit.
__m512i pair_nibbles_hi16(const uint8_t* qs0, const uint8_t* qs1) {
  const __m128i a = _mm_loadu_si128(reinterpret_cast<const __m128i*>(qs0));
  const __m128i c =
      qs1 != nullptr ? _mm_loadu_si128(reinterpret_cast<const __m128i*>(qs1)) : _mm_setzero_si128();
  const __m256i v = _mm256_inserti128_si256(_mm256_castsi128_si256(a), c, 1);
  return _mm512_inserti64x4(_mm512_castsi256_si512(_mm256_and_si256(v, _mm256_set1_epi8(0x0f))),
                            _mm256_and_si256(v, _mm256_set1_epi8(static_cast<char>(0xf0))), 1);
}

// Q5's fifth bits of a pair (qh1 null: zeros) added as 16 to pair_nibbles' bytes:
// bit j of a block's qh belongs to its value j, so the byte mask is
// [qh0 0..15 | qh1 0..15 | qh0 16..31 | qh1 16..31].
__m512i add_fifth_bits(__m512i nibbles, const uint8_t* qh0, const uint8_t* qh1) {
  uint32_t h0, h1 = 0;
  __builtin_memcpy(&h0, qh0, 4);
  if (qh1 != nullptr)
    __builtin_memcpy(&h1, qh1, 4);
  const uint64_t bits = (h0 & 0xffffull) | (h1 & 0xffffull) << 16 |
                        static_cast<uint64_t>(h0 >> 16) << 32 |
                        static_cast<uint64_t>(h1 >> 16) << 48;
  return _mm512_or_si512(nibbles, _mm512_maskz_mov_epi8(bits, _mm512_set1_epi8(16)));
}

// The split-halves lane order: lanes 0-3 and 8-11 hold block b, 4-7 and 12-15 b+1.
__m512i split_lanes() { return _mm512_set_epi32(1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1, 1, 0, 0, 0, 0); }

const uint8_t* at(const uint8_t* block, size_t offset) {
  return block != nullptr ? block + offset : nullptr;
}

struct Q8Weights {
  static constexpr size_t kBlock = kQ8Block;
  static constexpr int kOffset = 128;
  static constexpr bool kSplitHalves = false, kMin = false;
  static __m512i lanes() {
    return _mm512_set_epi32(1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0);
  }
  // b1 null: a lone last block; its half stays zero.
  static void load_for_tokens(const uint8_t* b0, const uint8_t* b1, __m512i* q, __m512* d) {
    const __m256i flip = _mm256_set1_epi8(static_cast<char>(0x80));
    const __m256i lo =
        _mm256_xor_si256(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(b0 + 2)), flip);
    const __m256i hi =
        b1 != nullptr
            ? _mm256_xor_si256(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(b1 + 2)), flip)
            : _mm256_setzero_si256();
    *q = _mm512_inserti64x4(_mm512_castsi256_si512(lo), hi, 1);
    *d = pair_scales(b0, b1, lanes());
  }
  static void load_for_one_token(const uint8_t* b0, const uint8_t* b1, __m512i* q, __m512* d) {
    load_for_tokens(b0, b1, q, d);
  }
};

// Q4_0 has two loaders that build the same vectors. Decode's: a pair is 36
// contiguous bytes, [d0 qs0 d1 qs1], scales and quants 16-bit aligned, so one
// masked load takes the pair and two word permutes spread it — the quants to
// [qs0 qs1 qs0 qs1], the scales to the lanes' order — in half the instructions
// of separate loads and inserts (one token's tile is bound by this unpacking).
//
// Both leave the high nibbles in place (16 times their value: one AND, no shift, for
// the whole register) and kHiScale = 16 tells the packing to divide the high lanes'
// activation scales by 16 and multiply their corrections by 16: every integer lane
// sum is then exactly 16 times the unshifted one (at most 122880 in magnitude, so
// exact in float too) and the product with the scaled activation scale is the same
// float, bit for bit (powers of two scale exactly; the activation scale would have to
// be below 2^-122 to lose a bit).
struct Q4Weights {
  static constexpr size_t kBlock = kQ4Block;
  static constexpr int kOffset = 8, kHiScale = 16;
  static constexpr bool kSplitHalves = true, kMin = false;
  static __m512i lanes() { return split_lanes(); }
  static void load_for_one_token(const uint8_t* b0, const uint8_t* b1, __m512i* q, __m512* d) {
    // Words of the pair: 0 = d0, 1..8 = qs0, 9 = d1, 10..17 = qs1. A lone last
    // block loads 18 bytes; its missing half reads as zero quants and scale.
    const __mmask64 bytes = b1 != nullptr ? 0xFFFFFFFFFull : 0x3FFFFull;
    const __m512i v = _mm512_maskz_loadu_epi8(bytes, b0);
    const __m512i quant_words =
        _mm512_set_epi16(17, 16, 15, 14, 13, 12, 11, 10, 8, 7, 6, 5, 4, 3, 2, 1, 17, 16, 15, 14, 13,
                         12, 11, 10, 8, 7, 6, 5, 4, 3, 2, 1);
    // Low nibbles in the lower half, high nibbles (in place) in the upper half.
    const __m512i nibble_masks = _mm512_inserti64x4(_mm512_set1_epi8(0x0f),
                                                    _mm256_set1_epi8(static_cast<char>(0xf0)), 1);
    *q = _mm512_and_si512(_mm512_permutexvar_epi16(quant_words, v), nibble_masks);
    // Lane l's block (lanes(): [b b b b b+1 b+1 b+1 b+1] twice) takes d0 or d1.
    const __m512i scale_words = _mm512_set_epi16(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 9,
                                                 9, 9, 9, 0, 0, 0, 0, 9, 9, 9, 9, 0, 0, 0, 0);
    *d = _mm512_cvtph_ps(_mm512_castsi512_si256(_mm512_permutexvar_epi16(scale_words, v)));
  }
  // Prefill's loader: loads, inserts and integer ops, which leave the FMA pipes
  // to the tile's dot products (where the compact loader's permutes compete).
  static void load_for_tokens(const uint8_t* b0, const uint8_t* b1, __m512i* q, __m512* d) {
    *q = pair_nibbles_hi16(b0 + 2, at(b1, 2));
    *d = pair_scales(b0, b1, lanes());
  }
};

// Q5_0: Q4_0's layout with the fifth bits, offset 16.
struct Q5_0Weights {
  static constexpr size_t kBlock = 22;
  static constexpr int kOffset = 16;
  static constexpr bool kSplitHalves = true, kMin = false;
  static void load_for_tokens(const uint8_t* b0, const uint8_t* b1, __m512i* q, __m512* d) {
    *q = add_fifth_bits(pair_nibbles(b0 + 6, at(b1, 6)), b0 + 2, at(b1, 2));
    *d = pair_scales(b0, b1, split_lanes());
  }
  static void load_for_one_token(const uint8_t* b0, const uint8_t* b1, __m512i* q, __m512* d) {
    load_for_tokens(b0, b1, q, d);
  }
};

// Q4_1 / Q5_1: the codes as they are (no offset); the minimum m at byte 2 is
// added by the tile as m * (lane sum).
template <bool Fifth> struct MinWeights {
  static constexpr size_t kBlock = Fifth ? 24 : 20;
  static constexpr int kOffset = 0;
  static constexpr bool kSplitHalves = true, kMin = true;
  static void load_for_tokens(const uint8_t* b0, const uint8_t* b1, __m512i* q, __m512* d) {
    if constexpr (Fifth)
      *q = add_fifth_bits(pair_nibbles(b0 + 8, at(b1, 8)), b0 + 4, at(b1, 4));
    else
      *q = pair_nibbles(b0 + 4, at(b1, 4));
    *d = pair_scales(b0, b1, split_lanes());
  }
  static void load_for_one_token(const uint8_t* b0, const uint8_t* b1, __m512i* q, __m512* d) {
    load_for_tokens(b0, b1, q, d);
  }
  static __m512 mins(const uint8_t* b0, const uint8_t* b1) {
    return pair_scales(b0 + 2, at(b1, 2), split_lanes());
  }
};

// IQ4_NL and MXFP4: Q4_0's nibble layout (the quants from byte Qs) looked up (vpshufb) in
// the type's table + 128, offset 128; the pair's scales read by Scales (IQ4_NL's f16,
// MXFP4's E8M0 bytes).
template <const int8_t* Table, size_t Block, size_t Qs,
          __m512 (*Scales)(const uint8_t*, const uint8_t*, __m512i)>
struct TableWeights {
  static constexpr size_t kBlock = Block;
  static constexpr int kOffset = 128;
  static constexpr bool kSplitHalves = true, kMin = false;
  static void load_for_tokens(const uint8_t* b0, const uint8_t* b1, __m512i* q, __m512* d) {
    const __m128i table = _mm_add_epi8(_mm_loadu_si128(reinterpret_cast<const __m128i*>(Table)),
                                       _mm_set1_epi8(static_cast<char>(128)));
    *q = _mm512_shuffle_epi8(_mm512_broadcast_i32x4(table), pair_nibbles(b0 + Qs, at(b1, Qs)));
    *d = Scales(b0, b1, split_lanes());
  }
  static void load_for_one_token(const uint8_t* b0, const uint8_t* b1, __m512i* q, __m512* d) {
    load_for_tokens(b0, b1, q, d);
  }
};

using Iq4NlWeights = TableWeights<kIq4Values, kQ4Block, 2, pair_scales>;
using Mxfp4Weights = TableWeights<kMxfp4Values, kMxfp4Bytes, kMxfp4Qs, pair_e8m0_scales>;

} // namespace
} // namespace pshard::kernels
