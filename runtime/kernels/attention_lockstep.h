// Decode attention over several KV heads of one token in lockstep (attention_kernel.h's
// attend_heads), for the vector ISA paths. Attended one after another, each head's two passes
// run over the whole cache before the next head's begin; here each block of rows is scored
// (then summed) for up to kLockstepHeads heads before the next block, each head's slices
// still prefetched kPrefetchRows positions ahead of it, so a row's lines are asked for, and
// arrive, close together. A head's arithmetic — its widening, runs of scores, softmax and V
// blocks in position order — does not depend on the heads beside it, so its bits are those
// of its own call: attend_grouped, the lockstep of one head.
#pragma once

#include "runtime/kernels/attention_kernel.h"

namespace pshard {
namespace { // internal linkage: instantiated by each ISA file (kernel_set.h)

constexpr int64_t kLockstepHeads = 8;

// P is the ISA path of attend_grouped (widen, score_run<R>, add_values<G>), with direct
// scores: score_f16_rows<G>, a block's scores straight from F16 K rows, for heads of whole
// chunks of P::kF16ScoreChunk values (the rest go through the widened copy); n <=
// kLockstepHeads.
template <typename P, typename Softmax>
inline void attend_lockstep_some(const AttendHead* h, int64_t n, Softmax&& softmax) {
  const AttendHead& a0 = h[0]; // every head's rows are a0's, its slices a fixed offset on
  alignas(64) float kb[kScoreRows][kAttendMaxHeadDim];
  PrefetchCursor ahead[kLockstepHeads];
  for (int64_t i = 0; i < n; ++i)
    ahead[i].start(h[i], false);
  for_each_kv_run(a0, [&](int64_t j0, const uint8_t* k, const uint8_t*, int64_t run) {
    for (int64_t j = 0; j < run; j += kScoreRows) {
      const int64_t rows = run - j < kScoreRows ? run - j : kScoreRows;
      for (int64_t i = 0; i < n; ++i) {
        ahead[i].advance(rows);
        const uint8_t* ki = k + (h[i].k - a0.k) + j * a0.k_row_bytes;
        if (h[i].k_type == TensorType::kF16 && h[i].head_dim % P::kF16ScoreChunk == 0) {
          by_four_heads<P, ScoreF16Rows>(h[i], ki, rows, j0 + j);
          continue;
        }
        for (int64_t r = 0; r < rows; ++r)
          P::widen(ki + r * a0.k_row_bytes, a0.k_type, a0.head_dim, kb[r]);
        score_widened<P>(h[i], kb[0], j0 + j, 0, rows);
      }
    }
  });
  for (int64_t i = 0; i < n; ++i) {
    weigh_scores(h[i], softmax);
    zero_outputs(h[i]);
    ahead[i].start(h[i], true);
  }
  for_each_kv_run(a0, [&](int64_t j0, const uint8_t*, const uint8_t* vr, int64_t run) {
    for (int64_t b = 0; b < run; b += kValueBlockRows) {
      const int64_t rows = run - b < kValueBlockRows ? run - b : kValueBlockRows;
      for (int64_t i = 0; i < n; ++i) {
        ahead[i].advance(rows);
        add_group_values<P>(h[i], vr + (h[i].v - a0.v) + static_cast<size_t>(b) * a0.v_row_bytes,
                            rows, j0 + b);
      }
    }
  });
}

// One KV head's group alone (attend_head on the vector paths).
template <typename P, typename Softmax>
inline void attend_grouped(const AttendHead& a, Softmax&& softmax) {
  attend_lockstep_some<P>(&a, 1, softmax);
}

template <typename P, typename Softmax>
inline void attend_lockstep(const AttendHead* h, int64_t n, Softmax&& softmax) {
  for (int64_t i = 0; i < n; i += kLockstepHeads)
    attend_lockstep_some<P>(h + i, n - i < kLockstepHeads ? n - i : kLockstepHeads, softmax);
}

} // namespace
} // namespace pshard
