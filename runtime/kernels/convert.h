// Scalar conversions between float and the 16-bit float formats, bit-exact with
// IEEE 754 binary16 (round to nearest even) and bfloat16 (round to nearest even,
// NaN kept quiet). Vector paths must agree with these.
#pragma once

#include <cstdint>
#include <cstring>

namespace pshard {

float fp16_to_fp32(uint16_t h);
uint16_t fp32_to_fp16(float f);

inline float bf16_to_fp32(uint16_t h) {
  uint32_t bits = static_cast<uint32_t>(h) << 16;
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

inline uint16_t fp32_to_bf16(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, sizeof bits);
  if ((bits & 0x7fffffffu) > 0x7f800000u) // NaN: keep it a (quiet) NaN
    return static_cast<uint16_t>((bits >> 16) | 0x40u);
  bits += 0x7fffu + ((bits >> 16) & 1u);
  return static_cast<uint16_t>(bits >> 16);
}

} // namespace pshard
