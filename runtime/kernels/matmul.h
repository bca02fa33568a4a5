// Matrix products of a weight matrix (any TensorType, used in place from the
// model's mapping) with float activations.
//
//   MatrixView w = {TensorType::kQ8_0, bytes, /*rows=*/n_out, /*cols=*/n_in, row_bytes};
//   matmul(w, x, n_tokens, y, pool);   // y[t][r] = sum_c w[r][c] * x[t][c]
//
// Each output element is computed by one thread with a fixed reduction order, so
// results are bit-identical run to run and across thread counts for a given ISA path.
#pragma once

#include "runtime/core/thread_pool.h"
#include "runtime/tensor/tensor_type.h"

#include <cstddef>
#include <cstdint>

namespace pshard {

struct MatrixView {
  TensorType type = TensorType::kF32;
  const uint8_t* data = nullptr;
  int64_t rows = 0;     // output features
  int64_t cols = 0;     // input features (the row length, a whole number of blocks)
  size_t row_bytes = 0; // bytes from one row to the next
};

// dot(row, x) over n values of a row of `type`.
float dot_row(TensorType type, const void* row, const float* x, int64_t n);

// y is n_tokens x w.rows, x is n_tokens x w.cols, both row-major and dense.
void matmul(const MatrixView& w, const float* x, int64_t n_tokens, float* y, ThreadPool& pool);

// matmul on the calling thread, token t's input at x + t * x_stride and its output at
// y + t * y_stride (floats): one of many small products run side by side (DeepSeek's
// per-head matrices), with matmul's results bit for bit.
void matmul_strided(const MatrixView& w, const float* x, int64_t x_stride, int64_t n_tokens,
                    float* y, int64_t y_stride);

} // namespace pshard
