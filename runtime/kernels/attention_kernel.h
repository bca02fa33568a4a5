// Attention of one query head over a KV cache, vectorised on the active ISA path:
//   out = softmax(scale * (K q)) V   over cached positions 0 .. n_kv - 1
// q and out hold head_dim floats. K and V rows are of their own element type — F32, F16
// or Q8_0 (blocks of 32: head_dim a multiple of 32) — and k/v point at this head's slice
// of position 0's row, rows k_row_bytes / v_row_bytes apart. A paged cache (pages set)
// holds position j in page pages[j / page_rows] at row j % page_rows, page p's rows from
// k/v + p * page_rows * row bytes. Two passes (scores, then the weighted sum), each over
// the positions in order, so the result depends on nothing but the inputs — the same for
// a cache paged or contiguous.
//
//   AttendHead a{q, k_head, v_head, k_row_bytes, v_row_bytes, TensorType::kF16,
//                TensorType::kF16, n_kv, head_dim, 1 / sqrt(hd), out, scores};
//   attend_head(a);   // scores: scratch of n_kv floats
#pragma once

#include "runtime/tensor/tensor_type.h"

#include <cstddef>
#include <cstdint>

namespace pshard {

struct AttendHead {
  const float* q = nullptr;
  const uint8_t* k = nullptr;
  const uint8_t* v = nullptr;
  size_t k_row_bytes = 0;
  size_t v_row_bytes = 0;
  TensorType k_type = TensorType::kF32;
  TensorType v_type = TensorType::kF32;
  int64_t n_kv = 0;
  int64_t head_dim = 0;
  float scale = 1.0f;
  float* out = nullptr;
  float* scores = nullptr;
  const int32_t* pages = nullptr; // paged cache: the sequence's page table
  int64_t page_rows = 0;
};

void attend_head(const AttendHead& a);

// For the ISA files (internal linkage, see kernel_set.h): the head's cache rows as runs
// of consecutive rows, fn(first position, its K row, its V row, rows in the run).
namespace {
template <typename Fn> inline void for_each_kv_run(const AttendHead& a, Fn&& fn) {
  if (!a.pages) {
    fn(int64_t{0}, a.k, a.v, a.n_kv);
    return;
  }
  for (int64_t j = 0, p = 0; j < a.n_kv; j += a.page_rows, ++p) {
    const size_t row0 = static_cast<size_t>(a.pages[p]) * static_cast<size_t>(a.page_rows);
    fn(j, a.k + row0 * a.k_row_bytes, a.v + row0 * a.v_row_bytes,
       a.n_kv - j < a.page_rows ? a.n_kv - j : a.page_rows);
  }
}
} // namespace

} // namespace pshard
