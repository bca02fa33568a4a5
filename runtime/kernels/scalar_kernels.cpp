// The portable kernel set: plain loops, also the reference the SIMD paths are
// tested against. Float rows use the fixed lane order of float_lanes.h; legacy
// quantized rows take exact integer dot products of each weight block with the q8
// activation block, then add (isum * d_w) * d_x block after block; the K-quants
// are in scalar_kquant.cpp.
#include "runtime/kernels/act_quant.h"
#include "runtime/kernels/block_decode.h"
#include "runtime/kernels/convert.h"
#include "runtime/kernels/float_lanes.h"
#include "runtime/kernels/fp16_inline.h"
#include "runtime/kernels/kernel_set.h"
#include "runtime/kernels/scalar_ops.h"
#include "runtime/kernels/scalar_quant.h"
#include "runtime/kernels/simd_exports.h" // PSHARD_KQUANT_TYPE_KERNELS

namespace pshard::kernels {
namespace {

// 16-bit rows are widened in chunks of this many values (a multiple of kLanes, so
// the lanes see the same order as one pass over a fully widened row).
constexpr int64_t kChunk = 256;

size_t no_packing(int64_t) { return 0; }
void no_pack(const float*, int64_t, uint8_t*) {}

template <float (*Widen)(uint16_t)> float dot_16bit(const uint8_t* row, const float* x, int64_t n) {
  const uint16_t* src = reinterpret_cast<const uint16_t*>(row);
  float buf[kChunk];
  Lanes lanes;
  for (int64_t i = 0; i < n; i += kChunk) {
    const int64_t len = n - i < kChunk ? n - i : kChunk;
    for (int64_t j = 0; j < len; ++j)
      buf[j] = Widen(src[i + j]);
    lanes_add_products(lanes, buf, x + i, len);
  }
  return lanes_total(lanes);
}

float dot_f32_row(const uint8_t* row, const float* x, int64_t n) {
  return dot_f32(reinterpret_cast<const float*>(row), x, n);
}

template <float (*Dot)(const uint8_t*, const float*, int64_t)>
void gemm_float(const MatrixView& w, int64_t r0, int64_t r1, const uint8_t* act, size_t stride,
                int64_t n_tokens, float* y, int64_t ldy) {
  for (int64_t r = r0; r < r1; ++r)
    for (int64_t t = 0; t < n_tokens; ++t)
      y[t * ldy + r] =
          Dot(w.data + r * w.row_bytes, reinterpret_cast<const float*>(act + t * stride), w.cols);
}

// Packed activations: nb float scales, then nb blocks of 32 int8 quants.
size_t q8_act_bytes(int64_t cols) {
  const int64_t nb = cols / kActBlock;
  return static_cast<size_t>(round_up(nb * (4 + kActBlock), 64));
}

void q8_act_pack(const float* x, int64_t cols, uint8_t* dst) {
  const int64_t nb = cols / kActBlock;
  float* d = reinterpret_cast<float*>(dst);
  int8_t* q = reinterpret_cast<int8_t*>(dst + nb * 4);
  for (int64_t b = 0; b < nb; ++b)
    d[b] = quantize_act_block(x + b * kActBlock, q + b * kActBlock);
}

// Legacy weight blocks: an exact integer dot of the codes with the q8 block, then
// isum * d_w * d_x; types with a minimum (Q4_1, Q5_1) add m_w * d_x * sum(q).
struct Q8_0Block {
  static constexpr size_t kBytes = kQ8_0Bytes;
  static constexpr bool kMin = false;
  static int code(const uint8_t* b, int j) { return static_cast<int8_t>(b[2 + j]); }
};
struct Q4_0Block {
  static constexpr size_t kBytes = kQ4_0Bytes;
  static constexpr bool kMin = false;
  static int code(const uint8_t* b, int j) { return nibble_of(b + 2, j) - 8; }
};
struct Q4_1Block {
  static constexpr size_t kBytes = kQ4_1Bytes;
  static constexpr bool kMin = true;
  static int code(const uint8_t* b, int j) { return nibble_of(b + 4, j); }
};
struct Q5_0Block {
  static constexpr size_t kBytes = kQ5_0Bytes;
  static constexpr bool kMin = false;
  static int code(const uint8_t* b, int j) { return five_bits_of(b + 2, b + 6, j) - 16; }
};
struct Q5_1Block {
  static constexpr size_t kBytes = kQ5_1Bytes;
  static constexpr bool kMin = true;
  static int code(const uint8_t* b, int j) { return five_bits_of(b + 4, b + 8, j); }
};
struct Iq4NlBlock {
  static constexpr size_t kBytes = kIq4NlBytes;
  static constexpr bool kMin = false;
  static int code(const uint8_t* b, int j) { return kIq4Values[nibble_of(b + 2, j)]; }
};
// MXFP4's scale is a power of two from its E8M0 byte, not an f16 (the scale hook).
struct Mxfp4Block {
  static constexpr size_t kBytes = kMxfp4Bytes;
  static constexpr bool kMin = false;
  static int code(const uint8_t* b, int j) { return kMxfp4Values[nibble_of(b + kMxfp4Qs, j)]; }
  static float scale(const uint8_t* b) { return e8m0_half_to_float(b[0]); }
};

// The weight block's scale: its scale() where it has one, else the f16 at byte 0.
template <class B> float block_scale(const uint8_t* block) {
  if constexpr (requires { B::scale(block); })
    return B::scale(block);
  else
    return f16_at(block);
}

template <class B>
void gemm_quant(const MatrixView& w, int64_t r0, int64_t r1, const uint8_t* act, size_t stride,
                int64_t n_tokens, float* y, int64_t ldy) {
  const int64_t nb = w.cols / kActBlock;
  for (int64_t r = r0; r < r1; ++r) {
    const uint8_t* row = w.data + r * w.row_bytes;
    for (int64_t t = 0; t < n_tokens; ++t) {
      const float* d = reinterpret_cast<const float*>(act + t * stride);
      const int8_t* q = reinterpret_cast<const int8_t*>(act + t * stride + nb * 4);
      float sum = 0.0f;
      for (int64_t b = 0; b < nb; ++b) {
        const uint8_t* block = row + b * B::kBytes;
        const int8_t* qb = q + b * kActBlock;
        int isum = 0, qsum = 0;
        for (int j = 0; j < kActBlock; ++j) {
          isum += B::code(block, j) * qb[j];
          qsum += qb[j];
        }
        sum += static_cast<float>(isum) * block_scale<B>(block) * d[b];
        if constexpr (B::kMin)
          sum += static_cast<float>(qsum) * f16_at(block + 2) * d[b];
      }
      y[t * ldy + r] = sum;
    }
  }
}

float stream_sum(const float* data, int64_t n) {
  Lanes l;
  for (int64_t i = 0; i < n; i += kLanes)
    for (int k = 0; k < kLanes; ++k)
      l.acc[k] += data[i + k];
  return lanes_total(l);
}

constexpr KernelSet kScalar = {
    Isa::kScalar,
    {no_packing, no_pack, gemm_float<dot_f32_row>},
    {no_packing, no_pack, gemm_float<dot_16bit<half_to_float>>},
    {no_packing, no_pack, gemm_float<dot_16bit<bf16_to_fp32>>},
    {q8_act_bytes, q8_act_pack, gemm_quant<Q8_0Block>},
    {q8_act_bytes, q8_act_pack, gemm_quant<Q4_0Block>},
    {q8_act_bytes, q8_act_pack, gemm_quant<Q4_1Block>},
    {q8_act_bytes, q8_act_pack, gemm_quant<Q5_0Block>},
    {q8_act_bytes, q8_act_pack, gemm_quant<Q5_1Block>},
    {q8_act_bytes, q8_act_pack, gemm_quant<Iq4NlBlock>},
    {q8_act_bytes, q8_act_pack, gemm_quant<Mxfp4Block>},
    PSHARD_KQUANT_TYPE_KERNELS(scalar),
    {scalar::sum_squares, scalar::softmax, scalar::silu_mul, scalar::gelu_mul, scalar::gelu_erf,
     scalar::attend, scalar::delta_step, scalar::attend_block, scalar::attend_tile,
     scalar::attend_heads},
    stream_sum,
};

} // namespace

const KernelSet& scalar_kernel_set() { return kScalar; }

} // namespace pshard::kernels
