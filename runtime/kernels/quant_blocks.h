// Private: byte-level access to Q8_0 and Q4_0 blocks (layouts in tensor_type.h).
//
// Blocks are read through byte offsets and memcpy, never through a struct pointer:
// a 34- or 18-byte block in a mapped file has no alignment guarantee. GGUF is
// little-endian, as is every host pshard targets, so the fp16 scale is read as is.
#pragma once

#include "runtime/kernels/convert.h"
#include "runtime/kernels/fp16_inline.h"

#include <cstdint>
#include <cstring>

namespace pshard::kernels {

inline constexpr int64_t kQK = 32;           // values per quantized block
inline constexpr size_t kQ8_0Bytes = 2 + 32; // f16 d; int8 q[32]
inline constexpr size_t kQ4_0Bytes = 2 + 16; // f16 d; uint8 qs[16]

inline float block_scale(const uint8_t *block) {
  uint16_t d;
  std::memcpy(&d, block, sizeof d);
  return half_to_float(d);
}

inline void store_block_scale(uint8_t *block, float d) {
  const uint16_t h = fp32_to_fp16(d);
  std::memcpy(block, &h, sizeof h);
}

// The 32 quants of a block as floats (exact: they are small integers).
inline void q8_0_block_quants(const uint8_t *block, float *q) {
  const int8_t *src = reinterpret_cast<const int8_t *>(block + 2);
  for (int j = 0; j < kQK; ++j)
    q[j] = static_cast<float>(src[j]);
}

inline void q4_0_block_quants(const uint8_t *block, float *q) {
  const uint8_t *qs = block + 2;
  for (int j = 0; j < kQK / 2; ++j) {
    q[j] = static_cast<float>(static_cast<int>(qs[j] & 0x0f) - 8);
    q[j + kQK / 2] = static_cast<float>(static_cast<int>(qs[j] >> 4) - 8);
  }
}

} // namespace pshard::kernels
