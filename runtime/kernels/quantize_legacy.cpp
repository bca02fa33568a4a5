// Reference quantizers for the legacy 32-value blocks Q4_1, Q5_0, Q5_1, IQ4_NL and
// MXFP4 (layouts in tensor_type.h). Plain rules, no error-minimising search (see
// quantizers.h): the bytes are valid blocks, not llama-quantize's choice of them.
#include "runtime/kernels/block_decode.h"
#include "runtime/kernels/convert.h"
#include "runtime/kernels/quantizers.h"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace pshard::kernels {
namespace {

void store_half(uint8_t* p, float f) {
  const uint16_t h = fp32_to_fp16(f);
  std::memcpy(p, &h, 2);
}

// Codes 0..15 into the 16 nibble bytes: code j low, code j + 16 high.
void store_nibbles(const int* codes, uint8_t* qs) {
  for (int j = 0; j < 16; ++j)
    qs[j] = static_cast<uint8_t>((codes[j] & 15) | (codes[j + 16] & 15) << 4);
}

// The fifth bit of each code into qh (bit j of the little-endian 32-bit word).
void store_fifth_bits(const int* codes, uint8_t* qh) {
  uint32_t bits = 0;
  for (int j = 0; j < kLegacyValues; ++j)
    bits |= static_cast<uint32_t>((codes[j] >> 4) & 1) << j;
  std::memcpy(qh, &bits, 4);
}

// Q4_1 / Q5_1: x = d * q + m with m the block minimum and d its range / levels.
// Returns d and m as stored; codes are rounded against the stored values.
void min_range_codes(const float* x, int levels, uint8_t* dm, int* codes) {
  const float lo = *std::min_element(x, x + kLegacyValues);
  const float hi = *std::max_element(x, x + kLegacyValues);
  store_half(dm, (hi - lo) / static_cast<float>(levels));
  store_half(dm + 2, lo);
  const float d = f16_at(dm), m = f16_at(dm + 2);
  const float id = d != 0.0f ? 1.0f / d : 0.0f;
  for (int j = 0; j < kLegacyValues; ++j)
    codes[j] = clamped_round((x[j] - m) * id, 0, levels);
}

// Symmetric blocks: the value of largest magnitude maps to `extreme` (d stored at
// d_at); each value's code is code(x / d).
template <class Code>
void symmetric_codes(const float* x, float extreme, uint8_t* d_at, int* codes, Code code) {
  store_half(d_at, signed_max(x, kLegacyValues) / extreme);
  const float d = f16_at(d_at);
  const float id = d != 0.0f ? 1.0f / d : 0.0f;
  for (int j = 0; j < kLegacyValues; ++j)
    codes[j] = code(x[j] * id);
}

} // namespace

void quantize_q4_1(const float* src, uint8_t* dst, int64_t n) {
  for (int64_t i = 0; i < n; i += kLegacyValues, dst += kQ4_1Bytes) {
    int codes[kLegacyValues];
    min_range_codes(src + i, 15, dst, codes);
    store_nibbles(codes, dst + 4);
  }
}

void quantize_q5_1(const float* src, uint8_t* dst, int64_t n) {
  for (int64_t i = 0; i < n; i += kLegacyValues, dst += kQ5_1Bytes) {
    int codes[kLegacyValues];
    min_range_codes(src + i, 31, dst, codes);
    store_fifth_bits(codes, dst + 4);
    store_nibbles(codes, dst + 8);
  }
}

// Q5_0: as Q4_0 with 32 levels: the value of largest magnitude maps to -16.
void quantize_q5_0(const float* src, uint8_t* dst, int64_t n) {
  for (int64_t i = 0; i < n; i += kLegacyValues, dst += kQ5_0Bytes) {
    int codes[kLegacyValues];
    symmetric_codes(src + i, -16.0f, dst, codes,
                    [](float v) { return clamped_round(v, -16, 15) + 16; });
    store_fifth_bits(codes, dst + 2);
    store_nibbles(codes, dst + 6);
  }
}

// IQ4_NL: the value of largest magnitude maps to the table's -127; every value
// takes the nearest table entry.
void quantize_iq4_nl(const float* src, uint8_t* dst, int64_t n) {
  for (int64_t i = 0; i < n; i += kLegacyValues, dst += kIq4NlBytes) {
    int codes[kLegacyValues];
    symmetric_codes(src + i, -127.0f, dst, codes, nearest_iq4_index);
    store_nibbles(codes, dst + 2);
  }
}

// MXFP4: the power-of-two scale 2^(e - 128) puts the block's largest magnitude at 8..16
// times it (e = floor(log2 amax) + 125, ggml's reference rule), so the table's
// 8 and 12 hold the top of the block; values between 12 and 16 clip to 12. Each value
// takes the nearest table entry, the smaller magnitude on a tie (the table lists the
// magnitudes in ascending order). The division by the power of two is exact.
void quantize_mxfp4(const float* src, uint8_t* dst, int64_t n) {
  for (int64_t i = 0; i < n; i += kLegacyValues, dst += kMxfp4Bytes) {
    float amax = 0.0f;
    for (int j = 0; j < kLegacyValues; ++j)
      amax = std::fmax(amax, std::fabs(src[i + j]));
    // ilogb is floor(log2) exactly (log2f rounds up to k just below 2^k).
    const int e = amax > 0.0f ? std::clamp(std::ilogb(amax) + 125, 0, 254) : 0;
    dst[0] = static_cast<uint8_t>(e);
    const float d = e8m0_half_to_float(dst[0]);
    int codes[kLegacyValues];
    for (int j = 0; j < kLegacyValues; ++j)
      codes[j] = nearest_table_index(kMxfp4Values, src[i + j] / d);
    store_nibbles(codes, dst + kMxfp4Qs);
  }
}

} // namespace pshard::kernels
