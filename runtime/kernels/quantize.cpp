// Float <-> weight-type row conversion. The quantizers reproduce ggml's reference
// rounding exactly (scale choice, rounding mode, fp16 scale), because files written
// by pshard-mkmodel must match what llama.cpp's quantize produces from the same
// floats, and a test that compares against llama.cpp output needs identical bytes.
#include "runtime/kernels/quantize.h"

#include "runtime/kernels/convert.h"
#include "runtime/kernels/fp16_inline.h"
#include "runtime/kernels/quant_blocks.h"

#include <cmath>
#include <cstring>
#include <string>

namespace pshard {
namespace {

using kernels::kQ4_0Bytes;
using kernels::kQ8_0Bytes;
using kernels::kQK;

// Q8_0: symmetric, d = max|x| / 127 so the largest value maps to +-127;
// round half away from zero (roundf), as ggml's reference does.
void quantize_q8_0(const float *src, uint8_t *dst, int64_t n) {
  for (int64_t i = 0; i < n; i += kQK, dst += kQ8_0Bytes) {
    float amax = 0.0f;
    for (int j = 0; j < kQK; ++j)
      amax = std::fmax(amax, std::fabs(src[i + j]));
    const float d = amax / 127.0f;
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    kernels::store_block_scale(dst, d);
    int8_t *q = reinterpret_cast<int8_t *>(dst + 2);
    for (int j = 0; j < kQK; ++j)
      q[j] = static_cast<int8_t>(std::roundf(src[i + j] * id));
  }
}

// Q4_0: the value of largest magnitude, with its sign, maps to -8 (d = max / -8),
// which uses the one extra negative level of a 4-bit offset code. The first such
// value wins a tie in magnitude. Quants are x / d + 8.5 truncated, capped at 15.
void quantize_q4_0(const float *src, uint8_t *dst, int64_t n) {
  for (int64_t i = 0; i < n; i += kQK, dst += kQ4_0Bytes) {
    float amax = 0.0f, max = 0.0f;
    for (int j = 0; j < kQK; ++j) {
      const float v = src[i + j];
      if (amax < std::fabs(v)) {
        amax = std::fabs(v);
        max = v;
      }
    }
    const float d = max / -8.0f;
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    kernels::store_block_scale(dst, d);
    uint8_t *qs = dst + 2;
    for (int j = 0; j < kQK / 2; ++j) {
      // In range by construction: |x * id| <= 8, so the sums lie in [0.5, 16.5].
      const int lo = static_cast<int8_t>(src[i + j] * id + 8.5f);
      const int hi = static_cast<int8_t>(src[i + j + kQK / 2] * id + 8.5f);
      qs[j] = static_cast<uint8_t>((lo < 15 ? lo : 15) | (hi < 15 ? hi : 15) << 4);
    }
  }
}

void dequantize_q8_0(const uint8_t *src, float *dst, int64_t n) {
  float q[kQK];
  for (int64_t i = 0; i < n; i += kQK, src += kQ8_0Bytes) {
    const float d = kernels::block_scale(src);
    kernels::q8_0_block_quants(src, q);
    for (int j = 0; j < kQK; ++j)
      dst[i + j] = d * q[j];
  }
}

void dequantize_q4_0(const uint8_t *src, float *dst, int64_t n) {
  float q[kQK];
  for (int64_t i = 0; i < n; i += kQK, src += kQ4_0Bytes) {
    const float d = kernels::block_scale(src);
    kernels::q4_0_block_quants(src, q);
    for (int j = 0; j < kQK; ++j)
      dst[i + j] = d * q[j];
  }
}

} // namespace

Status quantize_row(TensorType type, const float *src, void *dst, int64_t n) {
  const TensorTypeTraits *traits = tensor_type_traits(static_cast<uint32_t>(type));
  if (traits == nullptr)
    return unsupported("cannot quantize to ggml type " +
                       ggml_type_name(static_cast<uint32_t>(type)));
  if (n < 0 || n % traits->block_values != 0)
    return invalid_argument("cannot quantize " + std::to_string(n) + " values to " + traits->name +
                            ": rows must hold whole blocks of " +
                            std::to_string(traits->block_values));
  uint8_t *out = static_cast<uint8_t *>(dst);
  switch (type) {
  case TensorType::kF32:
    std::memcpy(out, src, static_cast<size_t>(n) * sizeof(float));
    break;
  case TensorType::kF16:
  case TensorType::kBF16: {
    uint16_t *h = static_cast<uint16_t *>(dst);
    for (int64_t i = 0; i < n; ++i)
      h[i] = type == TensorType::kF16 ? fp32_to_fp16(src[i]) : fp32_to_bf16(src[i]);
    break;
  }
  case TensorType::kQ8_0:
    quantize_q8_0(src, out, n);
    break;
  case TensorType::kQ4_0:
    quantize_q4_0(src, out, n);
    break;
  }
  return Status::ok_status();
}

// Callers pass whole blocks (tensor shapes are checked at load); a ragged tail,
// which only a caller bug produces, is zero-filled rather than read past the row.
void dequantize_row(TensorType type, const void *src, float *dst, int64_t n) {
  if (n <= 0)
    return;
  const uint8_t *in = static_cast<const uint8_t *>(src);
  const uint16_t *h = static_cast<const uint16_t *>(src);
  const int64_t whole = n - n % kQK;
  switch (type) {
  case TensorType::kF32:
    std::memcpy(dst, src, static_cast<size_t>(n) * sizeof(float));
    return;
  case TensorType::kF16:
    for (int64_t i = 0; i < n; ++i)
      dst[i] = kernels::half_to_float(h[i]);
    return;
  case TensorType::kBF16:
    for (int64_t i = 0; i < n; ++i)
      dst[i] = bf16_to_fp32(h[i]);
    return;
  case TensorType::kQ8_0:
    dequantize_q8_0(in, dst, whole);
    break;
  case TensorType::kQ4_0:
    dequantize_q4_0(in, dst, whole);
    break;
  default: // not a type pshard runs: nothing sensible to read
    std::memset(dst, 0, static_cast<size_t>(n > 0 ? n : 0) * sizeof(float));
    return;
  }
  for (int64_t i = whole; i < n; ++i)
    dst[i] = 0.0f;
}

} // namespace pshard
