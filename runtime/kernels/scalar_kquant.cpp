// The portable K-quant kernels (Q2_K..Q6_K, IQ4_XS), also the reference the SIMD
// paths are tested against, and the q8k activation packing (act_quant.h).
//
// Every super-block is first read into one integer form: a code per value, a
// scale and a "min" per 16 values, and two float super-scales, such that
//   dot(block, x) = d_x * (d * sum_s sc[s] * sum_{i in s} code[i] * q[i]
//                          - dm * sum_s mins[s] * bsums[s])
// Types whose codes carry an offset (Q3_K: code - 4, Q6_K: code - 32) use
// mins = offset * sc and dm = d, so both sums fold into one exact integer; Q2_K,
// Q4_K and Q5_K have true minimums with their own super-scale dmin; IQ4_XS's codes
// are the table's signed values and it has no mins. The integer sums are exact,
// and the float arithmetic per super-block is fixed, so a row's result does not
// depend on how many tokens share the call.
#include "runtime/kernels/act_quant.h"
#include "runtime/kernels/block_decode.h"
#include "runtime/kernels/scalar_quant.h"

namespace pshard::kernels::scalar {
namespace {

enum class Mins { kNone, kOffset, kSeparate };

struct KInts {
  float d, dm;
  int16_t sc[16], mins[16];
  int8_t code[kSuperValues];
};

// Scales per 32 values (Q4_K, Q5_K, IQ4_XS) fill both halves' entries.
void set_sub32(KInts* k, int s, int sc, int m) {
  k->sc[2 * s] = k->sc[2 * s + 1] = static_cast<int16_t>(sc);
  k->mins[2 * s] = k->mins[2 * s + 1] = static_cast<int16_t>(m);
}

struct Q2K {
  static constexpr size_t kBytes = kQ2KBytes;
  static constexpr Mins kMins = Mins::kSeparate;
  static void decode(const uint8_t* b, KInts* k) {
    k->d = f16_at(b + kQ2KD);
    k->dm = f16_at(b + kQ2KD + 2);
    for (int s = 0; s < 16; ++s) {
      k->sc[s] = b[kQ2KScales + s] & 15;
      k->mins[s] = b[kQ2KScales + s] >> 4;
    }
    for (int i = 0; i < kSuperValues; ++i)
      k->code[i] = static_cast<int8_t>(q2k_code(b, i));
  }
};

struct Q3K {
  static constexpr size_t kBytes = kQ3KBytes;
  static constexpr Mins kMins = Mins::kOffset;
  static void decode(const uint8_t* b, KInts* k) {
    k->d = k->dm = f16_at(b + kQ3KD);
    for (int s = 0; s < 16; ++s) {
      k->sc[s] = static_cast<int16_t>(q3k_scale_code(b + kQ3KScales, s) - 32);
      k->mins[s] = static_cast<int16_t>(4 * k->sc[s]);
    }
    for (int i = 0; i < kSuperValues; ++i)
      k->code[i] = static_cast<int8_t>(q3k_code(b, i));
  }
};

template <int (*Code)(const uint8_t*, int), size_t Bytes> struct Q45K {
  static constexpr size_t kBytes = Bytes;
  static constexpr Mins kMins = Mins::kSeparate;
  static void decode(const uint8_t* b, KInts* k) {
    k->d = f16_at(b);
    k->dm = f16_at(b + 2);
    for (int s = 0; s < 8; ++s) {
      int sc, m;
      q4k_scale_min(b + kQ4KScales, s, &sc, &m);
      set_sub32(k, s, sc, m);
    }
    for (int i = 0; i < kSuperValues; ++i)
      k->code[i] = static_cast<int8_t>(Code(b, i));
  }
};

using Q4K = Q45K<q4k_code, kQ4KBytes>;
using Q5K = Q45K<q5k_code, kQ5KBytes>;

struct Q6K {
  static constexpr size_t kBytes = kQ6KBytes;
  static constexpr Mins kMins = Mins::kOffset;
  static void decode(const uint8_t* b, KInts* k) {
    k->d = k->dm = f16_at(b + kQ6KD);
    for (int s = 0; s < 16; ++s) {
      k->sc[s] = static_cast<int8_t>(b[kQ6KScales + s]);
      k->mins[s] = static_cast<int16_t>(32 * k->sc[s]);
    }
    for (int i = 0; i < kSuperValues; ++i)
      k->code[i] = static_cast<int8_t>(q6k_code(b, i));
  }
};

struct Iq4Xs {
  static constexpr size_t kBytes = kIq4XsBytes;
  static constexpr Mins kMins = Mins::kNone;
  static void decode(const uint8_t* b, KInts* k) {
    k->d = k->dm = f16_at(b);
    for (int s = 0; s < 8; ++s)
      set_sub32(k, s, iq4xs_scale_code(b, s) - 32, 0);
    for (int i = 0; i < kSuperValues; ++i)
      k->code[i] = kIq4Values[iq4xs_code(b, i)];
  }
};

// One super-block's contribution for one token (see the file comment).
template <Mins M>
float super_block_dot(const KInts& w, const int8_t* q, const int16_t* bsums, float dx) {
  int isum = 0;
  for (int s = 0; s < 16; ++s) {
    int part = 0;
    for (int j = 0; j < 16; ++j)
      part += w.code[16 * s + j] * q[16 * s + j];
    isum += w.sc[s] * part;
  }
  int msum = 0;
  if (M != Mins::kNone)
    for (int s = 0; s < 16; ++s)
      msum += w.mins[s] * bsums[s];
  if (M == Mins::kOffset)
    return static_cast<float>(isum - msum) * (w.d * dx);
  const float scaled = static_cast<float>(isum) * (w.d * dx);
  if (M == Mins::kNone)
    return scaled;
  return scaled - static_cast<float>(msum) * (w.dm * dx);
}

// Tokens are taken in groups so that each super-block is decoded once per group.
constexpr int64_t kTokenGroup = 8;

template <class F>
void gemm_kquant(const MatrixView& w, int64_t r0, int64_t r1, const uint8_t* act, size_t stride,
                 int64_t n_tokens, float* y, int64_t ldy) {
  const Q8kLayout l = Q8kLayout::of(w.cols);
  KInts k;
  for (int64_t r = r0; r < r1; ++r) {
    const uint8_t* row = w.data + r * w.row_bytes;
    for (int64_t t0 = 0; t0 < n_tokens; t0 += kTokenGroup) {
      const int64_t nt = n_tokens - t0 < kTokenGroup ? n_tokens - t0 : kTokenGroup;
      float sum[kTokenGroup] = {};
      for (int64_t b = 0; b < l.nsb; ++b) {
        F::decode(row + b * F::kBytes, &k);
        for (int64_t t = 0; t < nt; ++t) {
          const uint8_t* a = act + (t0 + t) * stride;
          const int8_t* q = reinterpret_cast<const int8_t*>(a) + b * kActSuperBlock;
          const float dx = reinterpret_cast<const float*>(a + l.d_offset())[b];
          const int16_t* bs = reinterpret_cast<const int16_t*>(a + l.bsums_offset()) + 16 * b;
          sum[t] += super_block_dot<F::kMins>(k, q, bs, dx);
        }
      }
      for (int64_t t = 0; t < nt; ++t)
        y[(t0 + t) * ldy + r] = sum[t];
    }
  }
}

} // namespace

size_t q8k_act_bytes(int64_t cols) { return Q8kLayout::of(cols).bytes(); }

void q8k_act_pack(const float* x, int64_t cols, uint8_t* dst) {
  pack_q8k_with(
      x, cols, dst,
      [](const float* v, int8_t* q) { return quantize_act_values(v, kActSuperBlock, q); },
      q8k_sums);
}

#define PSHARD_SCALAR_KQUANT_GEMM(name, F)                                                         \
  void name(const MatrixView& w, int64_t r0, int64_t r1, const uint8_t* act, size_t stride,        \
            int64_t n_tokens, float* y, int64_t ldy) {                                             \
    gemm_kquant<F>(w, r0, r1, act, stride, n_tokens, y, ldy);                                      \
  }
PSHARD_SCALAR_KQUANT_GEMM(gemm_q2_k, Q2K)
PSHARD_SCALAR_KQUANT_GEMM(gemm_q3_k, Q3K)
PSHARD_SCALAR_KQUANT_GEMM(gemm_q4_k, Q4K)
PSHARD_SCALAR_KQUANT_GEMM(gemm_q5_k, Q5K)
PSHARD_SCALAR_KQUANT_GEMM(gemm_q6_k, Q6K)
PSHARD_SCALAR_KQUANT_GEMM(gemm_iq4_xs, Iq4Xs)
#undef PSHARD_SCALAR_KQUANT_GEMM

} // namespace pshard::kernels::scalar
