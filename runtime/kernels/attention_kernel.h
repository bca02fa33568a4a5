// Attention of one query head over a KV cache, vectorised on the active ISA path:
//   out = softmax(scale * (K q)) V   over cached positions 0 .. n_kv - 1
// K and V rows are kv_stride floats apart (the cache's row width); q, out and
// each K/V row hold head_dim floats. A paged cache (pages set) holds position j in page
// pages[j / page_rows] at row j % page_rows, page q's rows from k/v + q * page_rows *
// kv_stride. Two passes (scores, then the weighted sum), each over the positions in
// order, so the result depends on nothing but the inputs — the same for a cache paged
// or contiguous.
//
//   AttendHead a{q, kv.k + off, kv.v + off, kv_dim, n_kv, head_dim, 1 / sqrt(hd), out, scores};
//   attend_head(a);   // scores: scratch of n_kv floats
#pragma once

#include <cstdint>

namespace pshard {

struct AttendHead {
  const float* q = nullptr;
  const float* k = nullptr;
  const float* v = nullptr;
  int64_t kv_stride = 0;
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
    const int64_t off = static_cast<int64_t>(a.pages[p]) * a.page_rows * a.kv_stride;
    fn(j, a.k + off, a.v + off, a.n_kv - j < a.page_rows ? a.n_kv - j : a.page_rows);
  }
}
} // namespace

} // namespace pshard
