// quantize_row: the type dispatch, and the two quantizers that reproduce ggml's
// reference rounding exactly (scale choice, rounding mode, fp16 scale): files that
// pshard-mkmodel writes as Q8_0 or Q4_0 match what llama.cpp's quantize produces
// from the same floats, so a test comparing against llama.cpp output sees identical
// bytes. The other types' quantizers (quantizers.h) only promise valid blocks.
#include "runtime/kernels/quantize.h"

#include "runtime/kernels/block_decode.h"
#include "runtime/kernels/convert.h"
#include "runtime/kernels/quantizers.h"

#include <cmath>
#include <cstring>
#include <string>

namespace pshard {
namespace kernels {
namespace {

void store_block_scale(uint8_t* block, float d) {
  const uint16_t h = fp32_to_fp16(d);
  std::memcpy(block, &h, sizeof h);
}

constexpr int kQK = kLegacyValues;

} // namespace

// Q8_0: symmetric, d = max|x| / 127 so the largest value maps to +-127;
// round half away from zero (roundf), as ggml's reference does.
void quantize_q8_0(const float* src, uint8_t* dst, int64_t n) {
  for (int64_t i = 0; i < n; i += kQK, dst += kQ8_0Bytes) {
    float amax = 0.0f;
    for (int j = 0; j < kQK; ++j)
      amax = std::fmax(amax, std::fabs(src[i + j]));
    const float d = amax / 127.0f;
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    store_block_scale(dst, d);
    int8_t* q = reinterpret_cast<int8_t*>(dst + 2);
    for (int j = 0; j < kQK; ++j)
      q[j] = static_cast<int8_t>(std::roundf(src[i + j] * id));
  }
}

// Q4_0: the value of largest magnitude, with its sign, maps to -8 (d = max / -8),
// which uses the one extra negative level of a 4-bit offset code. The first such
// value wins a tie in magnitude. Quants are x / d + 8.5 truncated, capped at 15.
void quantize_q4_0(const float* src, uint8_t* dst, int64_t n) {
  for (int64_t i = 0; i < n; i += kQK, dst += kQ4_0Bytes) {
    const float d = signed_max(src + i, kQK) / -8.0f;
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    store_block_scale(dst, d);
    uint8_t* qs = dst + 2;
    for (int j = 0; j < kQK / 2; ++j) {
      // In range by construction: |x * id| <= 8, so the sums lie in [0.5, 16.5].
      const int lo = static_cast<int8_t>(src[i + j] * id + 8.5f);
      const int hi = static_cast<int8_t>(src[i + j + kQK / 2] * id + 8.5f);
      qs[j] = static_cast<uint8_t>((lo < 15 ? lo : 15) | (hi < 15 ? hi : 15) << 4);
    }
  }
}

float as_stored_half(float f) { return fp16_to_fp32(fp32_to_fp16(f)); }

int clamped_round(float v, int lo, int hi) {
  const float r = std::roundf(v);
  return r < static_cast<float>(lo) ? lo : r > static_cast<float>(hi) ? hi : static_cast<int>(r);
}

float signed_max(const float* x, int n) {
  float amax = 0.0f, max = 0.0f;
  for (int j = 0; j < n; ++j)
    if (amax < std::fabs(x[j])) {
      amax = std::fabs(x[j]);
      max = x[j];
    }
  return max;
}

int nearest_table_index(const int8_t* table, float v) {
  int best = 0;
  for (int k = 1; k < 16; ++k)
    if (std::fabs(v - table[k]) < std::fabs(v - table[best]))
      best = k;
  return best;
}

int nearest_iq4_index(float v) { return nearest_table_index(kIq4Values, v); }

} // namespace kernels

Status quantize_row(TensorType type, const float* src, void* dst, int64_t n) {
  const TensorTypeTraits* traits = tensor_type_traits(static_cast<uint32_t>(type));
  if (traits == nullptr)
    return unsupported("cannot quantize to ggml type " +
                       ggml_type_name(static_cast<uint32_t>(type)));
  if (n < 0 || n % traits->block_values != 0)
    return invalid_argument("cannot quantize " + std::to_string(n) + " values to " + traits->name +
                            ": rows must hold whole blocks of " +
                            std::to_string(traits->block_values));
  uint8_t* out = static_cast<uint8_t*>(dst);
  switch (type) {
  case TensorType::kF32:
    std::memcpy(out, src, static_cast<size_t>(n) * sizeof(float));
    break;
  case TensorType::kF16:
  case TensorType::kBF16: {
    uint16_t* h = static_cast<uint16_t*>(dst);
    for (int64_t i = 0; i < n; ++i)
      h[i] = type == TensorType::kF16 ? fp32_to_fp16(src[i]) : fp32_to_bf16(src[i]);
    break;
  }
  case TensorType::kQ8_0:
    kernels::quantize_q8_0(src, out, n);
    break;
  case TensorType::kQ4_0:
    kernels::quantize_q4_0(src, out, n);
    break;
  case TensorType::kQ4_1:
    kernels::quantize_q4_1(src, out, n);
    break;
  case TensorType::kQ5_0:
    kernels::quantize_q5_0(src, out, n);
    break;
  case TensorType::kQ5_1:
    kernels::quantize_q5_1(src, out, n);
    break;
  case TensorType::kIQ4_NL:
    kernels::quantize_iq4_nl(src, out, n);
    break;
  case TensorType::kMXFP4:
    kernels::quantize_mxfp4(src, out, n);
    break;
  case TensorType::kQ2_K:
    kernels::quantize_q2_k(src, out, n);
    break;
  case TensorType::kQ3_K:
    kernels::quantize_q3_k(src, out, n);
    break;
  case TensorType::kQ4_K:
    kernels::quantize_q4_k(src, out, n);
    break;
  case TensorType::kQ5_K:
    kernels::quantize_q5_k(src, out, n);
    break;
  case TensorType::kQ6_K:
    kernels::quantize_q6_k(src, out, n);
    break;
  case TensorType::kIQ4_XS:
    kernels::quantize_iq4_xs(src, out, n);
    break;
  }
  return Status::ok_status();
}

} // namespace pshard
