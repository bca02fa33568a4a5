// Reference quantizers for the K-quant super-blocks Q2_K..Q6_K and IQ4_XS (layouts
// in tensor_type.h). Each sub-block gets a float scale (and min) by a plain rule,
// those are quantized to the super-block's small integer codes against an fp16
// super-scale, and the values are rounded against the scales as stored. No
// error-minimising search (see quantizers.h): valid blocks, not llama-quantize's.
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

// Asymmetric sub-blocks (Q2_K, Q4_K, Q5_K): x ~ scale * q - min over `levels`
// levels, with min >= 0 (ggml's form: the offset is subtracted).
struct ScaleMin {
  float scale, min;
};
ScaleMin scale_min_of(const float* x, int n, int levels) {
  const float lo = std::min(0.0f, *std::min_element(x, x + n));
  const float hi = *std::max_element(x, x + n);
  return {(std::max(hi, lo) - lo) / static_cast<float>(levels), -lo};
}

// An unsigned code of `bits` for v / super, as stored against the stored super-scale;
// a non-zero v keeps at least code 1 so a small sub-block is not wiped out.
int unsigned_code(float v, float super, int max_code) {
  if (super == 0.0f || v == 0.0f)
    return 0;
  return std::max(1, clamped_round(v / super, 0, max_code));
}

// Quantizes the asymmetric super-block types: sub-blocks of `sub` values, codes up
// to `levels`, scale/min codes up to `max_code`. Writes d, dmin at d_at and returns
// codes[256] and the sub-blocks' scale and min codes.
void asymmetric_codes(const float* x, int sub, int levels, int max_code, uint8_t* d_at, int* codes,
                      int* sc, int* m) {
  const int n_sub = kSuperValues / sub;
  ScaleMin sm[16];
  float max_scale = 0.0f, max_min = 0.0f;
  for (int s = 0; s < n_sub; ++s) {
    sm[s] = scale_min_of(x + s * sub, sub, levels);
    max_scale = std::max(max_scale, sm[s].scale);
    max_min = std::max(max_min, sm[s].min);
  }
  store_half(d_at, max_scale / static_cast<float>(max_code));
  store_half(d_at + 2, max_min / static_cast<float>(max_code));
  const float d = f16_at(d_at), dmin = f16_at(d_at + 2);
  for (int s = 0; s < n_sub; ++s) {
    sc[s] = unsigned_code(sm[s].scale, d, max_code);
    m[s] = dmin == 0.0f ? 0 : clamped_round(sm[s].min / dmin, 0, max_code);
    const float step = d * static_cast<float>(sc[s]), offset = dmin * static_cast<float>(m[s]);
    for (int j = 0; j < sub; ++j)
      codes[s * sub + j] =
          step == 0.0f ? 0 : clamped_round((x[s * sub + j] + offset) / step, 0, levels);
  }
}

// Symmetric sub-blocks (Q3_K, Q6_K, IQ4_XS): each sub-block's scale maps its value
// of largest magnitude to `extreme` (the most negative code); the super-scale maps
// the sub-block scale of largest magnitude to the most negative scale code.
// Returns the stored super-scale (written at d_at) and the signed scale codes.
float symmetric_scales(const float* x, int sub, float extreme, int lo_code, int hi_code,
                       uint8_t* d_at, int* sc) {
  const int n_sub = kSuperValues / sub;
  float scales[16];
  for (int s = 0; s < n_sub; ++s)
    scales[s] = signed_max(x + s * sub, sub) / extreme;
  store_half(d_at, signed_max(scales, n_sub) / static_cast<float>(lo_code));
  const float d = f16_at(d_at);
  for (int s = 0; s < n_sub; ++s)
    sc[s] = d == 0.0f ? 0 : clamped_round(scales[s] / d, lo_code, hi_code);
  return d;
}

// Signed codes lo..hi of x against sub-block steps d * sc[s].
void symmetric_codes(const float* x, int sub, float d, const int* sc, int lo, int hi, int* codes) {
  for (int i = 0; i < kSuperValues; ++i) {
    const float step = d * static_cast<float>(sc[i / sub]);
    codes[i] = step == 0.0f ? 0 : clamped_round(x[i] / step, lo, hi);
  }
}

// Q4_K / Q5_K's 12 scale bytes from 8 scale and 8 min codes (inverse of q4k_scale_min).
void pack_q4k_scales(const int* sc, const int* m, uint8_t* b) {
  for (int s = 0; s < 4; ++s) {
    b[s] = static_cast<uint8_t>((sc[s] & 63) | (sc[s + 4] >> 4) << 6);
    b[s + 4] = static_cast<uint8_t>((m[s] & 63) | (m[s + 4] >> 4) << 6);
    b[s + 8] = static_cast<uint8_t>((sc[s + 4] & 15) | (m[s + 4] & 15) << 4);
  }
}

// 2-bit fields of the 256 values into 64 bytes (Q2_K's and Q3_K's qs layout).
void pack_two_bits(const int* codes, uint8_t* qs) {
  std::memset(qs, 0, 64);
  for (int i = 0; i < kSuperValues; ++i)
    qs[32 * (i / 128) + i % 32] |= static_cast<uint8_t>((codes[i] & 3) << (2 * (i % 128 / 32)));
}

// Q4_K / Q5_K nibbles: value i in qs[32 * (i / 64) + i % 32], high nibble from i % 64 = 32.
void pack_q4k_nibbles(const int* codes, uint8_t* qs) {
  std::memset(qs, 0, 128);
  for (int i = 0; i < kSuperValues; ++i)
    qs[32 * (i / 64) + i % 32] |= static_cast<uint8_t>((codes[i] & 15) << (i % 64 < 32 ? 0 : 4));
}

} // namespace

void quantize_q2_k(const float* src, uint8_t* dst, int64_t n) {
  for (int64_t i = 0; i < n; i += kSuperValues, dst += kQ2KBytes) {
    int codes[kSuperValues], sc[16], m[16];
    asymmetric_codes(src + i, 16, 3, 15, dst + kQ2KD, codes, sc, m);
    for (int s = 0; s < 16; ++s)
      dst[kQ2KScales + s] = static_cast<uint8_t>(sc[s] | m[s] << 4);
    pack_two_bits(codes, dst + kQ2KQs);
  }
}

template <int Levels> void quantize_q45_k(const float* src, uint8_t* dst) {
  int codes[kSuperValues], sc[8], m[8];
  asymmetric_codes(src, 32, Levels, 63, dst, codes, sc, m);
  pack_q4k_scales(sc, m, dst + kQ4KScales);
  pack_q4k_nibbles(codes, dst + (Levels == 15 ? kQ4KQs : kQ5KQs));
  if (Levels == 31) {
    std::memset(dst + kQ5KQh, 0, 32);
    for (int i = 0; i < kSuperValues; ++i)
      dst[kQ5KQh + i % 32] |= static_cast<uint8_t>((codes[i] >> 4) << (i / 32));
  }
}

void quantize_q4_k(const float* src, uint8_t* dst, int64_t n) {
  for (int64_t i = 0; i < n; i += kSuperValues, dst += kQ4KBytes)
    quantize_q45_k<15>(src + i, dst);
}

void quantize_q5_k(const float* src, uint8_t* dst, int64_t n) {
  for (int64_t i = 0; i < n; i += kSuperValues, dst += kQ5KBytes)
    quantize_q45_k<31>(src + i, dst);
}

void quantize_q3_k(const float* src, uint8_t* dst, int64_t n) {
  for (int64_t i = 0; i < n; i += kSuperValues, dst += kQ3KBytes) {
    int sc[16], codes[kSuperValues];
    const float d = symmetric_scales(src + i, 16, -4.0f, -32, 31, dst + kQ3KD, sc);
    symmetric_codes(src + i, 16, d, sc, -4, 3, codes);
    uint8_t* scales = dst + kQ3KScales;
    std::memset(scales, 0, 12);
    for (int s = 0; s < 16; ++s) {
      const int v = sc[s] + 32;
      scales[s % 8] |= static_cast<uint8_t>((v & 15) << (s < 8 ? 0 : 4));
      scales[8 + s % 4] |= static_cast<uint8_t>((v >> 4) << (2 * (s / 4)));
    }
    std::memset(dst + kQ3KHmask, 0, 32);
    for (int j = 0; j < kSuperValues; ++j) {
      codes[j] += 4;
      dst[kQ3KHmask + j % 32] |= static_cast<uint8_t>((codes[j] >> 2) << (j / 32));
    }
    pack_two_bits(codes, dst + kQ3KQs);
  }
}

void quantize_q6_k(const float* src, uint8_t* dst, int64_t n) {
  for (int64_t i = 0; i < n; i += kSuperValues, dst += kQ6KBytes) {
    int sc[16], codes[kSuperValues];
    const float d = symmetric_scales(src + i, 16, -32.0f, -128, 127, dst + kQ6KD, sc);
    symmetric_codes(src + i, 16, d, sc, -32, 31, codes);
    for (int s = 0; s < 16; ++s)
      dst[kQ6KScales + s] = static_cast<uint8_t>(static_cast<int8_t>(sc[s]));
    std::memset(dst + kQ6KQl, 0, 192);
    for (int j = 0; j < kSuperValues; ++j) {
      const int c = codes[j] + 32;
      dst[kQ6KQl + 64 * (j / 128) + j % 64] |=
          static_cast<uint8_t>((c & 15) << (j % 128 < 64 ? 0 : 4));
      dst[kQ6KQh + 32 * (j / 128) + j % 32] |=
          static_cast<uint8_t>((c >> 4) << (2 * (j % 128 / 32)));
    }
  }
}

void quantize_iq4_xs(const float* src, uint8_t* dst, int64_t n) {
  for (int64_t i = 0; i < n; i += kSuperValues, dst += kIq4XsBytes) {
    int sc[8];
    const float d = symmetric_scales(src + i, 32, -127.0f, -32, 31, dst, sc);
    uint16_t high = 0;
    std::memset(dst + kIq4XsScalesL, 0, 4 + 128);
    for (int s = 0; s < 8; ++s) {
      const int v = sc[s] + 32;
      dst[kIq4XsScalesL + s / 2] |= static_cast<uint8_t>((v & 15) << (4 * (s % 2)));
      high = static_cast<uint16_t>(high | (v >> 4) << (2 * s));
    }
    std::memcpy(dst + kIq4XsScalesH, &high, 2);
    for (int j = 0; j < kSuperValues; ++j) {
      const float step = d * static_cast<float>(sc[j / 32]);
      const int code = step == 0.0f ? 0 : nearest_iq4_index(src[i + j] / step);
      dst[kIq4XsQs + 16 * (j / 32) + j % 16] |= static_cast<uint8_t>(code << (j % 32 < 16 ? 0 : 4));
    }
  }
}

} // namespace pshard::kernels
