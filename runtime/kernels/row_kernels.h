// Private: the per-type row kernels behind dot_row and matmul, chosen once.
//
// row_kernels() picks an implementation set on first use (today the portable
// scalar one; an AVX2/NEON set slots in by adding a file and a branch in
// select_kernel_set). matmul only talks to this table, never to a type directly.
//
// Two ways to take a dot product of a weight row, which give bit-identical results:
//   dot(row, x)                          one token: decode blocks on the fly
//   decode(row) once, then dot_decoded   many tokens: the row is decoded once and
//                                        reused for every token
// For quantized types the decoded form is the quants as floats plus one scale per
// block, and both paths compute sum over blocks of d * (sum q*x) in the order of
// float_lanes.h, so prefill and decode agree exactly.
#pragma once

#include "runtime/tensor/tensor_type.h"

#include <cstdint>

namespace pshard::kernels {

struct RowKernels {
  // dot(row, x) over n values.
  float (*dot)(const void *row, const float *x, int64_t n);
  // Writes n values and (for quantized types) n / 32 block scales. Null when the
  // row is already float (F32): then dot is used for every token.
  void (*decode)(const void *row, int64_t n, float *values, float *scales);
  // The dot product of a decoded row with x; equal to dot() bit for bit.
  float (*dot_decoded)(const float *values, const float *scales, const float *x, int64_t n);
};

// The kernels of `type`; nullptr for a type pshard does not run.
const RowKernels *row_kernels(TensorType type);

// Name of the implementation set in use ("scalar"), for logs and benchmarks.
const char *row_kernels_isa();

} // namespace pshard::kernels
