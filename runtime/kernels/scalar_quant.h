// Private: the scalar kernel set's quantized-type kernels that live outside
// scalar_kernels.cpp (the K-quants), and the q8k activation packing every path
// may use (act_quant.h).
#pragma once

#include "runtime/kernels/matmul.h"

#include <cstddef>
#include <cstdint>

namespace pshard::kernels::scalar {

size_t q8k_act_bytes(int64_t cols);
void q8k_act_pack(const float* x, int64_t cols, uint8_t* dst);

#define PSHARD_SCALAR_KQUANT_GEMM(name)                                                            \
  void name(const MatrixView& w, int64_t r0, int64_t r1, const uint8_t* act, size_t stride,        \
            int64_t n_tokens, float* y, int64_t ldy);
PSHARD_SCALAR_KQUANT_GEMM(gemm_q2_k)
PSHARD_SCALAR_KQUANT_GEMM(gemm_q3_k)
PSHARD_SCALAR_KQUANT_GEMM(gemm_q4_k)
PSHARD_SCALAR_KQUANT_GEMM(gemm_q5_k)
PSHARD_SCALAR_KQUANT_GEMM(gemm_q6_k)
PSHARD_SCALAR_KQUANT_GEMM(gemm_iq4_xs)
#undef PSHARD_SCALAR_KQUANT_GEMM

} // namespace pshard::kernels::scalar
