// Private, for the AVX2 and AVX-512 files: the K-quant matmul tile, written once
// over a vector-width policy V, for every format of kquant_unpack.h.
//
// Per super-block (256 values) and weight row: the format's scales, then per chunk
// of V::kChunk values (32 for AVX2, 64 for AVX-512) the unpacked codes u and the
// chunk's int16 scales. Per token, vpmaddubsw(u, q) makes int16 pair sums (exact,
// see kquant_unpack.h) and a multiply-add with the scales (vpmaddwd + add on AVX2,
// VNNI's vpdpwssd on AVX-512) accumulates sc * (u . q) into int32 lanes; the
// super-block's int32 lanes are exact. At its end each (row, token) adds
//   cvt(lanes [- min lanes]) * (d * d_x)   [then - cvt(min lanes) * (dm * d_x)]
// into float lanes (min lanes: vpmaddwd of the 16 mins with the token's 16 sums).
// The sequence per (row, token) is the same whatever the tile's R and T, so
// decode, prefill and edge tiles agree bit for bit (tile_driver.h).
//
// V provides the chunk geometry and tile shape, the weights of a chunk, the
// chunk's scales, the integer dot step, sign moves for signed formats, the float
// ops and the horizontal sum. Internal linkage throughout (see kernel_set.h).
#pragma once

#include "runtime/kernels/act_quant.h"
#include "runtime/kernels/kquant_unpack.h"
#include "runtime/kernels/tile_driver.h"
#include "runtime/kernels/unroll.h"

#include <utility>

namespace pshard::kernels {
namespace {

// Calls fn.template operator()<C>() for C = 0, 1, …: the chunk loop, unrolled, so
// every chunk's shifts and offsets are constants.
template <class Fn, int... C>
inline void for_each_chunk(Fn&& fn, std::integer_sequence<int, C...>) {
  (fn.template operator()<C>(), ...);
}

template <class V, class F> struct KQuantTile {
  static constexpr int kRows = V::kRows, kTokens = V::kTokens, kDecodeRows = V::kDecodeRows;
  using I = typename V::I;
  using Fl = typename V::F;

  template <int R, int T> static void tile(const TileArgs& a, int64_t r, int64_t t) {
    const Q8kLayout l = Q8kLayout::of(a.w.cols);
    const TileOperands<R, T> op(a, r, t);
    const auto& rows = op.rows;
    const auto& xs = op.xs;
    Fl acc[R][T];
    fill_tile(acc, V::zero_f());

    for (int64_t sb = 0; sb < l.nsb; ++sb) {
      const uint8_t* blocks[R];
      typename V::ChunkScales cs[R];
      KScales ks[R];
      PSHARD_UNROLL
      for (int i = 0; i < R; ++i) {
        blocks[i] = rows[i] + sb * F::kBytes;
        // Weights come from a file mapping in 4 KiB pages, where the hardware
        // prefetchers stop: prefetch every line of the block ahead, into L2.
        PSHARD_UNROLL
        for (size_t line = 0; line < F::kBytes; line += 64)
          _mm_prefetch(reinterpret_cast<const char*>(blocks[i] + V::kPrefetchAhead + line),
                       _MM_HINT_T1);
        ks[i] = F::scales(blocks[i]);
        cs[i] = V::prepare_scales(ks[i].sc);
      }
      I isum[R][T];
      fill_tile(isum, V::zero_i());

      for_each_chunk(
          [&]<int C>() __attribute__((always_inline)) {
            I u[R], w[R], sc[R];
            PSHARD_UNROLL
            for (int i = 0; i < R; ++i) {
              w[i] = V::template weights<F, C>(blocks[i]);
              u[i] = F::kSigned ? V::abs_bytes(w[i]) : w[i];
              sc[i] = V::template chunk_scales<C>(cs[i]);
            }
            PSHARD_UNROLL
            for (int j = 0; j < T; ++j) {
              const I x = V::load_q(xs[j] + sb * kActSuperBlock + C * V::kChunk);
              PSHARD_UNROLL
              for (int i = 0; i < R; ++i)
                isum[i][j] = V::dot(isum[i][j], u[i], F::kSigned ? V::sign_of(x, w[i]) : x, sc[i]);
            }
          },
          std::make_integer_sequence<int, kActSuperBlock / V::kChunk>{});

      PSHARD_UNROLL
      for (int j = 0; j < T; ++j) {
        const float dx = reinterpret_cast<const float*>(xs[j] + l.d_offset())[sb];
        const __m256i bsums =
            _mm256_loadu_si256(reinterpret_cast<const __m256i*>(xs[j] + l.bsums_offset()) + sb);
        PSHARD_UNROLL
        for (int i = 0; i < R; ++i) {
          I total = isum[i][j];
          I mins = V::zero_i();
          if constexpr (F::kMins != Mins::kNone)
            mins = V::widen(_mm256_madd_epi16(ks[i].mins, bsums));
          if constexpr (F::kMins == Mins::kOffset)
            total = V::sub_i(total, mins);
          acc[i][j] = V::fma(V::to_float(total), V::set1(ks[i].d * dx), acc[i][j]);
          if constexpr (F::kMins == Mins::kSeparate)
            acc[i][j] = V::fnma(V::to_float(mins), V::set1(ks[i].dm * dx), acc[i][j]);
        }
      }
    }
    PSHARD_UNROLL
    for (int j = 0; j < T; ++j)
      PSHARD_UNROLL
    for (int i = 0; i < R; ++i)
      a.y[(t + j) * a.ldy + r + i] = V::sum(acc[i][j]);
  }
};

template <class V, class F>
void gemm_kquant(const MatrixView& w, int64_t r0, int64_t r1, const uint8_t* act, size_t stride,
                 int64_t n_tokens, float* y, int64_t ldy) {
  run_tiles<KQuantTile<V, F>>(w, r0, r1, act, stride, n_tokens, y, ldy);
}

// The q8k packing (act_quant.h), its 16-value sums from vpsadbw: the quants offset
// by 128 are unsigned, and each 64-bit lane sums eight of them.
void q8k_pack(const float* x, int64_t cols, uint8_t* dst) {
  pack_q8k_with(x, cols, dst, quantize_super_block_avx2, [](const int8_t* q, int16_t* sums) {
    for (int k = 0; k < kActSuperBlock / 32; ++k) {
      const __m256i v = _mm256_load_si256(reinterpret_cast<const __m256i*>(q + 32 * k));
      const __m256i s8 = _mm256_sad_epu8(
          _mm256_xor_si256(v, _mm256_set1_epi8(static_cast<char>(0x80))), _mm256_setzero_si256());
      alignas(32) int64_t s[4];
      _mm256_store_si256(reinterpret_cast<__m256i*>(s), s8);
      sums[2 * k] = static_cast<int16_t>(s[0] + s[1] - 16 * 128);
      sums[2 * k + 1] = static_cast<int16_t>(s[2] + s[3] - 16 * 128);
    }
  });
}

} // namespace
} // namespace pshard::kernels

// Defines an ISA file's exported K-quant functions (simd_exports.h) over its vector
// policy; use inside that ISA's namespace, after the policy.
#define PSHARD_KQUANT_GEMM(name, Vectors, Fmt)                                                     \
  void name(const MatrixView& w, int64_t r0, int64_t r1, const uint8_t* act, size_t stride,        \
            int64_t n_tokens, float* y, int64_t ldy) {                                             \
    gemm_kquant<Vectors, Fmt>(w, r0, r1, act, stride, n_tokens, y, ldy);                           \
  }
#define PSHARD_DEFINE_KQUANT_EXPORTS(Vectors)                                                      \
  size_t q8k_act_bytes(int64_t cols) { return Q8kLayout::of(cols).bytes(); }                       \
  void q8k_act_pack(const float* x, int64_t cols, uint8_t* dst) { q8k_pack(x, cols, dst); }        \
  PSHARD_KQUANT_GEMM(gemm_q2_k, Vectors, Q2KFormat)                                                \
  PSHARD_KQUANT_GEMM(gemm_q3_k, Vectors, Q3KFormat)                                                \
  PSHARD_KQUANT_GEMM(gemm_q4_k, Vectors, Q45KFormat<false>)                                        \
  PSHARD_KQUANT_GEMM(gemm_q5_k, Vectors, Q45KFormat<true>)                                         \
  PSHARD_KQUANT_GEMM(gemm_q6_k, Vectors, Q6KFormat)                                                \
  PSHARD_KQUANT_GEMM(gemm_iq4_xs, Vectors, Iq4XsFormat)
