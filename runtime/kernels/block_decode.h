// Private: the fields of every quantized block (layouts drawn in tensor_type.h),
// read one value or one scale at a time. The dequantizers, the quantizers' scale
// packing and the scalar kernels all read blocks through these, so each layout is
// written down in code once.
//
// Blocks are read through byte offsets and memcpy, never through a struct pointer:
// a block in a mapped file has no alignment guarantee. Internal linkage throughout
// (the ISA files include this too; see kernel_set.h).
#pragma once

#include "runtime/kernels/fp16_inline.h"
#include "runtime/tensor/tensor_type.h"

#include <bit>
#include <cstdint>
#include <cstring>

namespace pshard::kernels {
namespace {

constexpr int kLegacyValues = 32; // values per legacy block
constexpr int kSuperValues = 256; // values per K-quant super-block

// Byte sizes and field offsets (ggml's field order).
constexpr size_t kQ8_0Bytes = 34, kQ4_0Bytes = 18;
constexpr size_t kQ4_1Bytes = 20, kQ5_0Bytes = 22, kQ5_1Bytes = 24, kIq4NlBytes = 18;
constexpr size_t kMxfp4Bytes = 17, kMxfp4Qs = 1; // e at 0
constexpr size_t kQ2KBytes = 84, kQ3KBytes = 110, kQ4KBytes = 144, kQ5KBytes = 176, kQ6KBytes = 210,
                 kIq4XsBytes = 136;
constexpr size_t kQ2KScales = 0, kQ2KQs = 16, kQ2KD = 80; // dmin at 82
constexpr size_t kQ3KHmask = 0, kQ3KQs = 32, kQ3KScales = 96, kQ3KD = 108;
constexpr size_t kQ4KScales = 4, kQ4KQs = 16;              // d at 0, dmin at 2
constexpr size_t kQ5KScales = 4, kQ5KQh = 16, kQ5KQs = 48; // d at 0, dmin at 2
constexpr size_t kQ6KQl = 0, kQ6KQh = 128, kQ6KScales = 192, kQ6KD = 208;
constexpr size_t kIq4XsScalesH = 2, kIq4XsScalesL = 4, kIq4XsQs = 8; // d at 0

inline float f16_at(const uint8_t* p) {
  uint16_t h;
  std::memcpy(&h, p, 2);
  return half_to_float(h);
}

inline uint32_t u32_at(const uint8_t* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}

// MXFP4's block scale of every E8M0 byte (e8m0_half_bits), built at compile time:
// the SIMD paths read a block's scale with one load, and call no inline function
// shared with the other paths' files (see kernel_set.h).
struct E8m0HalfScales {
  float of[256];
};
consteval E8m0HalfScales make_e8m0_half_scales() {
  E8m0HalfScales t{};
  for (int e = 0; e < 256; ++e)
    t.of[e] = std::bit_cast<float>(e8m0_half_bits(static_cast<uint8_t>(e)));
  return t;
}
constexpr E8m0HalfScales kE8m0HalfScales = make_e8m0_half_scales();

// The 4-bit code of value j (0..31) of a legacy block's 16 quant bytes.
inline int nibble_of(const uint8_t* qs, int j) { return j < 16 ? qs[j] & 15 : qs[j - 16] >> 4; }

// The 5-bit code of value j of a Q5_0 / Q5_1 block: the nibble plus bit j of qh.
inline int five_bits_of(const uint8_t* qh, const uint8_t* qs, int j) {
  return nibble_of(qs, j) | static_cast<int>((u32_at(qh) >> j) & 1) << 4;
}

// Q4_K / Q5_K: the 6-bit scale and min of sub-block s (0..7) from the 12 scale bytes.
inline void q4k_scale_min(const uint8_t* b, int s, int* sc, int* m) {
  if (s < 4) {
    *sc = b[s] & 63;
    *m = b[s + 4] & 63;
  } else {
    *sc = (b[s + 4] & 15) | (b[s - 4] >> 6) << 4;
    *m = (b[s + 4] >> 4) | (b[s] >> 6) << 4;
  }
}

// Q3_K: the 6-bit scale code of sub-block s (0..15); the scale is the code - 32.
inline int q3k_scale_code(const uint8_t* b, int s) {
  const int low = s < 8 ? b[s] & 15 : b[s - 8] >> 4;
  const int high = (b[8 + s % 4] >> (2 * (s / 4))) & 3;
  return low | high << 4;
}

// IQ4_XS: the 6-bit scale code of sub-block s (0..7); the scale is the code - 32.
inline int iq4xs_scale_code(const uint8_t* block, int s) {
  uint16_t high;
  std::memcpy(&high, block + kIq4XsScalesH, 2);
  const int low = (block[kIq4XsScalesL + s / 2] >> (4 * (s % 2))) & 15;
  return low | ((high >> (2 * s)) & 3) << 4;
}

// The quant code of value i (0..255) of a K-quant super-block, before any offset:
// Q2_K 0..3, Q3_K 0..7 (the value is code - 4), Q4_K 0..15, Q5_K 0..31, Q6_K 0..63
// (the value is code - 32), IQ4_XS 0..15 (an index into kIq4Values).
inline int q2k_code(const uint8_t* block, int i) {
  return (block[kQ2KQs + 32 * (i / 128) + i % 32] >> (2 * (i % 128 / 32))) & 3;
}
inline int q3k_code(const uint8_t* block, int i) {
  const int low = (block[kQ3KQs + 32 * (i / 128) + i % 32] >> (2 * (i % 128 / 32))) & 3;
  const int high = (block[kQ3KHmask + i % 32] >> (i / 32)) & 1;
  return low | high << 2;
}
inline int q4k_code(const uint8_t* block, int i) {
  const uint8_t b = block[kQ4KQs + 32 * (i / 64) + i % 32];
  return i % 64 < 32 ? b & 15 : b >> 4;
}
inline int q5k_code(const uint8_t* block, int i) {
  const uint8_t b = block[kQ5KQs + 32 * (i / 64) + i % 32];
  const int high = (block[kQ5KQh + i % 32] >> (i / 32)) & 1;
  return (i % 64 < 32 ? b & 15 : b >> 4) | high << 4;
}
inline int q6k_code(const uint8_t* block, int i) {
  const uint8_t low = block[kQ6KQl + 64 * (i / 128) + i % 64];
  const int high = (block[kQ6KQh + 32 * (i / 128) + i % 32] >> (2 * (i % 128 / 32))) & 3;
  return (i % 128 < 64 ? low & 15 : low >> 4) | high << 4;
}
inline int iq4xs_code(const uint8_t* block, int i) {
  return nibble_of(block + kIq4XsQs + 16 * (i / 32), i % 32);
}

} // namespace
} // namespace pshard::kernels
