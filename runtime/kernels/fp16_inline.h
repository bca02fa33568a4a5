// Private: fp16 -> f32 as an inline, branch-free function, so the row kernels'
// widening loops inline and vectorise it (a call per value into convert.cpp costs
// several times the arithmetic). convert.cpp's fp16_to_fp32 is this same function.
#pragma once

#include <bit>
#include <cstdint>

namespace pshard::kernels {

// Shifting a half's exponent and mantissa into a float's fields gives a float
// whose exponent is biased by 127 instead of 15; multiplying by 2^112 rebiases it
// exactly (a power of two never rounds). The same multiply turns a half subnormal
// m * 2^-24 (a float subnormal m * 2^-136 after the shift) into the right normal
// float, so subnormals need no branch. Inf and NaN (exponent all ones) get the
// float's all-ones exponent instead, keeping the payload.
inline float half_to_float(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t shifted = static_cast<uint32_t>(h & 0x7fffu) << 13;
  const uint32_t scaled = std::bit_cast<uint32_t>(std::bit_cast<float>(shifted) * 0x1p112f);
  // A mask rather than a branch or select, which keeps the widening loops vectorisable.
  const uint32_t special = 0u - static_cast<uint32_t>(static_cast<int32_t>(shifted) >=
                                                      static_cast<int32_t>(0x7c00u << 13));
  return std::bit_cast<float>((scaled & ~special) | ((shifted | 0x7f800000u) & special) | sign);
}

} // namespace pshard::kernels
