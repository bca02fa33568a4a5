// Test-only: a float64 reading of every quantized block format, written from the
// formats' definitions (ggml's block layouts, as drawn in tensor_type.h) in the
// definitions' own loop order, independently of the runtime's decoders.
//
// Each value is returned as two exact parts, value = a - b: `a` is the scaled code,
// `b` the subtracted minimum (0 for types without one), so a dot-product test can
// bound rounding by sum (|a| + |b|) |x| when the two parts cancel.
#pragma once

#include "runtime/kernels/convert.h"
#include "runtime/tensor/tensor_type.h"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

namespace pshard::test {

struct RefValue {
  double a = 0, b = 0;
  double value() const { return a - b; }
};

inline double ref_half(const uint8_t* p) {
  uint16_t h;
  std::memcpy(&h, p, 2);
  return fp16_to_fp32(h);
}

inline int ref_nibble(const uint8_t* qs, int j) { return j < 16 ? qs[j] & 0xf : qs[j - 16] >> 4; }

inline uint32_t ref_u32(const uint8_t* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}

// An OCP E2M1 float from its 4 bits: sign, 2 exponent bits (bias 1), 1 mantissa bit;
// exponent 0 is subnormal (0 or 0.5). ggml's table stores the doubled values as
// integers, so its -0 (code 8) reads as +0: 0 - 0 keeps that.
inline double ref_e2m1(int bits) {
  const int exponent = (bits >> 1) & 3, mantissa = bits & 1;
  const double magnitude =
      exponent == 0 ? 0.5 * mantissa : std::ldexp(1.0 + 0.5 * mantissa, exponent - 1);
  return bits & 8 ? 0.0 - magnitude : magnitude;
}

// Q4_K / Q5_K: ggml's get_scale_min_k4.
inline void ref_scale_min_k4(int j, const uint8_t* q, int* d, int* m) {
  if (j < 4) {
    *d = q[j] & 63;
    *m = q[j + 4] & 63;
  } else {
    *d = (q[j + 4] & 0xF) | ((q[j - 4] >> 6) << 4);
    *m = (q[j + 4] >> 4) | ((q[j - 0] >> 6) << 4);
  }
}

// The values of one block of `type` (block_values of them).
inline std::vector<RefValue> ref_block(TensorType type, const uint8_t* x) {
  std::vector<RefValue> y;
  auto push = [&y](double a, double b = 0) { y.push_back({a, b}); };
  switch (type) {
  case TensorType::kQ8_0:
    for (int j = 0; j < 32; ++j)
      push(ref_half(x) * static_cast<int8_t>(x[2 + j]));
    break;
  case TensorType::kQ4_0:
    for (int j = 0; j < 32; ++j)
      push(ref_half(x) * (ref_nibble(x + 2, j) - 8));
    break;
  case TensorType::kQ4_1:
    for (int j = 0; j < 32; ++j)
      push(ref_half(x) * ref_nibble(x + 4, j), -ref_half(x + 2));
    break;
  case TensorType::kQ5_0:
  case TensorType::kQ5_1: {
    const bool with_min = type == TensorType::kQ5_1;
    const uint32_t qh = ref_u32(x + (with_min ? 4 : 2));
    const uint8_t* qs = x + (with_min ? 8 : 6);
    for (int j = 0; j < 32; ++j) {
      const int q = ref_nibble(qs, j) | static_cast<int>((qh >> j) & 1) << 4;
      if (with_min)
        push(ref_half(x) * q, -ref_half(x + 2));
      else
        push(ref_half(x) * (q - 16));
    }
    break;
  }
  case TensorType::kIQ4_NL:
    for (int j = 0; j < 32; ++j)
      push(ref_half(x) * kIq4Values[ref_nibble(x + 2, j)]);
    break;
  case TensorType::kMXFP4: { // e qs[16]: E8M0 scale 2^(e - 127) times E2M1 codes
    const double scale = std::ldexp(1.0, x[0] - 127);
    for (int j = 0; j < 32; ++j)
      push(scale * ref_e2m1(ref_nibble(x + 1, j)));
    break;
  }
  case TensorType::kQ2_K: { // scales[16] qs[64] d dmin
    const double d = ref_half(x + 80), dmin = ref_half(x + 82);
    const uint8_t* q = x + 16;
    int is = 0;
    for (int n = 0; n < 256; n += 128, q += 32)
      for (int shift = 0; shift < 8; shift += 2)
        for (int half = 0; half < 2; ++half) {
          const uint8_t sc = x[is++];
          for (int l = 0; l < 16; ++l)
            push(d * (sc & 0xF) * ((q[l + 16 * half] >> shift) & 3), dmin * (sc >> 4));
        }
    break;
  }
  case TensorType::kQ3_K: { // hmask[32] qs[64] scales[12] d
    const double d = ref_half(x + 108);
    uint32_t aux[4];
    std::memcpy(aux, x + 96, 12);
    const uint32_t kmask1 = 0x03030303, kmask2 = 0x0f0f0f0f, tmp = aux[2];
    aux[2] = ((aux[0] >> 4) & kmask2) | (((tmp >> 4) & kmask1) << 4);
    aux[3] = ((aux[1] >> 4) & kmask2) | (((tmp >> 6) & kmask1) << 4);
    aux[0] = (aux[0] & kmask2) | (((tmp >> 0) & kmask1) << 4);
    aux[1] = (aux[1] & kmask2) | (((tmp >> 2) & kmask1) << 4);
    int8_t scales[16];
    std::memcpy(scales, aux, 16);
    const uint8_t* q = x + 32;
    const uint8_t* hm = x;
    int is = 0, m = 1;
    for (int n = 0; n < 256; n += 128, q += 32)
      for (int shift = 0; shift < 8; shift += 2, m <<= 1)
        for (int half = 0; half < 2; ++half) {
          const double dl = d * (scales[is++] - 32);
          for (int l = 16 * half; l < 16 * half + 16; ++l)
            push(dl * (((q[l] >> shift) & 3) - ((hm[l] & m) ? 0 : 4)));
        }
    break;
  }
  case TensorType::kQ4_K:
  case TensorType::kQ5_K: { // d dmin scales[12] [qh[32]] qs[128]
    const bool five = type == TensorType::kQ5_K;
    const double d = ref_half(x), dmin = ref_half(x + 2);
    const uint8_t* q = x + (five ? 48 : 16);
    const uint8_t* qh = x + 16;
    int is = 0;
    for (int j = 0; j < 256; j += 64, q += 32, is += 2)
      for (int half = 0; half < 2; ++half) {
        int sc, mn;
        ref_scale_min_k4(is + half, x + 4, &sc, &mn);
        for (int l = 0; l < 32; ++l) {
          int code = half == 0 ? q[l] & 0xF : q[l] >> 4;
          if (five && (qh[l] >> (is + half)) & 1)
            code += 16;
          push(d * sc * code, dmin * mn);
        }
      }
    break;
  }
  case TensorType::kQ6_K: { // ql[128] qh[64] scales[16] d
    const double d = ref_half(x + 208);
    y.resize(256);
    for (int n = 0; n < 256; n += 128) {
      const uint8_t* ql = x + n / 2;
      const uint8_t* qh = x + 128 + n / 4;
      const int8_t* sc = reinterpret_cast<const int8_t*>(x + 192) + n / 16;
      for (int l = 0; l < 32; ++l) {
        const int is = l / 16;
        const int q1 = ((ql[l] & 0xF) | ((qh[l] & 3) << 4)) - 32;
        const int q2 = ((ql[l + 32] & 0xF) | (((qh[l] >> 2) & 3) << 4)) - 32;
        const int q3 = ((ql[l] >> 4) | (((qh[l] >> 4) & 3) << 4)) - 32;
        const int q4 = ((ql[l + 32] >> 4) | (((qh[l] >> 6) & 3) << 4)) - 32;
        y[n + l] = {d * sc[is] * q1, 0};
        y[n + l + 32] = {d * sc[is + 2] * q2, 0};
        y[n + l + 64] = {d * sc[is + 4] * q3, 0};
        y[n + l + 96] = {d * sc[is + 6] * q4, 0};
      }
    }
    break;
  }
  case TensorType::kIQ4_XS: { // d scales_h scales_l[4] qs[128]
    const double d = ref_half(x);
    uint16_t scales_h;
    std::memcpy(&scales_h, x + 2, 2);
    for (int ib = 0; ib < 8; ++ib) {
      const int ls = ((x[4 + ib / 2] >> 4 * (ib % 2)) & 0xf) | (((scales_h >> 2 * ib) & 3) << 4);
      const uint8_t* qs = x + 8 + 16 * ib;
      for (int j = 0; j < 32; ++j)
        push(d * (ls - 32) * kIq4Values[ref_nibble(qs, j)]);
    }
    break;
  }
  case TensorType::kF32:
  case TensorType::kF16:
  case TensorType::kBF16:
    break;
  }
  return y;
}

// Byte offsets of each block format's f16 scale fields (d, and dmin or m).
inline std::vector<size_t> ref_half_fields(TensorType type) {
  switch (type) {
  case TensorType::kQ4_1:
  case TensorType::kQ5_1:
  case TensorType::kQ4_K:
  case TensorType::kQ5_K:
    return {0, 2};
  case TensorType::kQ2_K:
    return {80, 82};
  case TensorType::kQ3_K:
    return {108};
  case TensorType::kQ6_K:
    return {208};
  case TensorType::kMXFP4: // its scale is an E8M0 byte (ref_e8m0_fields)
    return {};
  default:
    return {0};
  }
}

// Byte offsets of each block format's E8M0 scale bytes (MXFP4's e).
inline std::vector<size_t> ref_e8m0_fields(TensorType type) {
  if (type == TensorType::kMXFP4)
    return {0};
  return {};
}

// The quantized types, in ggml id order; legacy types have blocks of 32 values.
inline std::vector<TensorType> ref_quantized_types() {
  return {TensorType::kQ4_0, TensorType::kQ4_1, TensorType::kQ5_0,   TensorType::kQ5_1,
          TensorType::kQ8_0, TensorType::kQ2_K, TensorType::kQ3_K,   TensorType::kQ4_K,
          TensorType::kQ5_K, TensorType::kQ6_K, TensorType::kIQ4_NL, TensorType::kIQ4_XS,
          TensorType::kMXFP4};
}

} // namespace pshard::test
