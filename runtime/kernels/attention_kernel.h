// Attention of one query head over a KV cache, vectorised on the active ISA path:
//   out = softmax(cap(scale * (K q))) V   over cached positions first .. n_kv - 1
// (first > 0: a sliding window; cap(s) = softcap * tanh(s / softcap) when softcap > 0;
// with a sink (gpt-oss), the softmax's denominator also holds e^sink).
// q holds head_dim floats, out value_dim() (v_dim: DeepSeek's latent attention has values
// narrower than keys). K and V rows are of their own element type — F32, F16
// or Q8_0 (blocks of 32: head_dim a multiple of 32) — and k/v point at this head's slice
// of position 0's row, rows k_row_bytes / v_row_bytes apart. A paged cache (pages set)
// holds position j in page pages[j / page_rows] at row j % page_rows, page p's rows from
// k/v + p * page_rows * row bytes; a ring (ring set) holds it at row j % ring. Two passes (scores,
// then the weighted sum), each over the positions in order, so the result depends on nothing but
// the inputs — the same for a cache paged or contiguous.
//
//   AttendHead a{q, k_head, v_head, k_row_bytes, v_row_bytes, TensorType::kF16,
//                TensorType::kF16, n_kv, head_dim, 1 / sqrt(hd), out, scores};
//   attend_head(a);   // scores: scratch of n_kv - first floats (+ 1 with a sink)
#pragma once

#include "runtime/kernels/ops.h"
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
  int64_t v_dim = 0; // values per V row slice (and out); 0: head_dim
  float scale = 1.0f;
  float* out = nullptr;
  float* scores = nullptr;
  const int32_t* pages = nullptr; // paged cache: the sequence's page table
  int64_t page_rows = 0;
  int64_t ring = 0;     // a sliding-window layer's ring of rows (runtime/model/kv_ring.h)
  int64_t first = 0;    // the first position seen (scores[j] is position first + j's)
  float softcap = 0.0f; // 0: scores as they are
  bool has_sink = false; // gpt-oss: `sink` joins the softmax, attending to nothing
  float sink = 0.0f;

  int64_t n_seen() const { return n_kv - first; }
  int64_t value_dim() const { return v_dim > 0 ? v_dim : head_dim; }
};

void attend_head(const AttendHead& a);

// For the ISA files (internal linkage, see kernel_set.h): the head's seen cache rows as
// runs of consecutive rows, fn(index of the run's first row in scores, its K row, its V
// row, rows in the run).
namespace {
template <typename Fn> inline void for_each_kv_run(const AttendHead& a, Fn&& fn) {
  if (!a.pages && a.ring == 0) {
    fn(int64_t{0}, a.k + static_cast<size_t>(a.first) * a.k_row_bytes,
       a.v + static_cast<size_t>(a.first) * a.v_row_bytes, a.n_seen());
    return;
  }
  if (!a.pages) { // a ring: at most one wrap (the window is shorter than the ring)
    for (int64_t j = a.first; j < a.n_kv;) {
      const int64_t at = j % a.ring;
      const int64_t rows = a.n_kv - j < a.ring - at ? a.n_kv - j : a.ring - at;
      fn(j - a.first, a.k + static_cast<size_t>(at) * a.k_row_bytes,
         a.v + static_cast<size_t>(at) * a.v_row_bytes, rows);
      j += rows;
    }
    return;
  }
  for (int64_t j = a.first; j < a.n_kv;) {
    const int64_t in_page = j % a.page_rows;
    const int64_t rows = a.n_kv - j < a.page_rows - in_page ? a.n_kv - j : a.page_rows - in_page;
    const size_t row0 =
        static_cast<size_t>(a.pages[j / a.page_rows]) * static_cast<size_t>(a.page_rows) +
        static_cast<size_t>(in_page);
    fn(j - a.first, a.k + row0 * a.k_row_bytes, a.v + row0 * a.v_row_bytes, rows);
    j += rows;
  }
}

// Gemma 2's soft-capping of the scaled scores, before the softmax.
inline void softcap_scores(const AttendHead& a) {
  if (a.softcap > 0.0f)
    softcap_inplace(a.scores, a.softcap, a.n_seen());
}

// The scores' softmax by the ISA path's `softmax`, a sink as one more score past the
// seen ones (its weight, the last, is never read).
template <typename Softmax> inline void softmax_scores(const AttendHead& a, Softmax&& softmax) {
  if (a.has_sink)
    a.scores[a.n_seen()] = a.sink;
  softmax(a.scores, a.n_seen() + (a.has_sink ? 1 : 0));
}
} // namespace

} // namespace pshard
