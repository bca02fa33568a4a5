// Weight rows to floats, for every type (layouts in tensor_type.h).
//
// Each value is computed with the arithmetic of the format's definition, in its
// order: d * q rounds once (the product of a half, or of MXFP4's power of two, and
// a small integer is exact in a float), d * q + m and dl * q - ml round once more.
// So every value is the float nearest the exact real value, bit for bit what ggml's
// dequantizers give (signed zeros included) and what the float64 reference in the
// tests computes.
#include "runtime/kernels/block_decode.h"
#include "runtime/kernels/convert.h"
#include "runtime/kernels/quantize.h"

#include <cstring>

namespace pshard {
namespace {

using namespace kernels;

// Legacy blocks: value(code, d, m) for the 32 codes of each block.
template <size_t Bytes, class Value>
void dequantize_legacy(const uint8_t* src, float* dst, int64_t n, Value value) {
  for (int64_t i = 0; i < n; i += kLegacyValues, src += Bytes)
    for (int j = 0; j < kLegacyValues; ++j)
      dst[i + j] = value(src, j);
}

void dequantize_q2_k(const uint8_t* b, float* y) {
  const float d = f16_at(b + kQ2KD), dmin = f16_at(b + kQ2KD + 2);
  for (int i = 0; i < kSuperValues; ++i) {
    const uint8_t sc = b[kQ2KScales + i / 16];
    const float dl = d * static_cast<float>(sc & 15), ml = dmin * static_cast<float>(sc >> 4);
    y[i] = dl * static_cast<float>(q2k_code(b, i)) - ml;
  }
}

void dequantize_q3_k(const uint8_t* b, float* y) {
  const float d = f16_at(b + kQ3KD);
  for (int i = 0; i < kSuperValues; ++i) {
    const float dl = d * static_cast<float>(q3k_scale_code(b + kQ3KScales, i / 16) - 32);
    y[i] = dl * static_cast<float>(q3k_code(b, i) - 4);
  }
}

// Q4_K and Q5_K share the scales; Code reads the 4- or 5-bit quant.
template <int (*Code)(const uint8_t*, int)> void dequantize_q45_k(const uint8_t* b, float* y) {
  const float d = f16_at(b), dmin = f16_at(b + 2);
  for (int i = 0; i < kSuperValues; ++i) {
    int sc, m;
    q4k_scale_min(b + kQ4KScales, i / 32, &sc, &m);
    const float d1 = d * static_cast<float>(sc), m1 = dmin * static_cast<float>(m);
    y[i] = d1 * static_cast<float>(Code(b, i)) - m1;
  }
}

void dequantize_q6_k(const uint8_t* b, float* y) {
  const float d = f16_at(b + kQ6KD);
  for (int i = 0; i < kSuperValues; ++i) {
    const int8_t sc = static_cast<int8_t>(b[kQ6KScales + i / 16]);
    y[i] = d * static_cast<float>(sc) * static_cast<float>(q6k_code(b, i) - 32);
  }
}

void dequantize_iq4_xs(const uint8_t* b, float* y) {
  const float d = f16_at(b);
  for (int i = 0; i < kSuperValues; ++i) {
    const float dl = d * static_cast<float>(iq4xs_scale_code(b, i / 32) - 32);
    y[i] = dl * static_cast<float>(kIq4Values[iq4xs_code(b, i)]);
  }
}

template <size_t Bytes>
void dequantize_super(void (*one)(const uint8_t*, float*), const uint8_t* src, float* dst,
                      int64_t n) {
  for (int64_t i = 0; i < n; i += kSuperValues, src += Bytes)
    one(src, dst + i);
}

// Dequantizes the whole blocks of n values; returns how many values that was.
int64_t dequantize_blocks(TensorType type, const uint8_t* in, float* dst, int64_t n) {
  const int64_t whole = n - n % tensor_type_traits(type).block_values;
  switch (type) {
  case TensorType::kQ8_0:
    dequantize_legacy<34>(in, dst, whole, [](const uint8_t* b, int j) {
      return f16_at(b) * static_cast<float>(static_cast<int8_t>(b[2 + j]));
    });
    break;
  case TensorType::kQ4_0:
    dequantize_legacy<18>(in, dst, whole, [](const uint8_t* b, int j) {
      return f16_at(b) * static_cast<float>(nibble_of(b + 2, j) - 8);
    });
    break;
  case TensorType::kQ4_1:
    dequantize_legacy<kQ4_1Bytes>(in, dst, whole, [](const uint8_t* b, int j) {
      return static_cast<float>(nibble_of(b + 4, j)) * f16_at(b) + f16_at(b + 2);
    });
    break;
  case TensorType::kQ5_0:
    dequantize_legacy<kQ5_0Bytes>(in, dst, whole, [](const uint8_t* b, int j) {
      return static_cast<float>(five_bits_of(b + 2, b + 6, j) - 16) * f16_at(b);
    });
    break;
  case TensorType::kQ5_1:
    dequantize_legacy<kQ5_1Bytes>(in, dst, whole, [](const uint8_t* b, int j) {
      return static_cast<float>(five_bits_of(b + 4, b + 8, j)) * f16_at(b) + f16_at(b + 2);
    });
    break;
  case TensorType::kIQ4_NL:
    dequantize_legacy<kIq4NlBytes>(in, dst, whole, [](const uint8_t* b, int j) {
      return f16_at(b) * static_cast<float>(kIq4Values[nibble_of(b + 2, j)]);
    });
    break;
  case TensorType::kMXFP4:
    dequantize_legacy<kMxfp4Bytes>(in, dst, whole, [](const uint8_t* b, int j) {
      return e8m0_half_to_float(b[0]) *
             static_cast<float>(kMxfp4Values[nibble_of(b + kMxfp4Qs, j)]);
    });
    break;
  case TensorType::kQ2_K:
    dequantize_super<kQ2KBytes>(dequantize_q2_k, in, dst, whole);
    break;
  case TensorType::kQ3_K:
    dequantize_super<kQ3KBytes>(dequantize_q3_k, in, dst, whole);
    break;
  case TensorType::kQ4_K:
    dequantize_super<kQ4KBytes>(dequantize_q45_k<q4k_code>, in, dst, whole);
    break;
  case TensorType::kQ5_K:
    dequantize_super<kQ5KBytes>(dequantize_q45_k<q5k_code>, in, dst, whole);
    break;
  case TensorType::kQ6_K:
    dequantize_super<kQ6KBytes>(dequantize_q6_k, in, dst, whole);
    break;
  case TensorType::kIQ4_XS:
    dequantize_super<kIq4XsBytes>(dequantize_iq4_xs, in, dst, whole);
    break;
  case TensorType::kF32:
  case TensorType::kF16:
  case TensorType::kBF16:
    return 0; // not block types
  }
  return whole;
}

} // namespace

// Callers pass whole blocks (tensor shapes are checked at load); a ragged tail,
// which only a caller bug produces, is zero-filled rather than read past the row.
void dequantize_row(TensorType type, const void* src, float* dst, int64_t n) {
  if (n <= 0)
    return;
  const uint8_t* in = static_cast<const uint8_t*>(src);
  const uint16_t* h = static_cast<const uint16_t*>(src);
  switch (type) {
  case TensorType::kF32:
    std::memcpy(dst, src, static_cast<size_t>(n) * sizeof(float));
    return;
  case TensorType::kF16:
    for (int64_t i = 0; i < n; ++i)
      dst[i] = half_to_float(h[i]);
    return;
  case TensorType::kBF16:
    for (int64_t i = 0; i < n; ++i)
      dst[i] = bf16_to_fp32(h[i]);
    return;
  default:
    break;
  }
  if (tensor_type_traits(static_cast<uint32_t>(type)) == nullptr) {
    // not a type pshard runs: nothing sensible to read
    std::memset(dst, 0, static_cast<size_t>(n) * sizeof(float));
    return;
  }
  for (int64_t i = dequantize_blocks(type, in, dst, n); i < n; ++i)
    dst[i] = 0.0f;
}

} // namespace pshard
