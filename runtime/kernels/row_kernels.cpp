// The portable scalar row kernels and the one-time choice of implementation set.
// Plain loops the compiler can vectorise; the reduction order is fixed by
// float_lanes.h, so they are deterministic and any faster set must match them.
#include "runtime/kernels/row_kernels.h"

#include "runtime/kernels/convert.h"
#include "runtime/kernels/float_lanes.h"
#include "runtime/kernels/fp16_inline.h"
#include "runtime/kernels/quant_blocks.h"

namespace pshard::kernels {
namespace {

// 16-bit float rows are widened in chunks of this many values (a multiple of kLanes,
// so the lanes see the same order as one pass over a fully decoded row).
constexpr int64_t kChunk = 256;

// Whole chunks run a loop of constant trip count, which GCC vectorises at -O2
// (its cheap cost model skips loops of unknown length); the tail is short.
template <float (*Widen)(uint16_t)> void widen(const uint16_t *src, float *dst, int64_t n) {
  int64_t i = 0;
  for (; i + kChunk <= n; i += kChunk)
    for (int64_t j = 0; j < kChunk; ++j)
      dst[i + j] = Widen(src[i + j]);
  for (; i < n; ++i)
    dst[i] = Widen(src[i]);
}

template <float (*Widen)(uint16_t)>
void decode_16bit(const void *row, int64_t n, float *values, float * /*scales*/) {
  widen<Widen>(static_cast<const uint16_t *>(row), values, n);
}

template <float (*Widen)(uint16_t)> float dot_16bit(const void *row, const float *x, int64_t n) {
  const uint16_t *src = static_cast<const uint16_t *>(row);
  float buf[kChunk];
  Lanes lanes;
  for (int64_t i = 0; i < n; i += kChunk) {
    const int64_t len = n - i < kChunk ? n - i : kChunk;
    widen<Widen>(src + i, buf, len);
    lanes_add_products(lanes, buf, x + i, len);
  }
  return lanes_total(lanes);
}

float dot_f32_row(const void *row, const float *x, int64_t n) {
  return dot_f32(static_cast<const float *>(row), x, n);
}

float dot_decoded_float(const float *values, const float * /*scales*/, const float *x, int64_t n) {
  return dot_f32(values, x, n);
}

// Quantized rows: d * (sum over the block of q * x), summed over blocks in order.
template <void (*BlockQuants)(const uint8_t *, float *), size_t BlockBytes>
float dot_quant(const void *row, const float *x, int64_t n) {
  const uint8_t *block = static_cast<const uint8_t *>(row);
  float q[kQK];
  float sum = 0.0f;
  for (int64_t b = 0; b < n / kQK; ++b, block += BlockBytes) {
    BlockQuants(block, q);
    sum += block_scale(block) * dot_f32(q, x + b * kQK, kQK);
  }
  return sum;
}

template <void (*BlockQuants)(const uint8_t *, float *), size_t BlockBytes>
void decode_quant(const void *row, int64_t n, float *values, float *scales) {
  const uint8_t *block = static_cast<const uint8_t *>(row);
  for (int64_t b = 0; b < n / kQK; ++b, block += BlockBytes) {
    BlockQuants(block, values + b * kQK);
    scales[b] = block_scale(block);
  }
}

float dot_decoded_quant(const float *values, const float *scales, const float *x, int64_t n) {
  float sum = 0.0f;
  for (int64_t b = 0; b < n / kQK; ++b)
    sum += scales[b] * dot_f32(values + b * kQK, x + b * kQK, kQK);
  return sum;
}

struct KernelSet {
  const char *isa;
  RowKernels f32, f16, bf16, q8_0, q4_0;
};

KernelSet scalar_kernel_set() {
  KernelSet s;
  s.isa = "scalar";
  s.f32 = {dot_f32_row, nullptr, dot_decoded_float};
  s.f16 = {dot_16bit<half_to_float>, decode_16bit<half_to_float>, dot_decoded_float};
  s.bf16 = {dot_16bit<bf16_to_fp32>, decode_16bit<bf16_to_fp32>, dot_decoded_float};
  s.q8_0 = {dot_quant<q8_0_block_quants, kQ8_0Bytes>, decode_quant<q8_0_block_quants, kQ8_0Bytes>,
            dot_decoded_quant};
  s.q4_0 = {dot_quant<q4_0_block_quants, kQ4_0Bytes>, decode_quant<q4_0_block_quants, kQ4_0Bytes>,
            dot_decoded_quant};
  return s;
}

// Where a CPU feature check will choose a faster set.
const KernelSet &kernel_set() {
  static const KernelSet set = scalar_kernel_set();
  return set;
}

} // namespace

const RowKernels *row_kernels(TensorType type) {
  const KernelSet &s = kernel_set();
  switch (type) {
  case TensorType::kF32:
    return &s.f32;
  case TensorType::kF16:
    return &s.f16;
  case TensorType::kBF16:
    return &s.bf16;
  case TensorType::kQ8_0:
    return &s.q8_0;
  case TensorType::kQ4_0:
    return &s.q4_0;
  }
  return nullptr;
}

const char *row_kernels_isa() { return kernel_set().isa; }

} // namespace pshard::kernels
