// Weight types pshard runs, with GGUF's (ggml's) numeric ids and block layouts.
// Every block is little-endian and packed (no padding); "f16" is an IEEE half.
//
// Float types
//   F32   4 bytes/value
//   F16   2 bytes/value, IEEE half
//   BF16  2 bytes/value, upper half of an IEEE float
//
// Legacy blocks of 32 values (value j < 16 is the low nibble of qs[j], value
// j + 16 its high nibble; the fifth bit of value j is bit j of the 32-bit qh):
//   Q4_0   { f16 d;          u8 qs[16]; }           18 B   x = d * (q - 8)
//   Q4_1   { f16 d, m;       u8 qs[16]; }           20 B   x = d * q + m
//   Q5_0   { f16 d;   u8 qh[4]; u8 qs[16]; }        22 B   x = d * (q - 16)
//   Q5_1   { f16 d, m; u8 qh[4]; u8 qs[16]; }       24 B   x = d * q + m
//   Q8_0   { f16 d;          i8 q[32]; }            34 B   x = d * q
//   IQ4_NL { f16 d;          u8 qs[16]; }           18 B   x = d * kIq4Values[q]
//   MXFP4  { u8 e;           u8 qs[16]; }           17 B   x = 2^(e - 128) * kMxfp4Values[q]
//          (OCP microscaling FP4: e is an E8M0 scale 2^(e - 127), q an E2M1 float;
//          the table holds the E2M1 values doubled, so the scale is halved to match)
//
// K-quant super-blocks of 256 values, in sub-blocks of 32 (Q4_K, Q5_K, IQ4_XS) or
// 16 (Q2_K, Q3_K, Q6_K), each with its own small integer scale (and min):
//   Q2_K   { u8 scales[16]; u8 qs[64]; f16 d, dmin; }                       84 B
//          sub-block s (16 values): x = d * (scales[s] & 15) * q - dmin * (scales[s] >> 4)
//          q: 2 bits; value i lives in qs[32 * (i / 128) + i % 32] >> 2 * (i % 128 / 32)
//   Q3_K   { u8 hmask[32]; u8 qs[64]; u8 scales[12]; f16 d; }              110 B
//          x = d * (sc[s] - 32) * (q - 4), sc 6 bits (below), 16 sub-blocks of 16;
//          q's low 2 bits as Q2_K's, its bit 2 is bit (i / 32) of hmask[i % 32]
//   Q4_K   { f16 d, dmin; u8 scales[12]; u8 qs[128]; }                     144 B
//          x = d * sc[s] * q - dmin * m[s], 8 sub-blocks of 32, sc/m 6 bits (below);
//          value i is nibble (i % 64 >= 32) of qs[32 * (i / 64) + i % 32]
//   Q5_K   { f16 d, dmin; u8 scales[12]; u8 qh[32]; u8 qs[128]; }          176 B
//          as Q4_K, plus bit 4 of value i = bit (i / 32) of qh[i % 32]
//   Q6_K   { u8 ql[128]; u8 qh[64]; i8 scales[16]; f16 d; }                210 B
//          x = d * scales[i / 16] * (q - 32); q's low 4 bits: nibble (i % 128 >= 64) of
//          ql[64 * (i / 128) + i % 64], its high 2 bits: qh[32 * (i / 128) + i % 32]
//          >> 2 * (i % 128 / 32)
//   IQ4_XS { f16 d; u16 scales_h; u8 scales_l[4]; u8 qs[128]; }            136 B
//          x = d * (ls[s] - 32) * kIq4Values[q], 8 sub-blocks of 32; ls is 6 bits:
//          low 4 = nibble (s % 2) of scales_l[s / 2], high 2 = scales_h >> 2 * s;
//          sub-block s is laid out like an IQ4_NL block's quants at qs + 16 * s
//
// The 6-bit scales of Q4_K/Q5_K (12 bytes, 8 scales sc and 8 mins m):
//   s < 4:  sc = b[s] & 63,                        m = b[s + 4] & 63
//   s >= 4: sc = (b[s + 4] & 15) | (b[s - 4] >> 6) << 4,  m = (b[s + 4] >> 4) | (b[s] >> 6) << 4
// The 6-bit scales of Q3_K (12 bytes, 16 scales): low 4 bits = nibble (s >= 8) of
// b[s % 8], high 2 bits = b[8 + s % 4] >> 2 * (s / 4).
//
// Rows of a quantized tensor must hold a whole number of blocks.
#pragma once

#include "runtime/core/status.h"

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

namespace pshard {

enum class TensorType : uint32_t {
  kF32 = 0,
  kF16 = 1,
  kQ4_0 = 2,
  kQ4_1 = 3,
  kQ5_0 = 6,
  kQ5_1 = 7,
  kQ8_0 = 8,
  kQ2_K = 10,
  kQ3_K = 11,
  kQ4_K = 12,
  kQ5_K = 13,
  kQ6_K = 14,
  kIQ4_NL = 20,
  kIQ4_XS = 23,
  kBF16 = 30,
  kMXFP4 = 39,
};

// The 16 values of IQ4_NL / IQ4_XS's 4-bit codes (ggml's non-linear table).
inline constexpr int8_t kIq4Values[16] = {-127, -104, -83, -65, -49, -35, -22, -10,
                                          1,    13,   25,  38,  53,  69,  89,  113};

// The 16 values of MXFP4's 4-bit codes: E2M1 (sign, 2 exponent bits, 1 mantissa bit)
// floats doubled, so they are integers and the kernels' integer dot products apply.
inline constexpr int8_t kMxfp4Values[16] = {0, 1,  2,  3,  4,  6,  8,  12,
                                            0, -1, -2, -3, -4, -6, -8, -12};

// The float bits of MXFP4's block scale for its E8M0 byte e, halved for the doubled
// table: 2^(e - 128), exact for every e. e >= 2 is the normal float of biased exponent
// e - 1; e = 1 and e = 0 (2^-127, 2^-128) are subnormals, a single mantissa bit. E8M0's
// NaN code 255 is not special-cased (2^127), as ggml reads it.
constexpr uint32_t e8m0_half_bits(uint8_t e) {
  return e >= 2 ? static_cast<uint32_t>(e - 1) << 23 : 0x00200000u << e;
}
// The same as a float, for the portable paths (memcpy rather than std::bit_cast: the
// CUDA files read this header as C++17; the SIMD paths read kE8m0HalfScales).
inline float e8m0_half_to_float(uint8_t e) {
  const uint32_t bits = e8m0_half_bits(e);
  float d;
  std::memcpy(&d, &bits, sizeof d);
  return d;
}

struct TensorTypeTraits {
  TensorType type;
  const char* name;        // "f32", "q8_0", as users type them
  int64_t block_values;    // values per block (1 for float types)
  size_t block_bytes;      // bytes per block
};

// Traits of a supported type; nullptr for any other ggml id.
const TensorTypeTraits* tensor_type_traits(uint32_t ggml_type_id);
const TensorTypeTraits& tensor_type_traits(TensorType type);

inline const char* tensor_type_name(TensorType type) { return tensor_type_traits(type).name; }

// Storage bits per weight, scales included (Q4_K: 4.5).
double tensor_type_bits_per_weight(TensorType type);

// Every supported type, in ggml id order.
const TensorType* supported_tensor_types(size_t* count);

// "f32, f16, q4_0, …": the supported names, for error messages.
std::string supported_tensor_type_list();

// Name of any ggml type id, supported or not (for error messages), e.g. "q4_k".
std::string ggml_type_name(uint32_t ggml_type_id);

// Parses "f32", "F16", "q8_0", "Q4_K"… (case-insensitive).
Result<TensorType> parse_tensor_type(std::string_view name);

// Bytes of `n_values` values; fails when n_values is not a whole number of blocks.
Result<size_t> tensor_bytes(TensorType type, int64_t n_values);
// The same for a row whose length is known to be whole blocks (checked at load).
inline size_t tensor_row_bytes(TensorType type, int64_t n_values) {
  const TensorTypeTraits& t = tensor_type_traits(type);
  return static_cast<size_t>(n_values / t.block_values) * t.block_bytes;
}

} // namespace pshard
