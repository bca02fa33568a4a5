// Prefill attention a tile of query tokens at a time (attention_kernel.h's attend_tile), for
// the vector ISA paths. Token by token, each K and V row of a pass's causal prefix was read
// from the cache and widened to floats once per token: at a 2K prompt a third of prefill
// went to that. A tile of consecutive tokens reads and widens each row once, then runs every
// token's own score, softmax and V-sum arithmetic over it — the same instruction sequence
// per token as attend_grouped, so a token's bits do not depend on the tile it falls in.
#pragma once

#include "runtime/kernels/attention_kernel.h"

namespace pshard {
namespace { // internal linkage: instantiated by each ISA file (kernel_set.h)

// The rows some token of the tile sees: from the earliest first row to the latest end.
inline AttendHead tile_span(const AttendHead* h, int64_t n) {
  AttendHead span = h[0];
  for (int64_t i = 1; i < n; ++i) {
    span.first = h[i].first < span.first ? h[i].first : span.first;
    span.n_kv = h[i].n_kv > span.n_kv ? h[i].n_kv : span.n_kv;
  }
  return span;
}

// The part [lo, hi) of positions [j0, j0 + rows) that token a sees; lo >= hi when none.
struct Seen {
  int64_t lo, hi;
};
inline Seen seen_of(const AttendHead& a, int64_t j0, int64_t rows) {
  return {a.first > j0 ? a.first : j0, a.n_kv < j0 + rows ? a.n_kv : j0 + rows};
}

// P is the ISA path of attend_grouped (widen, score_run<R>, add_values<G>).
template <typename P, typename Softmax>
inline void attend_tiled(const AttendHead* h, int64_t n, Softmax&& softmax) {
  const AttendHead span = tile_span(h, n);
  alignas(64) float kb[kScoreRows][kAttendMaxHeadDim];
  score_rows(span, [&](const uint8_t* k, int64_t rows, int64_t at) {
    for (int64_t r = 0; r < rows; ++r)
      P::widen(k + r * span.k_row_bytes, span.k_type, span.head_dim, kb[r]);
    const int64_t j0 = span.first + at;
    for (int64_t i = 0; i < n; ++i) {
      const Seen s = seen_of(h[i], j0, rows);
      if (s.lo < s.hi)
        score_widened<P>(h[i], kb[0], j0 - h[i].first, s.lo - j0, s.hi - j0);
    }
  });
  for (int64_t i = 0; i < n; ++i)
    weigh_scores(h[i], softmax);

  // V rows widened once a block (exactly: the F32 values the path's loads give), then summed
  // into each token's heads in position order, as attend_grouped does.
  const int64_t vd = span.value_dim(), widened_stride = (vd + 15) / 16 * 16;
  const bool widen_values = span.v_type != TensorType::kF32;
  alignas(64) float vb[kValueBlockRows * kAttendMaxHeadDim];
  for (int64_t i = 0; i < n; ++i)
    zero_outputs(h[i]);
  value_blocks(span, [&](const uint8_t* block, int64_t rows, int64_t at) {
    size_t row_bytes = span.v_row_bytes;
    if (widen_values) {
      for (int64_t r = 0; r < rows; ++r)
        P::widen(block + r * span.v_row_bytes, span.v_type, vd, vb + r * widened_stride);
      block = reinterpret_cast<const uint8_t*>(vb);
      row_bytes = static_cast<size_t>(widened_stride) * sizeof(float);
    }
    const int64_t j0 = span.first + at;
    for (int64_t i = 0; i < n; ++i) {
      const Seen s = seen_of(h[i], j0, rows);
      if (s.lo >= s.hi)
        continue;
      AttendHead a = h[i]; // the block's rows are floats now, whatever the cache holds
      a.v_type = TensorType::kF32;
      a.v_row_bytes = row_bytes;
      add_group_values<P>(a, block + static_cast<size_t>(s.lo - j0) * row_bytes, s.hi - s.lo,
                          s.lo - a.first);
    }
  });
}

} // namespace
} // namespace pshard
