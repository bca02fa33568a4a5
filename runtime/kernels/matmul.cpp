// matmul: rows split across the pool in contiguous ranges, tokens looped inside
// the row loop, so each weight row streams from memory once per call and is then
// reused from cache for every token.
#include "runtime/kernels/matmul.h"

#include "runtime/kernels/quant_blocks.h"
#include "runtime/kernels/row_kernels.h"

#include <limits>
#include <vector>

namespace pshard {
namespace {

// Below this many multiply-adds a thread's share is not worth a hand-off.
constexpr int64_t kMinWorkPerThread = 32 * 1024;

void fill_nan(float *y, int64_t n) {
  for (int64_t i = 0; i < n; ++i)
    y[i] = std::numeric_limits<float>::quiet_NaN();
}

} // namespace

float dot_row(TensorType type, const void *row, const float *x, int64_t n) {
  const kernels::RowKernels *k = kernels::row_kernels(type);
  if (k == nullptr) // a type pshard does not run; loading rejects these earlier
    return std::numeric_limits<float>::quiet_NaN();
  return k->dot(row, x, n);
}

void matmul(const MatrixView &w, const float *x, int64_t n_tokens, float *y, ThreadPool &pool) {
  if (w.rows <= 0 || n_tokens <= 0)
    return;
  const kernels::RowKernels *k = kernels::row_kernels(w.type);
  if (k == nullptr) {
    fill_nan(y, w.rows * n_tokens);
    return;
  }
  const int64_t rows = w.rows, cols = w.cols;
  const int64_t work_per_row = (cols > 0 ? cols : 1) * n_tokens;
  const int64_t min_rows = kMinWorkPerThread / work_per_row + 1;

  // One token, or a row that is already float: each dot reads the row directly.
  if (n_tokens == 1 || k->decode == nullptr) {
    pool.parallel_for(
        rows,
        [&](int64_t begin, int64_t end) {
          for (int64_t r = begin; r < end; ++r) {
            const uint8_t *row = w.data + r * w.row_bytes;
            for (int64_t t = 0; t < n_tokens; ++t)
              y[t * rows + r] = k->dot(row, x + t * cols, cols);
          }
        },
        min_rows);
    return;
  }

  // Several tokens: decode each row once into this thread's buffers, then reuse it.
  pool.parallel_for(
      rows,
      [&](int64_t begin, int64_t end) {
        std::vector<float> values(static_cast<size_t>(cols));
        std::vector<float> scales(static_cast<size_t>(cols / kernels::kQK + 1));
        for (int64_t r = begin; r < end; ++r) {
          k->decode(w.data + r * w.row_bytes, cols, values.data(), scales.data());
          for (int64_t t = 0; t < n_tokens; ++t)
            y[t * rows + r] = k->dot_decoded(values.data(), scales.data(), x + t * cols, cols);
        }
      },
      min_rows);
}

} // namespace pshard
