// Private: the per-type kernels behind matmul, one set per ISA path, chosen once.
//
// matmul talks only to this table. For a weight type it
//   1. packs each token's activations once per call (act_quant.h: legacy quantized
//      types get 8-bit blocks of 32 with a float scale, laid out the way that path's
//      inner loop loads them; K-quants get 8-bit super-blocks of 256 with 16-value
//      sums, one layout for all paths; float types read the activations as they
//      are, packed_bytes = 0),
//   2. runs gemm on a contiguous range of weight rows per thread.
// Every path computes each output element with a fixed instruction sequence that
// does not depend on the row range or on how many tokens share the call, so
// results are bit-identical across thread counts and between decode (1 token)
// and prefill (many) — but differ between paths by float rounding.
//
// Each ISA path is a .cpp of its own compiled with that ISA's flags. Those files
// must define everything in anonymous namespaces and instantiate no shared
// template or inline function (std::vector included): the linker would otherwise
// keep one copy, possibly the AVX-512 one, for every caller.
#pragma once

#include "runtime/kernels/attention_kernel.h"
#include "runtime/kernels/cpu_isa.h"
#include "runtime/kernels/delta_net.h"
#include "runtime/kernels/matmul.h"
#include "runtime/tensor/tensor_type.h"

#include <cstddef>
#include <cstdint>

namespace pshard::kernels {

struct TypeKernels {
  // Bytes of one token's packed activations for rows of `cols` values (a whole
  // number of the type's blocks); 0 when gemm reads the float activations directly.
  size_t (*packed_bytes)(int64_t cols);
  // Packs one token: x has cols values; dst has packed_bytes(cols) bytes, 64-aligned.
  void (*pack)(const float* x, int64_t cols, uint8_t* dst);
  // y[t * ldy + r] = dot(row r, token t) for r in [r0, r1), t in [0, n_tokens).
  // Token t's operand is at act + t * act_stride: its packed bytes, or its floats.
  void (*gemm)(const MatrixView& w, int64_t r0, int64_t r1, const uint8_t* act,
               size_t act_stride, int64_t n_tokens, float* y, int64_t ldy);
};

// The element-wise and attention kernels behind ops.h and attention_kernel.h.
struct OpKernels {
  float (*sum_squares)(const float* x, int64_t n);
  void (*softmax)(float* x, int64_t n);
  void (*silu_mul)(const float* gate, const float* up, float* out, int64_t n);
  void (*gelu_mul)(const float* gate, const float* up, float* out, int64_t n);
  void (*gelu_erf)(float* x, int64_t n);
  void (*attend)(const AttendHead& a);
  void (*delta_step)(const DeltaStep& s); // Gated DeltaNet's recurrence (delta_net.h)
  void (*attend_block)(const AttendBlock& b); // the vision tower's tiled attention
  void (*attend_tile)(const AttendHead* heads, int64_t n); // prefill's (attention_tile.h)
  void (*attend_heads)(const AttendHead* heads, int64_t n); // decode's (attention_lockstep.h)
};

struct KernelSet {
  Isa isa;
  TypeKernels f32, f16, bf16, q8_0, q4_0;
  TypeKernels q4_1, q5_0, q5_1, iq4_nl, mxfp4;      // legacy blocks, q8 activations
  TypeKernels q2_k, q3_k, q4_k, q5_k, q6_k, iq4_xs; // super-blocks, q8k activations
  OpKernels ops;
  // Sum of n floats (n a multiple of 64, data 64-aligned), streamed: the memory
  // read-bandwidth probe uses it so it reads as fast as the kernels can.
  float (*stream_sum)(const float* data, int64_t n);
};

// Defined in the per-ISA files; call only when isa_supported() says so.
const KernelSet& scalar_kernel_set();
const KernelSet& avx2_kernel_set();
const KernelSet& avx2vnni_kernel_set();
const KernelSet& avx512_kernel_set();

// The set of active_isa().
const KernelSet& kernel_set();
const TypeKernels* type_kernels(const KernelSet& set, TensorType type);

} // namespace pshard::kernels
