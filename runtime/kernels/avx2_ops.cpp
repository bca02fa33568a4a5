// AVX2 + FMA element-wise and attention kernels: sum of squares (RMSNorm),
// softmax, SiLU-gated product, one-head attention, prefill's tiles of it and the vision
// tower's key-block step, with a vector exp accurate to about 1 ulp (libm's scalar expf
// would dominate softmax and SiLU).
#include "runtime/kernels/attention_kernel.h"
#include "runtime/kernels/attention_lockstep.h"
#include "runtime/kernels/attention_tile.h"
#include "runtime/kernels/avx2_hsum.h"
#include "runtime/kernels/ops.h"
#include "runtime/kernels/scalar_ops.h"
#include "runtime/kernels/simd_exports.h"
#include "runtime/kernels/unroll.h"

#if defined(__AVX2__) && defined(__FMA__)
#include <immintrin.h>

namespace pshard::kernels::avx2 {
namespace {

// The first `rest` lanes set (rest in 0..8), for maskload / maskstore.
__m256i tail_mask(int64_t rest) {
  const __m256i lanes = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(rest)), lanes);
}

// e^x as in the AVX-512 file, with 2^n built in the exponent field: computed as
// 2^(n-1) * 2 so n = 128 (x near ln(FLT_MAX)) still works; below -86.6 (where
// 2^(n-1) would be subnormal) the result is flushed to 0.
__m256 exp_ps(__m256 x) {
  x = _mm256_min_ps(_mm256_set1_ps(88.7228f), x);
  const __m256 n = _mm256_round_ps(_mm256_mul_ps(x, _mm256_set1_ps(1.44269504088896341f)),
                                   _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m256 r = _mm256_fnmadd_ps(n, _mm256_set1_ps(0.693145751953125f), x);
  r = _mm256_fnmadd_ps(n, _mm256_set1_ps(1.428606765330187045e-06f), r);
  __m256 p = _mm256_set1_ps(1.0f / 5040);
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f / 720));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f / 120));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f / 24));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f / 6));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(0.5f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f));
  const __m256i bits =
      _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(126)), 23);
  const __m256 y = _mm256_mul_ps(_mm256_mul_ps(p, _mm256_castsi256_ps(bits)), _mm256_set1_ps(2.0f));
  const __m256 tiny = _mm256_cmp_ps(x, _mm256_set1_ps(-86.6f), _CMP_LT_OQ);
  return _mm256_andnot_ps(tiny, y);
}

float dot(const float* a, const float* b, int64_t n) {
  __m256 acc = _mm256_setzero_ps();
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    acc = _mm256_fmadd_ps(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i), acc);
  if (i < n) {
    const __m256i m = tail_mask(n - i);
    acc = _mm256_fmadd_ps(_mm256_maskload_ps(a + i, m), _mm256_maskload_ps(b + i, m), acc);
  }
  return hsum8(acc);
}

} // namespace

float sum_squares(const float* x, int64_t n) { return dot(x, x, n); }

void softmax(float* x, int64_t n) {
  if (n <= 0)
    return;
  float max = x[0];
  for (int64_t i = 1; i < n; ++i)
    max = x[i] > max ? x[i] : max;
  if (max == -__builtin_inff()) { // every entry masked: zeros are safer than NaN
    for (int64_t i = 0; i < n; ++i)
      x[i] = 0.0f;
    return;
  }
  const __m256 m = _mm256_set1_ps(max);
  __m256 sum = _mm256_setzero_ps();
  for (int64_t i = 0; i < n; i += 8) {
    const __m256i t = tail_mask(n - i < 8 ? n - i : 8);
    const __m256 e = _mm256_and_ps(exp_ps(_mm256_sub_ps(_mm256_maskload_ps(x + i, t), m)),
                                   _mm256_castsi256_ps(t));
    _mm256_maskstore_ps(x + i, t, e);
    sum = _mm256_add_ps(sum, e);
  }
  const __m256 inv = _mm256_set1_ps(1.0f / hsum8(sum));
  for (int64_t i = 0; i < n; i += 8) {
    const __m256i t = tail_mask(n - i < 8 ? n - i : 8);
    _mm256_maskstore_ps(x + i, t, _mm256_mul_ps(_mm256_maskload_ps(x + i, t), inv));
  }
}

void silu_mul(const float* gate, const float* up, float* out, int64_t n) {
  const __m256 one = _mm256_set1_ps(1.0f);
  for (int64_t i = 0; i < n; i += 8) {
    const __m256i t = tail_mask(n - i < 8 ? n - i : 8);
    const __m256 g = _mm256_maskload_ps(gate + i, t);
    const __m256 e = exp_ps(_mm256_sub_ps(_mm256_setzero_ps(), g));
    const __m256 s = _mm256_div_ps(g, _mm256_add_ps(one, e));
    _mm256_maskstore_ps(out + i, t, _mm256_mul_ps(s, _mm256_maskload_ps(up + i, t)));
  }
}

void gelu_mul(const float* gate, const float* up, float* out, int64_t n) {
  const __m256 one = _mm256_set1_ps(1.0f), c1 = _mm256_set1_ps(kGeluC1),
               c3 = _mm256_set1_ps(kGeluC3);
  for (int64_t i = 0; i < n; i += 8) {
    const __m256i t = tail_mask(n - i < 8 ? n - i : 8);
    const __m256 g = _mm256_maskload_ps(gate + i, t);
    const __m256 z = _mm256_mul_ps(g, _mm256_fmadd_ps(c3, _mm256_mul_ps(g, g), c1));
    const __m256 e = exp_ps(_mm256_sub_ps(_mm256_setzero_ps(), z));
    const __m256 s = _mm256_div_ps(g, _mm256_add_ps(one, e));
    _mm256_maskstore_ps(out + i, t, _mm256_mul_ps(s, _mm256_maskload_ps(up + i, t)));
  }
}

void gelu_erf(float* x, int64_t n) {
  const __m256 one = _mm256_set1_ps(1.0f), half = _mm256_set1_ps(0.5f);
  const __m256 sign = _mm256_set1_ps(-0.0f);
  for (int64_t i = 0; i < n; i += 8) {
    const __m256i m = tail_mask(n - i < 8 ? n - i : 8);
    const __m256 v = _mm256_maskload_ps(x + i, m);
    const __m256 a = _mm256_mul_ps(_mm256_andnot_ps(sign, v), _mm256_set1_ps(kInvSqrt2));
    const __m256 t = _mm256_div_ps(one, _mm256_fmadd_ps(_mm256_set1_ps(kErfP), a, one));
    __m256 p = _mm256_fmadd_ps(t, _mm256_set1_ps(kErfA5), _mm256_set1_ps(kErfA4));
    p = _mm256_fmadd_ps(t, p, _mm256_set1_ps(kErfA3));
    p = _mm256_fmadd_ps(t, p, _mm256_set1_ps(kErfA2));
    p = _mm256_fmadd_ps(t, p, _mm256_set1_ps(kErfA1));
    p = _mm256_mul_ps(t, p);
    const __m256 e = exp_ps(_mm256_sub_ps(_mm256_setzero_ps(), _mm256_mul_ps(a, a)));
    const __m256 erf_a = _mm256_fnmadd_ps(p, e, one);
    const __m256 signed_erf = _mm256_or_ps(erf_a, _mm256_and_ps(sign, v)); // erf is odd
    _mm256_maskstore_ps(x + i, m,
                        _mm256_mul_ps(_mm256_mul_ps(half, v), _mm256_add_ps(one, signed_erf)));
  }
}

namespace {

constexpr size_t kQ8Block = 34; // Q8_0: an f16 scale, then 32 int8 quants

float half_at(const uint8_t* p) {
  uint16_t h;
  __builtin_memcpy(&h, p, 2);
  return _cvtsh_ss(h);
}

// 8 values of a K/V row starting at value i (rest of them valid), as floats.
__attribute__((always_inline)) inline __m256 load8(const uint8_t* row, TensorType t, int64_t i,
                                                   int64_t rest) {
  switch (t) {
  case TensorType::kF16: {
    if (rest >= 8)
      return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(row + 2 * i)));
    uint16_t h[8] = {}; // the row's end: no reading past it
    __builtin_memcpy(h, row + 2 * i, static_cast<size_t>(rest) * 2);
    return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(h)));
  }
  case TensorType::kQ8_0: {
    const uint8_t* b = row + (i / 32) * kQ8Block;
    const __m128i q = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(b + 2 + i % 32));
    return _mm256_mul_ps(_mm256_set1_ps(half_at(b)), _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(q)));
  }
  default:
    return _mm256_maskload_ps(reinterpret_cast<const float*>(row) + i,
                              tail_mask(rest < 8 ? rest : 8));
  }
}

// attention_kernel.h's attend_grouped, 8 values a vector.
struct Grouped {
  static void widen(const uint8_t* row, TensorType t, int64_t hd, float* out) {
    if (t == TensorType::kF16 && hd % 32 == 0) { // the common cache: no masks, no type switch
      for (int64_t c = 0; c < hd; c += 32)
        PSHARD_UNROLL
      for (int u = 0; u < 4; ++u)
        _mm256_store_ps(out + c + 8 * u,
                        _mm256_cvtph_ps(_mm_loadu_si128(
                            reinterpret_cast<const __m128i*>(row + 2 * (c + 8 * u)))));
      return;
    }
    for (int64_t c = 0; c < hd; c += 8)
      _mm256_store_ps(out + c, load8(row, t, c, hd - c));
  }

  // Two accumulators a row (even and odd chunks of 8), so 2R FMA chains run at once, then
  // one horizontal sum. A row's arithmetic is the same for every R.
  template <int R>
  static void score_run(const float* q, const float* kb, int64_t hd, float scale, float* out) {
    constexpr int64_t kRow = kAttendMaxHeadDim;
    __m256 acc0[R], acc1[R];
    PSHARD_UNROLL
    for (int r = 0; r < R; ++r)
      acc0[r] = acc1[r] = _mm256_setzero_ps();
    int64_t c = 0;
    for (; c + 16 <= hd; c += 16) {
      const __m256 q0 = _mm256_loadu_ps(q + c), q1 = _mm256_loadu_ps(q + c + 8);
      PSHARD_UNROLL
      for (int r = 0; r < R; ++r) {
        acc0[r] = _mm256_fmadd_ps(q0, _mm256_load_ps(kb + r * kRow + c), acc0[r]);
        acc1[r] = _mm256_fmadd_ps(q1, _mm256_load_ps(kb + r * kRow + c + 8), acc1[r]);
      }
    }
    if (c < hd) { // one or two chunks left, the last maybe partial (q masked, kb zero there)
      const int64_t rest = hd - c;
      const __m256 q0 = _mm256_maskload_ps(q + c, tail_mask(rest >= 8 ? 8 : rest));
      for (int r = 0; r < R; ++r)
        acc0[r] = _mm256_fmadd_ps(q0, _mm256_load_ps(kb + r * kRow + c), acc0[r]);
      if (rest > 8) {
        const __m256 q1 = _mm256_maskload_ps(q + c + 8, tail_mask(rest - 8));
        for (int r = 0; r < R; ++r)
          acc1[r] = _mm256_fmadd_ps(q1, _mm256_load_ps(kb + r * kRow + c + 8), acc1[r]);
      }
    }
    if constexpr (R == 4) {
      reduce4(_mm256_add_ps(acc0[0], acc1[0]), _mm256_add_ps(acc0[1], acc1[1]),
              _mm256_add_ps(acc0[2], acc1[2]), _mm256_add_ps(acc0[3], acc1[3]), scale, out);
    } else {
      for (int r = 0; r < R; ++r)
        out[r] = hsum8(_mm256_add_ps(acc0[r], acc1[r])) * scale;
    }
  }

  // Decode's scores straight from F16 K rows (attention_lockstep.h), without the widened
  // copy: per 16 values a row's K in two registers serves up to four of the group's query
  // heads (eight accumulators of the sixteen registers), whose q come from L1. Through the
  // copy every K vector was stored once and loaded once per head, and the score pass ran at
  // half the FMA rate the V pass reached. Each (row, head) runs score_run's arithmetic —
  // even and odd 8-value chunks in two accumulators, in order, their sum reduced by hsum8's
  // tree (reduce4 keeps it, row by row), then scaled — so its score has the same bits.
  // Heads of whole 16-value chunks; others go through the copy.
  static constexpr int64_t kF16ScoreChunk = 16;

  // Heads g0 .. g0 + G - 1 over `rows` F16 K rows from k (their scores at index `at` on).
  template <int G>
  static void score_f16_rows(const AttendHead& a, const uint8_t* k, int64_t rows, int64_t at,
                             int64_t g0) {
    const int64_t hd = a.head_dim, stride = a.score_stride();
    for (int64_t r = 0; r < rows; ++r) {
      const uint8_t* row = k + static_cast<size_t>(r) * a.k_row_bytes;
      __m256 acc0[G], acc1[G];
      PSHARD_UNROLL
      for (int g = 0; g < G; ++g)
        acc0[g] = acc1[g] = _mm256_setzero_ps();
      for (int64_t c = 0; c < hd; c += 16) {
        const __m256 k0 = f16_at(row + 2 * c), k1 = f16_at(row + 2 * c + 16);
        PSHARD_UNROLL
        for (int g = 0; g < G; ++g) {
          const float* q = a.q + (g0 + g) * hd + c;
          acc0[g] = _mm256_fmadd_ps(_mm256_loadu_ps(q), k0, acc0[g]);
          acc1[g] = _mm256_fmadd_ps(_mm256_loadu_ps(q + 8), k1, acc1[g]);
        }
      }
      float* out = a.scores + g0 * stride + at + r;
      if constexpr (G == 4) {
        alignas(16) float s[4];
        reduce4(_mm256_add_ps(acc0[0], acc1[0]), _mm256_add_ps(acc0[1], acc1[1]),
                _mm256_add_ps(acc0[2], acc1[2]), _mm256_add_ps(acc0[3], acc1[3]), a.scale, s);
        PSHARD_UNROLL
        for (int g = 0; g < 4; ++g)
          out[g * stride] = s[g];
      } else {
        PSHARD_UNROLL
        for (int g = 0; g < G; ++g)
          out[g * stride] = hsum8(_mm256_add_ps(acc0[g], acc1[g])) * a.scale;
      }
    }
  }
  static __m256 f16_at(const uint8_t* p) {
    return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
  }

  // Four rows' sums at once, each in hsum8's own tree (lanes i and i + 4, then i and i + 2,
  // then 0 and 1), so a row's score is the same in a run of four as alone; four separate
  // reductions were half of the score pass.
  static void reduce4(__m256 a0, __m256 a1, __m256 a2, __m256 a3, float scale, float* out) {
    // 8 -> 4: row 0's four sums in the low 128 bits, row 1's in the high (a2, a3 alike).
    const __m256 s01 =
        _mm256_add_ps(_mm256_permute2f128_ps(a0, a1, 0x20), _mm256_permute2f128_ps(a0, a1, 0x31));
    const __m256 s23 =
        _mm256_add_ps(_mm256_permute2f128_ps(a2, a3, 0x20), _mm256_permute2f128_ps(a2, a3, 0x31));
    // 4 -> 2: the low lane holds rows 0 and 2, the high rows 1 and 3, two sums each.
    const __m256 t =
        _mm256_add_ps(_mm256_shuffle_ps(s01, s23, 0x44), _mm256_shuffle_ps(s01, s23, 0xee));
    // 2 -> 1: floats 0, 1, 4, 5 are rows 0, 2, 1, 3.
    const __m256 w = _mm256_mul_ps(_mm256_hadd_ps(t, t), _mm256_set1_ps(scale));
    const __m128 lo = _mm256_castps256_ps128(w), hi = _mm256_extractf128_ps(w, 1);
    _mm_storeu_ps(out, _mm_unpacklo_ps(lo, hi));
  }

  // 16 values at a time: each V row widened once for the G heads, whose 2G accumulators
  // stay in registers over the block's rows.
  template <int G>
  static void add_values(const AttendHead& a, const uint8_t* vr, int64_t rows, int64_t at,
                         int64_t g0) {
    if (a.v_type == TensorType::kF16 && a.value_dim() % 16 == 0)
      return add_f16_values<G>(a, vr, rows, at, g0);
    const int64_t vd = a.value_dim(), stride = a.score_stride();
    const float* w = a.scores + g0 * stride + at;
    for (int64_t c = 0; c < vd; c += 16) {
      const int64_t rest0 = vd - c, rest1 = vd - c - 8;
      const __m256i m0 = tail_mask(rest0 >= 8 ? 8 : rest0);
      const __m256i m1 = tail_mask(rest1 >= 8 ? 8 : rest1 > 0 ? rest1 : 0);
      float* out = a.out + g0 * vd + c;
      __m256 acc[G][2];
      PSHARD_UNROLL
      for (int g = 0; g < G; ++g) {
        acc[g][0] = _mm256_maskload_ps(out + g * vd, m0);
        acc[g][1] = _mm256_maskload_ps(out + g * vd + 8, m1);
      }
      for (int64_t j = 0; j < rows; ++j) {
        const uint8_t* v = vr + j * a.v_row_bytes;
        const __m256 v0 = load8(v, a.v_type, c, rest0);
        const __m256 v1 = rest1 > 0 ? load8(v, a.v_type, c + 8, rest1) : _mm256_setzero_ps();
        weigh_row<G>(acc, w + j, stride, v0, v1);
      }
      PSHARD_UNROLL
      for (int g = 0; g < G; ++g) {
        _mm256_maskstore_ps(out + g * vd, m0, acc[g][0]);
        _mm256_maskstore_ps(out + g * vd + 8, m1, acc[g][1]);
      }
    }
  }

  // One V row's 16 values (v0, v1) into the G heads' accumulators, each head's weight at
  // w + g * stride.
  template <int G>
  static void weigh_row(__m256 (&acc)[G][2], const float* w, int64_t stride, __m256 v0, __m256 v1) {
    PSHARD_UNROLL
    for (int g = 0; g < G; ++g) {
      const __m256 wj = _mm256_broadcast_ss(w + g * stride);
      acc[g][0] = _mm256_fmadd_ps(wj, v0, acc[g][0]);
      acc[g][1] = _mm256_fmadd_ps(wj, v1, acc[g][1]);
    }
  }

  // add_values for the common cache (F16 rows of whole 16-value chunks): no masks, and no
  // type switch a row — the loop was a third bookkeeping. The same loads and FMAs in the
  // same order, so the same bits.
  template <int G>
  static void add_f16_values(const AttendHead& a, const uint8_t* vr, int64_t rows, int64_t at,
                             int64_t g0) {
    const int64_t vd = a.value_dim(), stride = a.score_stride();
    const float* w = a.scores + g0 * stride + at;
    for (int64_t c = 0; c < vd; c += 16) {
      float* out = a.out + g0 * vd + c;
      __m256 acc[G][2];
      PSHARD_UNROLL
      for (int g = 0; g < G; ++g) {
        acc[g][0] = _mm256_loadu_ps(out + g * vd);
        acc[g][1] = _mm256_loadu_ps(out + g * vd + 8);
      }
      const uint8_t* v = vr + 2 * c;
      for (int64_t j = 0; j < rows; ++j, v += a.v_row_bytes) {
        const __m256 v0 = f16_at(v), v1 = f16_at(v + 16);
        weigh_row<G>(acc, w + j, stride, v0, v1);
      }
      PSHARD_UNROLL
      for (int g = 0; g < G; ++g) {
        _mm256_storeu_ps(out + g * vd, acc[g][0]);
        _mm256_storeu_ps(out + g * vd + 8, acc[g][1]);
      }
    }
  }
};

} // namespace

void attend(const AttendHead& a) {
  if (a.head_dim > kAttendMaxHeadDim)
    return scalar::attend(a);
  attend_grouped<Grouped>(a, softmax);
}

void attend_tile(const AttendHead* heads, int64_t n) {
  if (heads[0].head_dim > kAttendMaxHeadDim)
    return scalar::attend_tile(heads, n);
  attend_tiled<Grouped>(heads, n, softmax);
}

void attend_heads(const AttendHead* heads, int64_t n) {
  if (heads[0].head_dim > kAttendMaxHeadDim)
    return scalar::attend_heads(heads, n);
  attend_lockstep<Grouped>(heads, n, softmax);
}

// The tiled attention's key-block step, 8 queries to a vector (as the AVX-512 file's with
// 16): their rows transposed once, so a key's 8 scores are one FMA per value of the key;
// lane-wise softmax updates; the weighted V sum query by query in registers of 8 values.
// A query's arithmetic is the same in any lane and beside any other queries.
void attend_block(const AttendBlock& b) {
  const int64_t hd = b.head_dim;
  if (hd > 256) { // the transposed tile lives on the stack
    scalar::attend_block(b);
    return;
  }
  alignas(32) float qt[256 * 8];
  alignas(32) float p[kAttendBlockKeys * 8];
  const __m256 scale = _mm256_set1_ps(b.scale);
  const __m256 minus_inf = _mm256_set1_ps(-__builtin_inff());
  for (int64_t i0 = 0; i0 < b.nq; i0 += 8) {
    const int64_t n = b.nq - i0 < 8 ? b.nq - i0 : 8; // no std::min here (kernel_set.h)
    const __m256i lanes = tail_mask(n);
    for (int64_t d = 0; d < hd; ++d)
      for (int64_t l = 0; l < 8; ++l)
        qt[d * 8 + l] = l < n ? b.q[(i0 + l) * b.q_stride + d] : 0.0f;
    __m256 block_max = minus_inf;
    int64_t j = 0;
    for (; j + 4 <= b.nb; j += 4) { // four keys share each column of the tile
      const float* kj = b.k + j * b.kv_stride;
      __m256 s0 = _mm256_setzero_ps(), s1 = s0, s2 = s0, s3 = s0;
      for (int64_t d = 0; d < hd; ++d) {
        const __m256 col = _mm256_load_ps(qt + d * 8);
        s0 = _mm256_fmadd_ps(_mm256_broadcast_ss(kj + d), col, s0);
        s1 = _mm256_fmadd_ps(_mm256_broadcast_ss(kj + b.kv_stride + d), col, s1);
        s2 = _mm256_fmadd_ps(_mm256_broadcast_ss(kj + 2 * b.kv_stride + d), col, s2);
        s3 = _mm256_fmadd_ps(_mm256_broadcast_ss(kj + 3 * b.kv_stride + d), col, s3);
      }
      const __m256 sc[4] = {s0, s1, s2, s3};
      for (int u = 0; u < 4; ++u) {
        const __m256 su = _mm256_mul_ps(sc[u], scale);
        _mm256_store_ps(p + (j + u) * 8, su);
        block_max = _mm256_max_ps(block_max, su);
      }
    }
    for (; j < b.nb; ++j) {
      const float* kj = b.k + j * b.kv_stride;
      __m256 s = _mm256_setzero_ps();
      for (int64_t d = 0; d < hd; ++d)
        s = _mm256_fmadd_ps(_mm256_broadcast_ss(kj + d), _mm256_load_ps(qt + d * 8), s);
      s = _mm256_mul_ps(s, scale);
      _mm256_store_ps(p + j * 8, s);
      block_max = _mm256_max_ps(block_max, s);
    }
    // Lanes past n read -inf, as the AVX-512 file's masked load gives them.
    const __m256 old_max = _mm256_blendv_ps(minus_inf, _mm256_maskload_ps(b.max + i0, lanes),
                                            _mm256_castsi256_ps(lanes));
    const __m256 m = _mm256_max_ps(old_max, block_max);
    const __m256 rescale = exp_ps(_mm256_sub_ps(old_max, m)); // ~0 on the first block
    __m256 sum = _mm256_mul_ps(_mm256_maskload_ps(b.sum + i0, lanes), rescale);
    for (int64_t jj = 0; jj < b.nb; ++jj) {
      const __m256 e = exp_ps(_mm256_sub_ps(_mm256_load_ps(p + jj * 8), m));
      _mm256_store_ps(p + jj * 8, e);
      sum = _mm256_add_ps(sum, e);
    }
    _mm256_maskstore_ps(b.max + i0, lanes, m);
    _mm256_maskstore_ps(b.sum + i0, lanes, sum);
    alignas(32) float r[8];
    _mm256_store_ps(r, rescale);
    // The 8 queries' accumulators, 8 values of the head at a time, in registers while the
    // block's V rows stream by (a query's sum still runs over the keys in order).
    for (int64_t c = 0; c < hd; c += 8) {
      const __m256i cm = tail_mask(hd - c >= 8 ? 8 : hd - c);
      __m256 acc[8];
      for (int l = 0; l < 8; ++l)
        acc[l] = l < n ? _mm256_mul_ps(_mm256_maskload_ps(b.acc + (i0 + l) * hd + c, cm),
                                       _mm256_set1_ps(r[l]))
                       : _mm256_setzero_ps();
      for (int64_t jj = 0; jj < b.nb; ++jj) {
        const __m256 vj = _mm256_maskload_ps(b.v + jj * b.kv_stride + c, cm);
        const float* pj = p + jj * 8;
        for (int l = 0; l < 8; ++l)
          acc[l] = _mm256_fmadd_ps(_mm256_broadcast_ss(pj + l), vj, acc[l]);
      }
      for (int l = 0; l < 8; ++l)
        if (l < n)
          _mm256_maskstore_ps(b.acc + (i0 + l) * hd + c, cm, acc[l]);
    }
  }
}

} // namespace pshard::kernels::avx2
#endif
