// The AVX2 tile for the legacy 32-value blocks (Q8_0, Q4_0, Q4_1, Q5_0, Q5_1, IQ4_NL,
// MXFP4), shared by the AVX2 and AVX2-VNNI kernel sets: each includes it in a file compiled
// with its own flags (internal linkage throughout, kernel_set.h), and only the int8 pair
// sums differ — two instructions on AVX2, one vpdpbusd where the CPU has AVX-VNNI. The
// int32 sums are exact either way, so both sets give the same bits.
//
// One weight block (32 values) fills a ymm register; vpmaddubsw multiplies unsigned
// by signed bytes into int16 pairs and vpmaddwd with ones sums them into 8 int32
// lanes (no int16 saturation: |pair| <= 2 * 128 * 127 < 32768).
//   Q8_0, IQ4_NL, MXFP4  signed weights (IQ4_NL's and MXFP4's from their tables by
//         vpshufb): |w| times the activations with w's sign (vpsignb).
//   Q4_0, Q5_0  the codes 0..15 / 0..31 as they are ([low nibbles | high nibbles]
//         = values 0..15 | 16..31, Q5's fifth bits spread from qh); the -8 / -16
//         offset is removed by adding a precomputed -offset * (lane's activation sum).
//   Q4_1, Q5_1  the codes as they are; the minimum m adds m * (lane's activation sum).
// Each int32 lane is scaled by the weight and activation block scales into 8 float
// lanes per (row, token). The weight scale is the f16 at byte 0, or MXFP4's power of
// two from its E8M0 byte (a weight type's scale()).
//
// Packed activations per token: q (nb * 32 bytes, natural order), d (nb floats),
// then nb * 8 lane values: the int32 corrections -offset * (lane sum), or for the
// types with a minimum the lane sums as floats.
#pragma once

#include "runtime/kernels/act_quant.h"
#include "runtime/kernels/avx2_hsum.h"
#include "runtime/kernels/block_decode.h" // kE8m0HalfScales
#include "runtime/kernels/kernel_set.h"
#include "runtime/kernels/simd_exports.h"
#include "runtime/kernels/tile_driver.h"
#include "runtime/kernels/unroll.h"
#include "runtime/tensor/tensor_type.h"

#include <immintrin.h>

namespace pshard::kernels {
namespace {


size_t act_bytes(int64_t cols) {
  return static_cast<size_t>(round_up(cols / kActBlock * (32 + 4 + 32), 64));
}

template <int Offset, bool FloatSums> void pack(const float* x, int64_t cols, uint8_t* dst) {
  const int64_t nb = cols / kActBlock;
  int8_t* q = reinterpret_cast<int8_t*>(dst);
  float* d = reinterpret_cast<float*>(dst + nb * 32);
  int32_t* corr = reinterpret_cast<int32_t*>(dst + nb * 36);
  float* sums = reinterpret_cast<float*>(corr);
  for (int64_t b = 0; b < nb; ++b) {
    int8_t* qb = q + b * kActBlock;
    d[b] = quantize_act_block(x + b * kActBlock, qb);
    for (int lane = 0; lane < 8; ++lane) {
      const int sum = qb[4 * lane] + qb[4 * lane + 1] + qb[4 * lane + 2] + qb[4 * lane + 3];
      if (FloatSums)
        sums[b * 8 + lane] = static_cast<float>(sum);
      else
        corr[b * 8 + lane] = -Offset * sum;
    }
  }
}

// The f16 broadcast first and widened in all eight lanes (the same float in each).
__m256 block_scale(const uint8_t* block) {
  int16_t h;
  __builtin_memcpy(&h, block, 2);
  return _mm256_cvtph_ps(_mm_set1_epi16(h));
}

// The 32 nibbles of a block's 16 quant bytes: [low nibbles | high nibbles]. The 16
// bytes loaded into both halves, the upper half's 64-bit lanes shifted right by 4,
// one mask: three instructions where two half-width masks, a shift and an insert took
// five (a byte's bits that the shift moves into its neighbour's high nibble are masked).
__m256i nibble_vector(const uint8_t* qs) {
  const __m256i both =
      _mm256_broadcastsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(qs)));
  return _mm256_and_si256(_mm256_srlv_epi64(both, _mm256_set_epi64x(4, 4, 0, 0)),
                          _mm256_set1_epi8(0x0f));
}

// Byte j = 16 where bit j of the little-endian qh is set (Q5's fifth bits): byte j
// takes qh's byte j / 8, keeps bit j % 8, and widens it to 0xff by a compare.
__m256i fifth_bits(const uint8_t* qh) {
  uint32_t bits;
  __builtin_memcpy(&bits, qh, 4);
  const __m256i spread = _mm256_shuffle_epi8(
      _mm256_set1_epi32(static_cast<int>(bits)),
      _mm256_set_epi64x(0x0303030303030303, 0x0202020202020202, 0x0101010101010101, 0));
  const __m256i bit = _mm256_set1_epi64x(static_cast<long long>(0x8040201008040201ull));
  return _mm256_and_si256(_mm256_cmpeq_epi8(_mm256_and_si256(spread, bit), bit), _mm256_set1_epi8(16));
}

// Each int32 lane: the sum of its four unsigned w times signed x bytes (plus corr).
#if defined(__AVXVNNI__)
__m256i unsigned_pairs(__m256i w, __m256i x) {
  return _mm256_dpbusd_avx_epi32(_mm256_setzero_si256(), w, x);
}

__m256i offset_pairs(__m256i w, __m256i x, const int32_t* corr) {
  return _mm256_dpbusd_avx_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(corr)), w, x);
}
#else
__m256i unsigned_pairs(__m256i w, __m256i x) {
  return _mm256_madd_epi16(_mm256_maddubs_epi16(w, x), _mm256_set1_epi16(1));
}

__m256i offset_pairs(__m256i w, __m256i x, const int32_t* corr) {
  return _mm256_add_epi32(unsigned_pairs(w, x), _mm256_loadu_si256(reinterpret_cast<const __m256i*>(corr)));
}
#endif

__m256i signed_pairs(__m256i w, __m256i sign, __m256i x) {
  return unsigned_pairs(w, _mm256_sign_epi8(x, sign));
}

// W: kBlock (bytes), kMin (the block has a minimum m at byte 2), the activation
// packing's offset, load (codes, or magnitudes with `sign`), pairs (int32 lanes).
struct Q8Weights {
  static constexpr size_t kBlock = 34;
  static constexpr bool kMin = false;
  static constexpr int kOffset = 8; // unused: Q8_0 shares Q4_0's packing
  // The magnitudes; `sign` keeps the signs to move onto the activations.
  static __m256i load(const uint8_t* b, __m256i* sign) {
    *sign = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b + 2));
    return _mm256_sign_epi8(*sign, *sign);
  }
  static __m256i pairs(__m256i w, __m256i sign, __m256i x, const int32_t*) {
    return signed_pairs(w, sign, x);
  }
};

struct Q4Weights {
  static constexpr size_t kBlock = 18;
  static constexpr bool kMin = false;
  static constexpr int kOffset = 8;
  static __m256i load(const uint8_t* b, __m256i*) { return nibble_vector(b + 2); }
  static __m256i pairs(__m256i w, __m256i, __m256i x, const int32_t* corr) {
    return offset_pairs(w, x, corr);
  }
};

struct Q5_0Weights {
  static constexpr size_t kBlock = 22;
  static constexpr bool kMin = false;
  static constexpr int kOffset = 16;
  static __m256i load(const uint8_t* b, __m256i*) {
    return _mm256_or_si256(nibble_vector(b + 6), fifth_bits(b + 2));
  }
  static __m256i pairs(__m256i w, __m256i, __m256i x, const int32_t* corr) {
    return offset_pairs(w, x, corr);
  }
};

// Q4_1 / Q5_1: codes as they are; the tile adds m * (lane sums).
template <bool Fifth> struct MinWeights {
  static constexpr size_t kBlock = Fifth ? 24 : 20;
  static constexpr bool kMin = true;
  static constexpr int kOffset = 0;
  static __m256i load(const uint8_t* b, __m256i*) {
    if constexpr (Fifth)
      return _mm256_or_si256(nibble_vector(b + 8), fifth_bits(b + 4));
    else
      return nibble_vector(b + 4);
  }
  static __m256i pairs(__m256i w, __m256i, __m256i x, const int32_t*) { return unsigned_pairs(w, x); }
};

// IQ4_NL and MXFP4: the nibbles (from byte Qs) looked up (vpshufb) in the type's table,
// signed weights as Q8_0's.
template <const int8_t* Table, size_t Block, size_t Qs> struct TableWeights {
  static constexpr size_t kBlock = Block;
  static constexpr bool kMin = false;
  static constexpr int kOffset = 8; // unused, as Q8_0
  static __m256i load(const uint8_t* b, __m256i* sign) {
    const __m128i table = _mm_loadu_si128(reinterpret_cast<const __m128i*>(Table));
    *sign = _mm256_shuffle_epi8(_mm256_set_m128i(table, table), nibble_vector(b + Qs));
    return _mm256_abs_epi8(*sign);
  }
  static __m256i pairs(__m256i w, __m256i sign, __m256i x, const int32_t*) {
    return signed_pairs(w, sign, x);
  }
};

using Iq4NlWeights = TableWeights<kIq4Values, 18, 2>;

// MXFP4: the scale from e (the block's first byte), not an f16.
struct Mxfp4Weights : TableWeights<kMxfp4Values, kMxfp4Bytes, kMxfp4Qs> {
  static __m256 scale(const uint8_t* b) { return _mm256_broadcast_ss(&kE8m0HalfScales.of[b[0]]); }
};

// The weight block's scale: W's scale() where it has one, else the f16 at byte 0.
template <class W> __m256 weight_scale(const uint8_t* block) {
  if constexpr (requires { W::scale(block); })
    return W::scale(block);
  else
    return block_scale(block);
}

template <class W> struct QuantTile {
  static constexpr int kRows = 2, kTokens = 4, kDecodeRows = 4;

  template <int R, int T> static void tile(const TileArgs& a, int64_t r, int64_t t) {
    const int64_t nb = a.w.cols / kActBlock;
    const TileOperands<R, T> op(a, r, t);
    const auto& rows = op.rows;
    const auto& xs = op.xs;
    __m256 acc[R][T];
    fill_tile(acc, _mm256_setzero_ps());

    for (int64_t b = 0; b < nb; ++b) {
      __m256i wq[R], sign[R];
      __m256 wd[R], wm[R];
      PSHARD_UNROLL
      for (int i = 0; i < R; ++i) {
        const uint8_t* block = rows[i] + b * W::kBlock;
        // Weights come from a file mapping in 4 KiB pages, where the hardware
        // prefetchers stop: prefetch ahead in every row, into L2 (T1: into L1
        // the lines arrive far too early and evict the tile's operands).
        _mm_prefetch(reinterpret_cast<const char*>(block + 4096), _MM_HINT_T1);
        wq[i] = W::load(block, &sign[i]);
        wd[i] = weight_scale<W>(block);
        if constexpr (W::kMin)
          wm[i] = block_scale(block + 2);
      }
      PSHARD_UNROLL
      for (int j = 0; j < T; ++j) {
        const __m256i xq = _mm256_load_si256(reinterpret_cast<const __m256i*>(xs[j] + b * 32));
        const __m256 xd = _mm256_broadcast_ss(reinterpret_cast<const float*>(xs[j] + nb * 32) + b);
        const int32_t* corr = reinterpret_cast<const int32_t*>(xs[j] + nb * 36) + b * 8;
        PSHARD_UNROLL
        for (int i = 0; i < R; ++i) {
          const __m256i isum = W::pairs(wq[i], sign[i], xq, corr);
          __m256 scaled = _mm256_mul_ps(_mm256_cvtepi32_ps(isum), wd[i]);
          if constexpr (W::kMin)
            scaled = _mm256_fmadd_ps(_mm256_loadu_ps(reinterpret_cast<const float*>(corr)), wm[i], scaled);
          acc[i][j] = _mm256_fmadd_ps(scaled, xd, acc[i][j]);
        }
      }
    }
    PSHARD_UNROLL
    for (int j = 0; j < T; ++j)
      PSHARD_UNROLL
    for (int i = 0; i < R; ++i)
      a.y[(t + j) * a.ldy + r + i] = hsum8(acc[i][j]);
  }
};

template <class W>
void gemm_quant(const MatrixView& w, int64_t r0, int64_t r1, const uint8_t* act, size_t stride,
                int64_t n_tokens, float* y, int64_t ldy) {
  run_tiles<QuantTile<W>>(w, r0, r1, act, stride, n_tokens, y, ldy);
}

// A legacy type's kernels: its packing (offset corrections or float lane sums) and tile.
template <class W> constexpr TypeKernels legacy() {
  return {act_bytes, pack<W::kOffset, W::kMin>, gemm_quant<W>};
}

size_t no_packing(int64_t) { return 0; }
void no_pack(const float*, int64_t, uint8_t*) {}

// The AVX2 kernel set with this file's legacy tile: the including file's flags decide which,
// and whose K-quant kernels it takes (avx2vnni_kquant.cpp's with AVX-VNNI).
#if defined(__AVXVNNI__)
namespace kquant_isa = avx2vnni;
#else
namespace kquant_isa = avx2;
#endif
constexpr KernelSet avx2_family_set(Isa isa) {
  return {
      isa,
      {no_packing, no_pack, avx2::gemm_f32},
      {no_packing, no_pack, avx2::gemm_f16},
      {no_packing, no_pack, avx2::gemm_bf16},
      legacy<Q8Weights>(),
      legacy<Q4Weights>(),
      legacy<MinWeights<false>>(),
      legacy<Q5_0Weights>(),
      legacy<MinWeights<true>>(),
      legacy<Iq4NlWeights>(),
      legacy<Mxfp4Weights>(),
      PSHARD_KQUANT_TYPE_KERNELS(kquant_isa),
      {avx2::sum_squares, avx2::softmax, avx2::silu_mul, avx2::gelu_mul, avx2::gelu_erf,
       avx2::attend, avx2::delta_step, avx2::attend_block, avx2::attend_tile, avx2::attend_heads},
      avx2::stream_sum,
  };
}

} // namespace
} // namespace pshard::kernels
