// AVX-512 VNNI kernels for the legacy 32-value blocks (Q8_0, Q4_0, Q4_1, Q5_0,
// Q5_1, IQ4_NL, MXFP4), and the AVX-512 kernel set.
//
// Two weight blocks (64 values) fill one 512-bit register of unsigned bytes
// (loaders in avx512_block_loaders.h):
//   Q4_0, Q5_0, Q4_1, Q5_1  the codes as they are (0..15 / 0..31), arranged
//         [lo(b) lo(b+1) hi(b) hi(b+1)]
//   IQ4_NL, MXFP4  their table's values + 128, arranged likewise
//   Q8_0  the int8 quants + 128 (xor 0x80), arranged [b b+1]
// vpdpbusd multiplies them with the signed q8 activations and sums each group of
// four into an int32 lane. The offset (8, 16 or 128) times the activation sum is
// subtracted for free by starting the accumulation from a precomputed
// -offset * (lane's activation sum). Each lane is then scaled by the weight and
// activation block scales and added to 16 float lanes per (row, token); Q4_1 and
// Q5_1 add their minimum times the lane's activation sum before the activation scale.
//
// The packing lays each token's activations out in exactly the weights' lane order:
//   q     nb2 * 32 bytes     (nb2 = blocks rounded up to even; the pad is zero)
//   dx    nb2 * 8 floats     the block scale of every lane
//   corr  nb2 * 8 int32      -offset * sum of the lane's four activation bytes
//                            (Q4_1, Q5_1: the sums themselves, as floats)
#include "runtime/kernels/kernel_set.h"
#include "runtime/kernels/simd_exports.h"

#if defined(__AVX512F__)
#include "runtime/kernels/act_quant.h" // kActBlock, round_up
#include "runtime/kernels/avx512_block_loaders.h"
#include "runtime/kernels/tile_driver.h"
#include "runtime/kernels/unroll.h"

#include <immintrin.h>

namespace pshard::kernels {
namespace {

// Bytes ahead of the current block that each row is prefetched: the best of
// 2-32 KiB for 1B-model decode on a 2-core Zen 4 VM (Q4_0 +15-20 % and Q8_0
// +10 % over 4 KiB; a long distance starts the 4 KiB pages' walks early).
constexpr int64_t kPrefetchAhead = 16384;

int64_t pairs_of(int64_t cols) { return (cols / kActBlock + 1) / 2; }

size_t act_bytes(int64_t cols) { return static_cast<size_t>(pairs_of(cols)) * 192; }

// quantize_act_block (act_quant.h) in vector form: the same IEEE operations, so
// the same quants and scale bit for bit (the kernel tests compare the paths).
float quantize_block_avx512(const float* x, int8_t* q) {
  const __m512 a = _mm512_loadu_ps(x), b = _mm512_loadu_ps(x + 16);
  const float amax = _mm512_reduce_max_ps(_mm512_max_ps(_mm512_abs_ps(a), _mm512_abs_ps(b)));
  const float d = amax / 127.0f;
  const __m512 id = _mm512_set1_ps(d != 0.0f ? 1.0f / d : 0.0f);
  for (int h = 0; h < 2; ++h) {
    const __m512 v = _mm512_mul_ps(h == 0 ? a : b, id);
    __m512 t = _mm512_roundscale_ps(v, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
    const __m512 frac = _mm512_sub_ps(v, t);
    t = _mm512_mask_add_ps(t, _mm512_cmp_ps_mask(frac, _mm512_set1_ps(0.5f), _CMP_GE_OQ), t,
                           _mm512_set1_ps(1.0f));
    t = _mm512_mask_sub_ps(t, _mm512_cmp_ps_mask(frac, _mm512_set1_ps(-0.5f), _CMP_LE_OQ), t,
                           _mm512_set1_ps(1.0f));
    t = _mm512_max_ps(_mm512_set1_ps(-127.0f), _mm512_min_ps(_mm512_set1_ps(127.0f), t));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(q + 16 * h), _mm512_cvtepi32_epi8(_mm512_cvttps_epi32(t)));
  }
  return d;
}

// Q8_0 pairs lay a block's 32 quants out whole, [b b+1]; the nibble types' pairs
// split them into halves, [lo(b) lo(b+1) hi(b) hi(b+1)], matching the unpacking.
// The types with a minimum get the lanes' activation sums as floats in place of
// the corrections.
// HiScale: the loader's high-nibble lanes (8..15 of a split pair) carry 16 times
// their codes (Q4Weights), so their scales are divided and corrections multiplied by it.
template <bool SplitHalves, int Offset, bool FloatSums, int HiScale = 1>
void pack(const float* x, int64_t cols, uint8_t* dst) {
  const int64_t nb = cols / kActBlock, pairs = pairs_of(cols);
  int8_t* q = reinterpret_cast<int8_t*>(dst);
  float* dx = reinterpret_cast<float*>(dst + pairs * 64);
  int32_t* corr = reinterpret_cast<int32_t*>(dst + pairs * 128);
  float* sums = reinterpret_cast<float*>(corr);
  for (int64_t p = 0; p < pairs; ++p) {
    int8_t* qp = q + p * 64;
    float d[2] = {0.0f, 0.0f};
    for (int half = 0; half < 2; ++half) {
      int8_t block[kActBlock] = {};
      if (2 * p + half < nb)
        d[half] = quantize_block_avx512(x + (2 * p + half) * kActBlock, block);
      if (SplitHalves) {
        __builtin_memcpy(qp + half * 16, block, 16);
        __builtin_memcpy(qp + 32 + half * 16, block + 16, 16);
      } else {
        __builtin_memcpy(qp + half * 32, block, 32);
      }
    }
    for (int lane = 0; lane < 16; ++lane) {
      // The block a lane belongs to: the one owning its four bytes.
      const int half = SplitHalves ? (lane / 4) & 1 : lane / 8;
      const int scale = SplitHalves && lane >= 8 ? HiScale : 1;
      dx[p * 16 + lane] = d[half] / static_cast<float>(scale);
      const int8_t* g = qp + 4 * lane;
      const int sum = g[0] + g[1] + g[2] + g[3];
      if (FloatSums)
        sums[p * 16 + lane] = static_cast<float>(sum);
      else
        corr[p * 16 + lane] = -Offset * scale * sum;
    }
  }
}

template <class W> struct QuantTile {
  // 4 rows x 6 tokens in prefill (24 of the 32 zmm registers accumulate): over 4 x 4, one
  // thread, 128 tokens, IQ4_NL and Q5_0 +8-9 %, Q4_0 and Q8_0 +2-3 %; 6 x 4 was slower
  // than 4 x 4 and 4 x 8 no better than 4 x 6 (three alternated rounds, medians); a whole
  // 8-layer model's 512-token prefill, 2 threads, five rounds: Q4_0 1.03x, Q8_0 1.03x.
  static constexpr int kRows = 4, kTokens = 6, kDecodeRows = 4;

  template <int R, int T> static void tile(const TileArgs& a, int64_t r, int64_t t) {
    const int64_t nb = a.w.cols / kActBlock, pairs = pairs_of(a.w.cols);
    const TileOperands<R, T> op(a, r, t);
    const auto& rows = op.rows;
    const auto& xs = op.xs;
    __m512 acc[R][T];
    fill_tile(acc, _mm512_setzero_ps());

    for (int64_t p = 0; p < pairs; ++p) {
      const bool lone = 2 * p + 1 == nb;
      __m512i wq[R];
      __m512 wd[R], wm[R];
      PSHARD_UNROLL
      for (int i = 0; i < R; ++i) {
        const uint8_t* b0 = rows[i] + 2 * p * W::kBlock;
        if constexpr (W::kMin)
          wm[i] = W::mins(b0, lone ? nullptr : b0 + W::kBlock);
        // The hardware prefetchers stop at 4 KiB page boundaries, and weights come
        // from a file mapping in 4 KiB pages: prefetch ahead in every row, into L2
        // (T1; into L1, T0, whole-model decode measured ~15 % slower: the lines
        // arrive far too early for L1 and evict the tile's operands).
        _mm_prefetch(reinterpret_cast<const char*>(b0 + kPrefetchAhead), _MM_HINT_T1);
        if constexpr (T == 1)
          W::load_for_one_token(b0, lone ? nullptr : b0 + W::kBlock, &wq[i], &wd[i]);
        else
          W::load_for_tokens(b0, lone ? nullptr : b0 + W::kBlock, &wq[i], &wd[i]);
      }
      PSHARD_UNROLL
      for (int j = 0; j < T; ++j) {
        const __m512i xq = _mm512_load_si512(xs[j] + p * 64);
        const __m512 xd = _mm512_load_ps(reinterpret_cast<const float*>(xs[j] + pairs * 64) + p * 16);
        const __m512i corr = _mm512_load_si512(xs[j] + pairs * 128 + p * 64);
        PSHARD_UNROLL
        for (int i = 0; i < R; ++i) {
          // With a minimum, corr holds the lane sums (floats) and nothing is offset.
          const __m512i isum = _mm512_dpbusd_epi32(W::kMin ? _mm512_setzero_si512() : corr, wq[i], xq);
          __m512 scaled = _mm512_mul_ps(_mm512_cvtepi32_ps(isum), wd[i]);
          if constexpr (W::kMin)
            scaled = _mm512_fmadd_ps(_mm512_castsi512_ps(corr), wm[i], scaled);
          acc[i][j] = _mm512_fmadd_ps(scaled, xd, acc[i][j]);
        }
      }
    }
    PSHARD_UNROLL
    for (int j = 0; j < T; ++j)
      PSHARD_UNROLL
      for (int i = 0; i < R; ++i)
        a.y[(t + j) * a.ldy + r + i] = _mm512_reduce_add_ps(acc[i][j]);
  }
};

template <class W>
void gemm_quant(const MatrixView& w, int64_t r0, int64_t r1, const uint8_t* act, size_t stride,
                int64_t n_tokens, float* y, int64_t ldy) {
  run_tiles<QuantTile<W>>(w, r0, r1, act, stride, n_tokens, y, ldy);
}

// A legacy type's kernels: the packing its loader's layout needs, and its tile.
template <class W> constexpr int hi_scale() {
  if constexpr (requires { W::kHiScale; })
    return W::kHiScale;
  return 1;
}

template <class W> constexpr TypeKernels legacy() {
  return {act_bytes, pack<W::kSplitHalves, W::kOffset, W::kMin, hi_scale<W>()>, gemm_quant<W>};
}

size_t no_packing(int64_t) { return 0; }
void no_pack(const float*, int64_t, uint8_t*) {}

constexpr KernelSet kAvx512 = {
    Isa::kAvx512,
    {no_packing, no_pack, avx512::gemm_f32},
    {no_packing, no_pack, avx512::gemm_f16},
    {no_packing, no_pack, avx512::gemm_bf16},
    legacy<Q8Weights>(),
    legacy<Q4Weights>(),
    legacy<MinWeights<false>>(),
    legacy<Q5_0Weights>(),
    legacy<MinWeights<true>>(),
    legacy<Iq4NlWeights>(),
    legacy<Mxfp4Weights>(),
    PSHARD_KQUANT_TYPE_KERNELS(avx512),
    {avx512::sum_squares, avx512::softmax, avx512::silu_mul, avx512::gelu_mul, avx512::gelu_erf,
     avx512::attend, avx512::delta_step, avx512::attend_block, avx512::attend_tile,
     avx512::attend_heads},
    avx512::stream_sum,
};

} // namespace

const KernelSet& avx512_kernel_set() { return kAvx512; }

} // namespace pshard::kernels
#else
namespace pshard::kernels {
const KernelSet& avx512_kernel_set() { return scalar_kernel_set(); }
} // namespace pshard::kernels
#endif
