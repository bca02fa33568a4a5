// Private: the functions each ISA's float, K-quant and ops files export to that ISA's
// kernel set (built in its quant file). Plain functions with ISA-specific names, so every
// set is a constant-initialised table: no code compiled for an ISA runs before
// the CPU check has chosen that ISA.
#pragma once

#include "runtime/kernels/attention_kernel.h"
#include "runtime/kernels/delta_net.h"
#include "runtime/kernels/matmul.h"

#include <cstddef>
#include <cstdint>

namespace pshard::kernels {

#define PSHARD_DECLARE_GEMM(name)                                                               \
  void name(const MatrixView& w, int64_t r0, int64_t r1, const uint8_t* act, size_t stride,      \
            int64_t n_tokens, float* y, int64_t ldy);

#define PSHARD_DECLARE_KQUANT_KERNELS                                                              \
  size_t q8k_act_bytes(int64_t cols);                                                              \
  void q8k_act_pack(const float* x, int64_t cols, uint8_t* dst);                                   \
  PSHARD_DECLARE_GEMM(gemm_q2_k)                                                                   \
  PSHARD_DECLARE_GEMM(gemm_q3_k)                                                                   \
  PSHARD_DECLARE_GEMM(gemm_q4_k)                                                                   \
  PSHARD_DECLARE_GEMM(gemm_q5_k)                                                                   \
  PSHARD_DECLARE_GEMM(gemm_q6_k)                                                                   \
  PSHARD_DECLARE_GEMM(gemm_iq4_xs)

#define PSHARD_DECLARE_ISA_KERNELS(ns)                                                             \
  namespace ns {                                                                                   \
  void gemm_f32(const MatrixView& w, int64_t r0, int64_t r1, const uint8_t* act, size_t stride,    \
                int64_t n_tokens, float* y, int64_t ldy);                                          \
  void gemm_f16(const MatrixView& w, int64_t r0, int64_t r1, const uint8_t* act, size_t stride,    \
                int64_t n_tokens, float* y, int64_t ldy);                                          \
  void gemm_bf16(const MatrixView& w, int64_t r0, int64_t r1, const uint8_t* act, size_t stride,   \
                 int64_t n_tokens, float* y, int64_t ldy);                                         \
  float stream_sum(const float* data, int64_t n);                                                  \
  float sum_squares(const float* x, int64_t n);                                                    \
  void softmax(float* x, int64_t n);                                                               \
  void silu_mul(const float* gate, const float* up, float* out, int64_t n);                        \
  void gelu_mul(const float* gate, const float* up, float* out, int64_t n);                        \
  void gelu_erf(float* x, int64_t n);                                                              \
  void attend(const AttendHead& a);                                                                \
  void attend_block(const AttendBlock& b);                                                         \
  void attend_tile(const AttendHead* heads, int64_t n);                                            \
  void attend_heads(const AttendHead* heads, int64_t n);                                           \
  void delta_step(const DeltaStep& s);                                                             \
  PSHARD_DECLARE_KQUANT_KERNELS                                                                    \
  }

PSHARD_DECLARE_ISA_KERNELS(avx2)
PSHARD_DECLARE_ISA_KERNELS(avx512)
// AVX2-VNNI shares AVX2's kernels but for the K-quants (avx2vnni_kquant.cpp).
namespace avx2vnni {
PSHARD_DECLARE_KQUANT_KERNELS
}

#undef PSHARD_DECLARE_ISA_KERNELS
#undef PSHARD_DECLARE_KQUANT_KERNELS

// The K-quant rows of an ISA's KernelSet (q2_k … iq4_xs, in KernelSet's order).
#define PSHARD_KQUANT_TYPE_KERNELS(ns)                                                          \
  {ns::q8k_act_bytes, ns::q8k_act_pack, ns::gemm_q2_k},                                           \
      {ns::q8k_act_bytes, ns::q8k_act_pack, ns::gemm_q3_k},                                       \
      {ns::q8k_act_bytes, ns::q8k_act_pack, ns::gemm_q4_k},                                       \
      {ns::q8k_act_bytes, ns::q8k_act_pack, ns::gemm_q5_k},                                       \
      {ns::q8k_act_bytes, ns::q8k_act_pack, ns::gemm_q6_k},                                       \
      {ns::q8k_act_bytes, ns::q8k_act_pack, ns::gemm_iq4_xs}
#undef PSHARD_DECLARE_GEMM

} // namespace pshard::kernels
