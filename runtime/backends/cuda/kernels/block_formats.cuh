// Device-side readers of GGUF's weight layouts (runtime/tensor/tensor_type.h draws them).
#pragma once

#include "runtime/tensor/tensor_type.h"

#include <cstdint>
#include <cstring>
#include <cuda_bf16.h>
#include <cuda_fp16.h>

namespace pshard::cuda::kernels {

__host__ __device__ __forceinline__ float half_at(const uint8_t* p) {
  // Blocks are 17 to 210 bytes long (odd sizes among them), so a scale may lie at any
  // byte: assemble it from its two bytes.
  const unsigned short bits = static_cast<unsigned short>(p[0] | (p[1] << 8));
  return __half2float(__ushort_as_half(bits));
}

// Bytes and values of one block of T (1 value for the float types).
template <TensorType T> struct BlockOf {
  static constexpr bool kSuper = T == TensorType::kQ2_K || T == TensorType::kQ3_K ||
                                 T == TensorType::kQ4_K || T == TensorType::kQ5_K ||
                                 T == TensorType::kQ6_K || T == TensorType::kIQ4_XS;
  static constexpr bool kFloat =
      T == TensorType::kF32 || T == TensorType::kF16 || T == TensorType::kBF16;
  static constexpr int kValues = kFloat ? 1 : kSuper ? 256 : 32;
  static constexpr int kBytes = T == TensorType::kQ4_0   ? 18
                                : T == TensorType::kQ4_1 ? 20
                                : T == TensorType::kQ5_0 ? 22
                                : T == TensorType::kQ5_1 ? 24
                                : T == TensorType::kQ8_0 ? 34
                                : T == TensorType::kIQ4_NL ? 18
                                : T == TensorType::kQ2_K ? 84
                                : T == TensorType::kQ3_K ? 110
                                : T == TensorType::kQ4_K ? 144
                                : T == TensorType::kQ5_K ? 176
                                : T == TensorType::kQ6_K ? 210
                                : T == TensorType::kIQ4_XS ? 136
                                : T == TensorType::kMXFP4  ? 17
                                                           : 0;
};

// IQ4_NL / IQ4_XS's table (kIq4Values) packed into two words, so host and device code
// read it alike without a memory table: entry i is byte i of the 16 bytes.
__host__ __device__ __forceinline__ int iq4_value(int i) {
  constexpr uint64_t kLow = 0xf6eaddcfbfad9881ull;  // -127 -104 -83 -65 -49 -35 -22 -10
  constexpr uint64_t kHigh = 0x7159453526190d01ull; // 1 13 25 38 53 69 89 113
  return static_cast<int8_t>(((i < 8 ? kLow : kHigh) >> (8 * (i & 7))) & 0xff);
}

// MXFP4's table (kMxfp4Values): the magnitudes 0 1 2 3 4 6 8 12 packed into a word,
// bit 3 of the code the sign (code 8, E2M1's -0, reads as 0 like the table's).
__host__ __device__ __forceinline__ int mxfp4_value(int i) {
  const int magnitude = static_cast<int>((0x0c08060403020100ull >> (8 * (i & 7))) & 0xff);
  return i & 8 ? -magnitude : magnitude;
}

// MXFP4's block scale from its E8M0 byte, 2^(e - 128) (pshard::e8m0_half_bits, which
// device code cannot call): the normal float of biased exponent e - 1, or for e < 2 the
// subnormal's single mantissa bit.
__host__ __device__ __forceinline__ float mxfp4_scale(uint8_t e) {
  const uint32_t bits = e >= 2 ? static_cast<uint32_t>(e - 1) << 23 : 0x00200000u << e;
#ifdef __CUDA_ARCH__
  return __uint_as_float(bits);
#else
  float d;
  std::memcpy(&d, &bits, sizeof d);
  return d;
#endif
}

// Code j (0..31) of a legacy block's 16 quant bytes (value j < 16: low nibble of qs[j]).
__host__ __device__ __forceinline__ int nibble_at(const uint8_t* qs, int j) {
  const uint8_t q = qs[j & 15];
  return j < 16 ? q & 15 : q >> 4;
}

// Bit j of a little-endian 32-bit word at an unaligned address.
__host__ __device__ __forceinline__ int bit_at(const uint8_t* p, int j) { return (p[j >> 3] >> (j & 7)) & 1; }

// Q4_K / Q5_K: the 6-bit scale (and min, in *m) of sub-block s (0..7).
__host__ __device__ __forceinline__ int q4k_scale(const uint8_t* b, int s, int* m) {
  if (s < 4) {
    *m = b[s + 4] & 63;
    return b[s] & 63;
  }
  *m = (b[s + 4] >> 4) | (b[s] >> 6) << 4;
  return (b[s + 4] & 15) | (b[s - 4] >> 6) << 4;
}

// Value v (0..block values) of one quantized block of T, with the format's arithmetic
// (runtime/kernels/dequantize.cpp's): host code can call it too, which is how the
// readers are tested bit for bit on machines without a GPU.
template <TensorType T> __host__ __device__ __forceinline__ float value_at(const uint8_t* b, int v) {
  if constexpr (T == TensorType::kQ8_0) {
    return half_at(b) * static_cast<float>(static_cast<int8_t>(b[2 + v]));
  } else if constexpr (T == TensorType::kQ4_0) {
    return half_at(b) * static_cast<float>(nibble_at(b + 2, v) - 8);
  } else if constexpr (T == TensorType::kQ4_1) {
    return static_cast<float>(nibble_at(b + 4, v)) * half_at(b) + half_at(b + 2);
  } else if constexpr (T == TensorType::kQ5_0) {
    const int q = nibble_at(b + 6, v) | bit_at(b + 2, v) << 4;
    return static_cast<float>(q - 16) * half_at(b);
  } else if constexpr (T == TensorType::kQ5_1) {
    const int q = nibble_at(b + 8, v) | bit_at(b + 4, v) << 4;
    return static_cast<float>(q) * half_at(b) + half_at(b + 2);
  } else if constexpr (T == TensorType::kIQ4_NL) {
    return half_at(b) * static_cast<float>(iq4_value(nibble_at(b + 2, v)));
  } else if constexpr (T == TensorType::kMXFP4) { // e qs[16]
    return mxfp4_scale(b[0]) * static_cast<float>(mxfp4_value(nibble_at(b + 1, v)));
  } else if constexpr (T == TensorType::kQ2_K) { // scales[16] qs[64] d dmin
    const uint8_t sc = b[v / 16];
    const int q = (b[16 + 32 * (v / 128) + v % 32] >> (2 * (v % 128 / 32))) & 3;
    const float dl = half_at(b + 80) * static_cast<float>(sc & 15);
    return dl * static_cast<float>(q) - half_at(b + 82) * static_cast<float>(sc >> 4);
  } else if constexpr (T == TensorType::kQ3_K) { // hmask[32] qs[64] scales[12] d
    const int s = v / 16;
    const uint8_t* sc = b + 96;
    const int code6 = (s < 8 ? sc[s] & 15 : sc[s - 8] >> 4) | ((sc[8 + s % 4] >> (2 * (s / 4))) & 3) << 4;
    const int q = ((b[32 + 32 * (v / 128) + v % 32] >> (2 * (v % 128 / 32))) & 3) |
                  ((b[v % 32] >> (v / 32)) & 1) << 2;
    return half_at(b + 108) * static_cast<float>(code6 - 32) * static_cast<float>(q - 4);
  } else if constexpr (T == TensorType::kQ4_K || T == TensorType::kQ5_K) { // d dmin scales[12] [qh[32]] qs
    int m;
    const int sc = q4k_scale(b + 4, v / 32, &m);
    const uint8_t byte = b[(T == TensorType::kQ5_K ? 48 : 16) + 32 * (v / 64) + v % 32];
    int q = v % 64 < 32 ? byte & 15 : byte >> 4;
    if constexpr (T == TensorType::kQ5_K)
      q |= ((b[16 + v % 32] >> (v / 32)) & 1) << 4;
    const float d1 = half_at(b) * static_cast<float>(sc);
    return d1 * static_cast<float>(q) - half_at(b + 2) * static_cast<float>(m);
  } else if constexpr (T == TensorType::kQ6_K) { // ql[128] qh[64] scales[16] d
    const uint8_t low = b[64 * (v / 128) + v % 64];
    const int q = (v % 128 < 64 ? low & 15 : low >> 4) |
                  ((b[128 + 32 * (v / 128) + v % 32] >> (2 * (v % 128 / 32))) & 3) << 4;
    return half_at(b + 208) * static_cast<float>(static_cast<int8_t>(b[192 + v / 16])) *
           static_cast<float>(q - 32);
  } else { // IQ4_XS: d scales_h scales_l[4] qs[128]
    const int s = v / 32;
    const int ls = ((b[4 + s / 2] >> (4 * (s % 2))) & 15) | (((b[2 + s / 4] >> (2 * (s % 4))) & 3) << 4);
    const float dl = half_at(b) * static_cast<float>(ls - 32);
    return dl * static_cast<float>(iq4_value(nibble_at(b + 8 + 16 * s, v % 32)));
  }
}

// Value c of a row of type T.
template <TensorType T> __host__ __device__ __forceinline__ float weight_at(const uint8_t* row, int64_t c) {
  if constexpr (T == TensorType::kF32) {
    return reinterpret_cast<const float*>(row)[c];
  } else if constexpr (T == TensorType::kF16) {
    return __half2float(reinterpret_cast<const __half*>(row)[c]);
  } else if constexpr (T == TensorType::kBF16) {
    return __bfloat162float(reinterpret_cast<const __nv_bfloat16*>(row)[c]);
  } else {
    using B = BlockOf<T>;
    return value_at<T>(row + (c / B::kValues) * B::kBytes, static_cast<int>(c % B::kValues));
  }
}

// Calls f(TensorType constant) for a runtime type; false for an unknown type.
template <typename F> bool dispatch_type(TensorType t, F&& f) {
  switch (t) {
  case TensorType::kF32:
    f(std::integral_constant<TensorType, TensorType::kF32>{});
    return true;
  case TensorType::kF16:
    f(std::integral_constant<TensorType, TensorType::kF16>{});
    return true;
  case TensorType::kBF16:
    f(std::integral_constant<TensorType, TensorType::kBF16>{});
    return true;
  case TensorType::kQ8_0:
    f(std::integral_constant<TensorType, TensorType::kQ8_0>{});
    return true;
  case TensorType::kQ4_0:
    f(std::integral_constant<TensorType, TensorType::kQ4_0>{});
    return true;
  case TensorType::kQ4_1:
    f(std::integral_constant<TensorType, TensorType::kQ4_1>{});
    return true;
  case TensorType::kQ5_0:
    f(std::integral_constant<TensorType, TensorType::kQ5_0>{});
    return true;
  case TensorType::kQ5_1:
    f(std::integral_constant<TensorType, TensorType::kQ5_1>{});
    return true;
  case TensorType::kIQ4_NL:
    f(std::integral_constant<TensorType, TensorType::kIQ4_NL>{});
    return true;
  case TensorType::kQ2_K:
    f(std::integral_constant<TensorType, TensorType::kQ2_K>{});
    return true;
  case TensorType::kQ3_K:
    f(std::integral_constant<TensorType, TensorType::kQ3_K>{});
    return true;
  case TensorType::kQ4_K:
    f(std::integral_constant<TensorType, TensorType::kQ4_K>{});
    return true;
  case TensorType::kQ5_K:
    f(std::integral_constant<TensorType, TensorType::kQ5_K>{});
    return true;
  case TensorType::kQ6_K:
    f(std::integral_constant<TensorType, TensorType::kQ6_K>{});
    return true;
  case TensorType::kIQ4_XS:
    f(std::integral_constant<TensorType, TensorType::kIQ4_XS>{});
    return true;
  case TensorType::kMXFP4:
    f(std::integral_constant<TensorType, TensorType::kMXFP4>{});
    return true;
  }
  return false;
}

inline unsigned blocks_for(int64_t n, int threads) {
  return static_cast<unsigned>((n + threads - 1) / threads);
}

} // namespace pshard::cuda::kernels
