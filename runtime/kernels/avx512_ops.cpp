// AVX-512 element-wise and attention kernels: sum of squares (RMSNorm), softmax,
// SiLU-gated product, one-head attention, prefill's tiles of it and the vision tower's
// key-block step. exp is a vector polynomial accurate to about 1 ulp (libm's scalar expf
// would dominate softmax and SiLU).
#include "runtime/kernels/attention_lockstep.h"
#include "runtime/kernels/attention_tile.h"
#include "runtime/kernels/ops.h"
#include "runtime/kernels/scalar_ops.h"
#include "runtime/kernels/simd_exports.h"
#include "runtime/kernels/unroll.h"

#if defined(__AVX512F__)
#include <immintrin.h>

namespace pshard::kernels::avx512 {
namespace {

__mmask16 tail_mask(int64_t rest) { return static_cast<__mmask16>((1u << rest) - 1); }

// e^x: x = n ln2 + r with |r| <= ln2 / 2, e^r by its degree-7 Taylor polynomial
// (truncation error below 1e-9), times 2^n by vscalefps, which also gives inf and
// 0 beyond float's range. The clamp keeps -inf from turning into NaN (inf - inf);
// its operand order lets a NaN input through.
__m512 exp_ps(__m512 x) {
  x = _mm512_max_ps(_mm512_set1_ps(-104.0f), _mm512_min_ps(_mm512_set1_ps(89.0f), x));
  const __m512 n = _mm512_roundscale_ps(_mm512_mul_ps(x, _mm512_set1_ps(1.44269504088896341f)),
                                        _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m512 r = _mm512_fnmadd_ps(n, _mm512_set1_ps(0.693145751953125f), x);
  r = _mm512_fnmadd_ps(n, _mm512_set1_ps(1.428606765330187045e-06f), r);
  __m512 p = _mm512_set1_ps(1.0f / 5040);
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f / 720));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f / 120));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f / 24));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f / 6));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(0.5f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f));
  return _mm512_scalef_ps(p, n);
}

float dot(const float* a, const float* b, int64_t n) {
  __m512 acc = _mm512_setzero_ps();
  int64_t i = 0;
  for (; i + 16 <= n; i += 16)
    acc = _mm512_fmadd_ps(_mm512_loadu_ps(a + i), _mm512_loadu_ps(b + i), acc);
  if (i < n) {
    const __mmask16 m = tail_mask(n - i);
    acc = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(m, a + i), _mm512_maskz_loadu_ps(m, b + i), acc);
  }
  return _mm512_reduce_add_ps(acc);
}

} // namespace

float sum_squares(const float* x, int64_t n) { return dot(x, x, n); }

void softmax(float* x, int64_t n) {
  if (n <= 0)
    return;
  __m512 vmax = _mm512_set1_ps(-__builtin_inff());
  int64_t i = 0;
  for (; i + 16 <= n; i += 16)
    vmax = _mm512_max_ps(vmax, _mm512_loadu_ps(x + i));
  if (i < n)
    vmax = _mm512_mask_max_ps(vmax, tail_mask(n - i), vmax,
                              _mm512_maskz_loadu_ps(tail_mask(n - i), x + i));
  const float max = _mm512_reduce_max_ps(vmax);
  if (max == -__builtin_inff()) { // every entry masked: zeros are safer than NaN
    for (int64_t j = 0; j < n; ++j)
      x[j] = 0.0f;
    return;
  }
  const __m512 m = _mm512_set1_ps(max);
  __m512 sum = _mm512_setzero_ps();
  for (i = 0; i + 16 <= n; i += 16) {
    const __m512 e = exp_ps(_mm512_sub_ps(_mm512_loadu_ps(x + i), m));
    _mm512_storeu_ps(x + i, e);
    sum = _mm512_add_ps(sum, e);
  }
  if (i < n) {
    const __mmask16 t = tail_mask(n - i);
    const __m512 e = exp_ps(_mm512_sub_ps(_mm512_maskz_loadu_ps(t, x + i), m));
    _mm512_mask_storeu_ps(x + i, t, e);
    sum = _mm512_add_ps(sum, _mm512_maskz_mov_ps(t, e));
  }
  const __m512 inv = _mm512_set1_ps(1.0f / _mm512_reduce_add_ps(sum));
  for (i = 0; i + 16 <= n; i += 16)
    _mm512_storeu_ps(x + i, _mm512_mul_ps(_mm512_loadu_ps(x + i), inv));
  if (i < n)
    _mm512_mask_storeu_ps(x + i, tail_mask(n - i),
                          _mm512_mul_ps(_mm512_maskz_loadu_ps(tail_mask(n - i), x + i), inv));
}

void silu_mul(const float* gate, const float* up, float* out, int64_t n) {
  const __m512 one = _mm512_set1_ps(1.0f);
  for (int64_t i = 0; i < n; i += 16) {
    const __mmask16 t = n - i >= 16 ? static_cast<__mmask16>(0xffff) : tail_mask(n - i);
    const __m512 g = _mm512_maskz_loadu_ps(t, gate + i);
    const __m512 e = exp_ps(_mm512_sub_ps(_mm512_setzero_ps(), g));
    const __m512 s = _mm512_div_ps(g, _mm512_add_ps(one, e));
    _mm512_mask_storeu_ps(out + i, t, _mm512_mul_ps(s, _mm512_maskz_loadu_ps(t, up + i)));
  }
}

void gelu_mul(const float* gate, const float* up, float* out, int64_t n) {
  const __m512 one = _mm512_set1_ps(1.0f), c1 = _mm512_set1_ps(kGeluC1),
               c3 = _mm512_set1_ps(kGeluC3);
  for (int64_t i = 0; i < n; i += 16) {
    const __mmask16 t = n - i >= 16 ? static_cast<__mmask16>(0xffff) : tail_mask(n - i);
    const __m512 g = _mm512_maskz_loadu_ps(t, gate + i);
    const __m512 z = _mm512_mul_ps(g, _mm512_fmadd_ps(c3, _mm512_mul_ps(g, g), c1));
    const __m512 e = exp_ps(_mm512_sub_ps(_mm512_setzero_ps(), z));
    const __m512 s = _mm512_div_ps(g, _mm512_add_ps(one, e));
    _mm512_mask_storeu_ps(out + i, t, _mm512_mul_ps(s, _mm512_maskz_loadu_ps(t, up + i)));
  }
}

void gelu_erf(float* x, int64_t n) {
  const __m512 one = _mm512_set1_ps(1.0f), half = _mm512_set1_ps(0.5f);
  const __m512 sign = _mm512_set1_ps(-0.0f);
  for (int64_t i = 0; i < n; i += 16) {
    const __mmask16 m = n - i >= 16 ? static_cast<__mmask16>(0xffff) : tail_mask(n - i);
    const __m512 v = _mm512_maskz_loadu_ps(m, x + i);
    const __m512 a = _mm512_mul_ps(_mm512_andnot_ps(sign, v), _mm512_set1_ps(kInvSqrt2));
    const __m512 t = _mm512_div_ps(one, _mm512_fmadd_ps(_mm512_set1_ps(kErfP), a, one));
    __m512 p = _mm512_fmadd_ps(t, _mm512_set1_ps(kErfA5), _mm512_set1_ps(kErfA4));
    p = _mm512_fmadd_ps(t, p, _mm512_set1_ps(kErfA3));
    p = _mm512_fmadd_ps(t, p, _mm512_set1_ps(kErfA2));
    p = _mm512_fmadd_ps(t, p, _mm512_set1_ps(kErfA1));
    p = _mm512_mul_ps(t, p);
    const __m512 e = exp_ps(_mm512_sub_ps(_mm512_setzero_ps(), _mm512_mul_ps(a, a)));
    const __m512 erf_a = _mm512_fnmadd_ps(p, e, one);
    const __m512 signed_erf = _mm512_or_ps(erf_a, _mm512_and_ps(sign, v)); // erf is odd
    _mm512_mask_storeu_ps(x + i, m,
                          _mm512_mul_ps(_mm512_mul_ps(half, v), _mm512_add_ps(one, signed_erf)));
  }
}

namespace {

// Q8_0 block: an f16 scale, then 32 int8 quants.
constexpr size_t kQ8Block = 34;

float half_at(const uint8_t* p) {
  uint16_t h;
  __builtin_memcpy(&h, p, 2);
  return _cvtsh_ss(h);
}

// 16 values of a K/V row starting at value i, as floats (Q8_0: i a multiple of 16).
__attribute__((always_inline)) inline __m512 load16(const uint8_t* row, TensorType t, int64_t i,
                                                    __mmask16 m) {
  switch (t) {
  case TensorType::kF16:
    return _mm512_cvtph_ps(_mm256_maskz_loadu_epi16(m, row + 2 * i));
  case TensorType::kQ8_0: {
    const uint8_t* b = row + (i / 32) * kQ8Block;
    const __m128i q = _mm_loadu_si128(reinterpret_cast<const __m128i*>(b + 2 + i % 32));
    return _mm512_mul_ps(_mm512_set1_ps(half_at(b)), _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(q)));
  }
  default:
    return _mm512_maskz_loadu_ps(m, reinterpret_cast<const float*>(row) + i);
  }
}

// attention_kernel.h's attend_grouped, 16 values a vector.
struct Grouped {
  static void widen(const uint8_t* row, TensorType t, int64_t hd, float* out) {
    if (t == TensorType::kF16 && hd % 64 == 0) { // the common cache: no masks, no type switch
      for (int64_t c = 0; c < hd; c += 64)
        PSHARD_UNROLL
      for (int u = 0; u < 4; ++u)
        _mm512_store_ps(out + c + 16 * u,
                        _mm512_cvtph_ps(_mm256_loadu_si256(
                            reinterpret_cast<const __m256i*>(row + 2 * (c + 16 * u)))));
      return;
    }
    for (int64_t c = 0; c < hd; c += 16) {
      const __mmask16 m = hd - c >= 16 ? static_cast<__mmask16>(0xffff) : tail_mask(hd - c);
      _mm512_store_ps(out + c, load16(row, t, c, m));
    }
  }

  // Two accumulators a row (even and odd chunks of 16), so 2R FMA chains run at once, then
  // one horizontal sum. A row's arithmetic is the same for every R.
  template <int R>
  static void score_run(const float* q, const float* kb, int64_t hd, float scale, float* out) {
    constexpr int64_t kRow = kAttendMaxHeadDim;
    __m512 acc0[R], acc1[R];
    PSHARD_UNROLL
    for (int r = 0; r < R; ++r)
      acc0[r] = acc1[r] = _mm512_setzero_ps();
    int64_t c = 0;
    for (; c + 32 <= hd; c += 32) {
      const __m512 q0 = _mm512_loadu_ps(q + c), q1 = _mm512_loadu_ps(q + c + 16);
      PSHARD_UNROLL
      for (int r = 0; r < R; ++r) {
        acc0[r] = _mm512_fmadd_ps(q0, _mm512_load_ps(kb + r * kRow + c), acc0[r]);
        acc1[r] = _mm512_fmadd_ps(q1, _mm512_load_ps(kb + r * kRow + c + 16), acc1[r]);
      }
    }
    if (c < hd) { // one or two chunks left, the last maybe partial (q masked, kb zero there)
      const int64_t rest = hd - c;
      const __m512 q0 = _mm512_maskz_loadu_ps(
          rest >= 16 ? static_cast<__mmask16>(0xffff) : tail_mask(rest), q + c);
      for (int r = 0; r < R; ++r)
        acc0[r] = _mm512_fmadd_ps(q0, _mm512_load_ps(kb + r * kRow + c), acc0[r]);
      if (rest > 16) {
        const __m512 q1 = _mm512_maskz_loadu_ps(tail_mask(rest - 16), q + c + 16);
        for (int r = 0; r < R; ++r)
          acc1[r] = _mm512_fmadd_ps(q1, _mm512_load_ps(kb + r * kRow + c + 16), acc1[r]);
      }
    }
    if constexpr (R == 4) {
      reduce4(_mm512_add_ps(acc0[0], acc1[0]), _mm512_add_ps(acc0[1], acc1[1]),
              _mm512_add_ps(acc0[2], acc1[2]), _mm512_add_ps(acc0[3], acc1[3]), scale, out);
    } else {
      for (int r = 0; r < R; ++r)
        out[r] = _mm512_reduce_add_ps(_mm512_add_ps(acc0[r], acc1[r])) * scale;
    }
  }

  // Four rows' sums at once, each in _mm512_reduce_add_ps's own tree (lanes i and i + 8, then
  // i and i + 4, i and i + 2, i and i + 1), so a row's score is the same in a run of four as
  // alone; four separate reductions were half of the score pass.
  static void reduce4(__m512 a0, __m512 a1, __m512 a2, __m512 a3, float scale, float* out) {
    _mm_storeu_ps(out, reduce4_lanes(a0, a1, a2, a3, scale));
  }
  static __m128 reduce4_lanes(__m512 a0, __m512 a1, __m512 a2, __m512 a3, float scale) {
    // 16 -> 8: row 0's halves summed in the low 256 bits, row 1's in the high (a2, a3 alike).
    const __m512 s01 =
        _mm512_add_ps(_mm512_shuffle_f32x4(a0, a1, 0x44), _mm512_shuffle_f32x4(a0, a1, 0xee));
    const __m512 s23 =
        _mm512_add_ps(_mm512_shuffle_f32x4(a2, a3, 0x44), _mm512_shuffle_f32x4(a2, a3, 0xee));
    // 8 -> 4: row r's four sums in 128-bit lane r.
    const __m512 t =
        _mm512_add_ps(_mm512_shuffle_f32x4(s01, s23, 0x88), _mm512_shuffle_f32x4(s01, s23, 0xdd));
    // 4 -> 2 -> 1 within each lane: the row's sum in its lane's first float.
    const __m512 u = _mm512_add_ps(t, _mm512_permute_ps(t, 0x4e));
    const __m512 w =
        _mm512_mul_ps(_mm512_add_ps(u, _mm512_permute_ps(u, 0xb1)), _mm512_set1_ps(scale));
    return _mm512_castps512_ps128(_mm512_maskz_compress_ps(0x1111, w));
  }

  // Decode's scores straight from F16 K rows (attention_lockstep.h), without the widened
  // copy: per 32 values, two rows' K in four registers serve up to four of the group's
  // query heads, whose q come from L1. Through the copy every K vector was loaded once per
  // head, and the score pass was bound by loads. Each (row, head) runs score_run's
  // arithmetic — even and odd 16-value chunks in two accumulators, in order, their sum
  // reduced by the same tree (reduce4's or _mm512_reduce_add_ps's), then scaled — so its
  // score has the same bits. Heads of whole 32-value chunks; others go through the copy.
  static constexpr int64_t kF16ScoreChunk = 32;

  // Heads g0 .. g0 + G - 1 over `rows` F16 K rows from k (their scores at index `at` on),
  // two rows at a time.
  template <int G>
  static void score_f16_rows(const AttendHead& a, const uint8_t* k, int64_t rows, int64_t at,
                             int64_t g0) {
    int64_t r = 0;
    for (; r + 2 <= rows; r += 2)
      score_f16_block<G, 2>(a, k + static_cast<size_t>(r) * a.k_row_bytes, at + r, g0);
    if (r < rows)
      score_f16_block<G, 1>(a, k + static_cast<size_t>(r) * a.k_row_bytes, at + r, g0);
  }

  // NR rows x G heads: 4 * G accumulators (with NR = 2, G = 4: 16 of the 32 registers), the
  // rows' K for 32 values in 2 * NR, the head's q in 2. Everything indexed by constants, so
  // the sums stay in registers; they are reduced four at a time, then one by one.
  template <int G, int NR>
  static void score_f16_block(const AttendHead& a, const uint8_t* k, int64_t at, int64_t g0) {
    const int64_t hd = a.head_dim, stride = a.score_stride();
    __m512 acc0[NR][G], acc1[NR][G];
    PSHARD_UNROLL
    for (int r = 0; r < NR; ++r)
      PSHARD_UNROLL
    for (int g = 0; g < G; ++g)
      acc0[r][g] = acc1[r][g] = _mm512_setzero_ps();
    for (int64_t c = 0; c < hd; c += 32) {
      __m512 ke[NR], ko[NR];
      PSHARD_UNROLL
      for (int r = 0; r < NR; ++r) {
        const uint8_t* row = k + static_cast<size_t>(r) * a.k_row_bytes + 2 * c;
        ke[r] = f16_at(row);
        ko[r] = f16_at(row + 32);
      }
      PSHARD_UNROLL
      for (int g = 0; g < G; ++g) {
        const float* q = a.q + (g0 + g) * hd + c;
        const __m512 q0 = _mm512_loadu_ps(q), q1 = _mm512_loadu_ps(q + 16);
        PSHARD_UNROLL
        for (int r = 0; r < NR; ++r) {
          acc0[r][g] = _mm512_fmadd_ps(q0, ke[r], acc0[r][g]);
          acc1[r][g] = _mm512_fmadd_ps(q1, ko[r], acc1[r][g]);
        }
      }
    }
    // Sum i is row i / G's, head i % G's.
    constexpr int kSums = NR * G;
    const auto sum = [&](int i) { return _mm512_add_ps(acc0[i / G][i % G], acc1[i / G][i % G]); };
    const auto out = [&](int i) { return a.scores + (g0 + i % G) * stride + at + i / G; };
    PSHARD_UNROLL
    for (int i = 0; i + 4 <= kSums; i += 4) {
      const __m128 v = reduce4_lanes(sum(i), sum(i + 1), sum(i + 2), sum(i + 3), a.scale);
      _mm_store_ss(out(i), v);
      _mm_store_ss(out(i + 1), _mm_shuffle_ps(v, v, 1));
      _mm_store_ss(out(i + 2), _mm_shuffle_ps(v, v, 2));
      _mm_store_ss(out(i + 3), _mm_shuffle_ps(v, v, 3));
    }
    PSHARD_UNROLL
    for (int i = kSums / 4 * 4; i < kSums; ++i)
      *out(i) = _mm512_reduce_add_ps(sum(i)) * a.scale;
  }
  static __m512 f16_at(const uint8_t* p) {
    return _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
  }

  // 64 values at a time: each V row widened once for the G heads, whose 4G accumulators
  // stay in registers over the block's rows.
  template <int G>
  static void add_values(const AttendHead& a, const uint8_t* vr, int64_t rows, int64_t at,
                         int64_t g0) {
    const int64_t vd = a.value_dim(), stride = a.score_stride();
    const float* w = a.scores + g0 * stride + at;
    for (int64_t c = 0; c < vd; c += 64) {
      __mmask16 m[4];
      for (int u = 0; u < 4; ++u) {
        const int64_t rest = vd - c - 16 * u;
        m[u] = rest >= 16 ? static_cast<__mmask16>(0xffff) : rest > 0 ? tail_mask(rest) : 0;
      }
      float* out = a.out + g0 * vd + c;
      __m512 acc[G][4];
      PSHARD_UNROLL
      for (int g = 0; g < G; ++g)
        PSHARD_UNROLL
      for (int u = 0; u < 4; ++u)
        acc[g][u] = _mm512_maskz_loadu_ps(m[u], out + g * vd + 16 * u);
      for (int64_t j = 0; j < rows; ++j) {
        const uint8_t* v = vr + j * a.v_row_bytes;
        __m512 vv[4]; // zero past the values (a Q8_0 row is not read past its end)
        PSHARD_UNROLL
        for (int u = 0; u < 4; ++u)
          vv[u] = m[u] ? load16(v, a.v_type, c + 16 * u, m[u]) : _mm512_setzero_ps();
        PSHARD_UNROLL
        for (int g = 0; g < G; ++g) {
          const __m512 wj = _mm512_set1_ps(w[g * stride + j]);
          PSHARD_UNROLL
          for (int u = 0; u < 4; ++u)
            acc[g][u] = _mm512_fmadd_ps(wj, vv[u], acc[g][u]);
        }
      }
      PSHARD_UNROLL
      for (int g = 0; g < G; ++g)
        PSHARD_UNROLL
      for (int u = 0; u < 4; ++u)
        _mm512_mask_storeu_ps(out + g * vd + 16 * u, m[u], acc[g][u]);
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

// The tiled attention's key-block step, 16 queries to a vector: their rows transposed
// once (a column of the head's values per register), so a key's 16 scores are one FMA
// per value of the key, with no horizontal sums; the softmax updates are lane-wise; the
// weighted V sum runs query by query over the head in registers of 16 values. A query's
// arithmetic is the same in any lane and beside any other queries.
void attend_block(const AttendBlock& b) {
  const int64_t hd = b.head_dim;
  if (hd > 256) { // the transposed tile lives on the stack
    scalar::attend_block(b);
    return;
  }
  alignas(64) float qt[256 * 16];
  alignas(64) float p[kAttendBlockKeys * 16];
  const __m512 scale = _mm512_set1_ps(b.scale);
  for (int64_t i0 = 0; i0 < b.nq; i0 += 16) {
    const int64_t n = b.nq - i0 < 16 ? b.nq - i0 : 16; // no std::min here (kernel_set.h)
    const __mmask16 lanes = tail_mask(n);
    for (int64_t d = 0; d < hd; ++d)
      for (int64_t l = 0; l < 16; ++l)
        qt[d * 16 + l] = l < n ? b.q[(i0 + l) * b.q_stride + d] : 0.0f;
    __m512 block_max = _mm512_set1_ps(-__builtin_inff());
    int64_t j = 0;
    for (; j + 4 <= b.nb; j += 4) { // four keys share each column of the tile
      const float* kj = b.k + j * b.kv_stride;
      __m512 s0 = _mm512_setzero_ps(), s1 = s0, s2 = s0, s3 = s0;
      for (int64_t d = 0; d < hd; ++d) {
        const __m512 col = _mm512_load_ps(qt + d * 16);
        s0 = _mm512_fmadd_ps(_mm512_set1_ps(kj[d]), col, s0);
        s1 = _mm512_fmadd_ps(_mm512_set1_ps(kj[b.kv_stride + d]), col, s1);
        s2 = _mm512_fmadd_ps(_mm512_set1_ps(kj[2 * b.kv_stride + d]), col, s2);
        s3 = _mm512_fmadd_ps(_mm512_set1_ps(kj[3 * b.kv_stride + d]), col, s3);
      }
      const __m512 sc[4] = {s0, s1, s2, s3};
      for (int u = 0; u < 4; ++u) {
        const __m512 su = _mm512_mul_ps(sc[u], scale);
        _mm512_store_ps(p + (j + u) * 16, su);
        block_max = _mm512_max_ps(block_max, su);
      }
    }
    for (; j < b.nb; ++j) {
      const float* kj = b.k + j * b.kv_stride;
      __m512 s = _mm512_setzero_ps();
      for (int64_t d = 0; d < hd; ++d)
        s = _mm512_fmadd_ps(_mm512_set1_ps(kj[d]), _mm512_load_ps(qt + d * 16), s);
      s = _mm512_mul_ps(s, scale);
      _mm512_store_ps(p + j * 16, s);
      block_max = _mm512_max_ps(block_max, s);
    }
    const __m512 old_max =
        _mm512_mask_loadu_ps(_mm512_set1_ps(-__builtin_inff()), lanes, b.max + i0);
    const __m512 m = _mm512_max_ps(old_max, block_max);
    const __m512 rescale = exp_ps(_mm512_sub_ps(old_max, m)); // ~0 on the first block
    __m512 sum = _mm512_mul_ps(_mm512_maskz_loadu_ps(lanes, b.sum + i0), rescale);
    for (int64_t j = 0; j < b.nb; ++j) {
      const __m512 e = exp_ps(_mm512_sub_ps(_mm512_load_ps(p + j * 16), m));
      _mm512_store_ps(p + j * 16, e);
      sum = _mm512_add_ps(sum, e);
    }
    _mm512_mask_storeu_ps(b.max + i0, lanes, m);
    _mm512_mask_storeu_ps(b.sum + i0, lanes, sum);
    alignas(64) float r[16];
    _mm512_store_ps(r, rescale);
    // The 16 queries' accumulators, 16 values of the head at a time, in registers while
    // the block's V rows stream by (a query's sum still runs over the keys in order).
    for (int64_t c = 0; c < hd; c += 16) {
      const __mmask16 cm = hd - c >= 16 ? static_cast<__mmask16>(0xffff) : tail_mask(hd - c);
      __m512 acc[16];
      for (int l = 0; l < 16; ++l)
        acc[l] = l < n ? _mm512_mul_ps(_mm512_maskz_loadu_ps(cm, b.acc + (i0 + l) * hd + c),
                                       _mm512_set1_ps(r[l]))
                       : _mm512_setzero_ps();
      for (int64_t jj = 0; jj < b.nb; ++jj) {
        const __m512 vj = _mm512_maskz_loadu_ps(cm, b.v + jj * b.kv_stride + c);
        const float* pj = p + jj * 16;
        for (int l = 0; l < 16; ++l)
          acc[l] = _mm512_fmadd_ps(_mm512_set1_ps(pj[l]), vj, acc[l]);
      }
      for (int l = 0; l < 16; ++l)
        if (l < n)
          _mm512_mask_storeu_ps(b.acc + (i0 + l) * hd + c, cm, acc[l]);
    }
  }
}

} // namespace pshard::kernels::avx512
#endif
