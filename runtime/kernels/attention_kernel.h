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
//   attend_head(a);   // scores: scratch of group * (n_kv - first + 1) floats
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
  int64_t ring = 0;      // a sliding-window layer's ring of rows (runtime/model/kv_ring.h)
  int64_t first = 0;     // the first position seen (scores[j] is position first + j's)
  float softcap = 0.0f;  // 0: scores as they are
  bool has_sink = false; // gpt-oss: `sink` joins the softmax, attending to nothing
  float sink = 0.0f;
  // Grouped-query attention: `group` query heads over these K/V rows in one call, so each
  // row is read once for all of them. Head g's query at q + g * head_dim, its output at
  // out + g * value_dim(), its scores at scores + g * score_stride(), its sink sinks[g]
  // (sinks null: `sink`). Each head's result is the one a call of its own gives, bit for bit.
  int64_t group = 1;
  const float* sinks = nullptr;

  int64_t n_seen() const { return n_kv - first; }
  int64_t value_dim() const { return v_dim > 0 ? v_dim : head_dim; }
  int64_t score_stride() const { return n_seen() + 1; }
  float sink_of(int64_t g) const { return sinks ? sinks[g] : sink; }
};

void attend_head(const AttendHead& a);

// Prefill's tiled form (attention_tile.h): n query tokens of one pass over the same KV head
// of one cache, positions ascending — heads[i] alike but for q, out, scores, scale, sinks and
// the rows seen (first, n_kv) — each K and V row read and widened once for the whole tile.
// Each token's result is its own attend_head call's, bit for bit.
void attend_tile(const AttendHead* heads, int64_t n);

// Decode's form over several KV heads of one token (attention_lockstep.h): heads[i] alike but
// for q, k, v (each its KV head's slice of the same rows), out, scores, sinks and group; every
// head's rows are read block by block together. Each head's result is its own attend_head
// call's, bit for bit.
void attend_heads(const AttendHead* heads, int64_t n);

// One key block of the vision tower's tiled attention (runtime/vision/tiled_attention.h),
// for nq queries of one head: query i's scores against the block's nb keys are
// scale · q_i·k_j, its running max is raised to cover them (its sum and accumulator
// rescaled by e^(old max − new max)), and e^(score − max) is added to its sum and, times
// the key's V row, to its accumulator (acc + i · head_dim). Rows are q_stride / kv_stride
// floats apart. Each query's arithmetic is a fixed sequence over its own inputs — the
// same whichever other queries share the call — so a tiled pass is bit-identical for
// every tile and thread count on one ISA path.
struct AttendBlock {
  const float* q = nullptr;
  int64_t q_stride = 0, nq = 0;
  const float* k = nullptr;
  const float* v = nullptr;
  int64_t kv_stride = 0, nb = 0; // nb <= kAttendBlockKeys
  int64_t head_dim = 0;
  float scale = 1.0f;
  float* acc = nullptr; // nq x head_dim
  float* max = nullptr; // nq (-inf before the first block)
  float* sum = nullptr; // nq
};
inline constexpr int64_t kAttendBlockKeys = 64;

void attend_block(const AttendBlock& b);

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

// A cache row holds one position's every KV head, kilobytes long, so one head's slices of
// consecutive positions are a few cache lines each a row apart: the hardware prefetchers,
// which follow streams within a 4 KiB page, miss nearly all of them, and every position
// became a memory round trip (decode at 2K positions spent 2/3 of its time here). The
// loops below ask for the slice kPrefetchRows positions ahead instead (PrefetchCursor).
constexpr int64_t kPrefetchRows = 16;
inline size_t kv_slice_bytes(TensorType t, int64_t values) { // no tensor_row_bytes (kernel_set.h)
  switch (t) {
  case TensorType::kF16:
    return static_cast<size_t>(values) * 2;
  case TensorType::kQ8_0:
    return static_cast<size_t>(values / 32) * 34;
  default:
    return static_cast<size_t>(values) * 4;
  }
}
// Every cache line the slice touches: a slice need not start on a line (a Q8_0 head's 136
// bytes, or a cache whose rows are not 64-byte aligned), and one line short of its end was a
// demand miss on every row.
inline void prefetch_slice(const uint8_t* p, size_t bytes) {
  const uintptr_t end = reinterpret_cast<uintptr_t>(p) + bytes;
  for (uintptr_t at = reinterpret_cast<uintptr_t>(p) & ~uintptr_t{63}; at < end; at += 64)
    __builtin_prefetch(reinterpret_cast<const void*>(at), 0, 3);
}
// Asks for the head's K (or V) slices position by position, kPrefetchRows ahead of the
// loop, wherever the cache keeps them: a paged cache's next page is on its way before its
// run begins (pages of 16 rows are shorter than the distance). Incremental, no division.
struct PrefetchCursor {
  const AttendHead* a = nullptr;
  const uint8_t* base = nullptr;
  size_t row_bytes = 0, slice = 0;
  int64_t pos = 0, page = 0, in_page = 0, in_ring = 0;
  PrefetchCursor() = default; // for arrays (attention_lockstep.h); start() before use
  PrefetchCursor(const AttendHead& head, bool values) { start(head, values); }
  void start(const AttendHead& head, bool values) {
    a = &head;
    base = values ? head.v : head.k;
    row_bytes = values ? head.v_row_bytes : head.k_row_bytes;
    slice = values ? kv_slice_bytes(head.v_type, head.value_dim())
                   : kv_slice_bytes(head.k_type, head.head_dim);
    pos = head.first;
    if (head.pages) {
      page = pos / head.page_rows;
      in_page = pos % head.page_rows;
    } else if (head.ring > 0) {
      in_ring = pos % head.ring;
    }
    advance(kPrefetchRows);
  }
  // Asks for the next n positions (those before n_kv).
  void advance(int64_t n) {
    for (; n > 0 && pos < a->n_kv; --n, ++pos) {
      const int64_t row = a->pages ? static_cast<int64_t>(a->pages[page]) * a->page_rows + in_page
                          : a->ring > 0 ? in_ring
                                        : pos;
      prefetch_slice(base + static_cast<size_t>(row) * row_bytes, slice);
      if (a->pages && ++in_page == a->page_rows) {
        ++page;
        in_page = 0;
      } else if (a->ring > 0 && ++in_ring == a->ring) {
        in_ring = 0;
      }
    }
  }
};

// Every head's scores of the seen rows, each row read once for all heads, in runs of up to
// kScoreRows consecutive rows: fn(first K row, rows in the run, their index in scores)
// writes scores[g * score_stride() + index + r] for each head g and row r, scaled. A row's
// score must not depend on the run it falls in (a paged cache splits runs elsewhere).
constexpr int64_t kScoreRows = 4;
template <typename Dots> inline void score_rows(const AttendHead& a, Dots&& fn) {
  PrefetchCursor ahead(a, false);
  for_each_kv_run(a, [&](int64_t j0, const uint8_t* k, const uint8_t*, int64_t n) {
    for (int64_t j = 0; j < n; j += kScoreRows) {
      const int64_t rows = n - j < kScoreRows ? n - j : kScoreRows;
      ahead.advance(rows);
      fn(k + j * a.k_row_bytes, rows, j0 + j);
    }
  });
}

// Each head's scores soft-capped (Gemma 2) and turned into weights by the ISA path's
// `softmax`, a sink as one more score past the seen ones (its weight, the last, is never
// read).
template <typename Softmax> inline void weigh_scores(const AttendHead& a, Softmax&& softmax) {
  for (int64_t g = 0; g < a.group; ++g) {
    float* s = a.scores + g * a.score_stride();
    if (a.softcap > 0.0f)
      softcap_inplace(s, a.softcap, a.n_seen());
    if (a.has_sink)
      s[a.n_seen()] = a.sink_of(g);
    softmax(s, a.n_seen() + (a.has_sink ? 1 : 0));
  }
}

// The weighted sum of the V rows, in blocks of rows small enough to stay in L1 while
// every head of the group reads them: fn(V rows, rows in the block, their weights' index)
// adds one block to every head's output (head g's weights at scores + g * score_stride()
// + index, its output at out + g * value_dim()), which starts zeroed. Per output value the
// additions must run in position order, as one head alone.
constexpr int64_t kValueBlockRows = 16;
inline void zero_outputs(const AttendHead& a) {
  for (int64_t i = 0; i < a.group * a.value_dim(); ++i)
    a.out[i] = 0.0f;
}
// The seen V rows in blocks: fn(V rows, rows in the block, their index in scores).
template <typename Block> inline void value_blocks(const AttendHead& a, Block&& fn) {
  PrefetchCursor ahead(a, true);
  for_each_kv_run(a, [&](int64_t j0, const uint8_t*, const uint8_t* vr, int64_t n) {
    for (int64_t b = 0; b < n; b += kValueBlockRows) {
      const int64_t rows = n - b < kValueBlockRows ? n - b : kValueBlockRows;
      ahead.advance(rows); // the rows after this block's
      fn(vr + static_cast<size_t>(b) * a.v_row_bytes, rows, j0 + b);
    }
  });
}
template <typename Accumulate> inline void sum_values(const AttendHead& a, Accumulate&& fn) {
  zero_outputs(a);
  value_blocks(a, fn);
}

// A vector ISA path's grouped attention (attention_lockstep.h's attend_grouped and
// attend_lockstep: each K and V row widened once for every head of the group; four rows' scores
// side by side; a V block summed for up to four heads at once, in registers): the path P gives
//   P::widen(K row slice, type, head_dim, floats)   the slice as floats, zero to a whole vector;
//   P::score_run<R>(q, widened rows kAttendMaxHeadDim apart, head_dim, scale, R scores);
//   P::add_values<G>(a, V rows, rows, weights' index, first head)  adds a block to G heads.
// Per head the arithmetic is the same whatever the group and the runs. Heads wider than
// kAttendMaxHeadDim (the widened rows live on the stack) are the caller's to route elsewhere.
constexpr int64_t kAttendMaxHeadDim = 1024; // DeepSeek's latent keys: 576

// Runs Step::run<P, G>(a, rows from, rows, at, g0) over the group's heads four at a time
// (G = 1 .. 4): a case per count, so each step's loops are compiled for its heads.
template <typename P, typename Step>
inline void by_four_heads(const AttendHead& a, const uint8_t* from, int64_t rows, int64_t at) {
  for (int64_t g0 = 0; g0 < a.group; g0 += 4)
    switch (a.group - g0 < 4 ? a.group - g0 : 4) {
    case 1:
      Step::template run<P, 1>(a, from, rows, at, g0);
      break;
    case 2:
      Step::template run<P, 2>(a, from, rows, at, g0);
      break;
    case 3:
      Step::template run<P, 3>(a, from, rows, at, g0);
      break;
    default:
      Step::template run<P, 4>(a, from, rows, at, g0);
      break;
    }
}

// A block of V rows added to G heads (P::add_values<G>).
struct AddValues {
  template <typename P, int G>
  static void run(const AttendHead& a, const uint8_t* vr, int64_t rows, int64_t at, int64_t g0) {
    P::template add_values<G>(a, vr, rows, at, g0);
  }
};

// G heads' scores straight from F16 K rows (P::score_f16_rows<G>, decode's direct scores).
struct ScoreF16Rows {
  template <typename P, int G>
  static void run(const AttendHead& a, const uint8_t* k, int64_t rows, int64_t at, int64_t g0) {
    P::template score_f16_rows<G>(a, k, rows, at, g0);
  }
};

// One block of V rows added to every head of the group, four heads a call.
template <typename P>
inline void add_group_values(const AttendHead& a, const uint8_t* vr, int64_t rows, int64_t at) {
  by_four_heads<P, AddValues>(a, vr, rows, at);
}

// Every head's scores of widened K rows (row r at kb + r * kAttendMaxHeadDim, score index
// at + r), for rows r0 .. r1 - 1: four side by side when it is the whole run.
template <typename P>
inline void score_widened(const AttendHead& a, const float* kb, int64_t at, int64_t r0,
                          int64_t r1) {
  for (int64_t g = 0; g < a.group; ++g) {
    const float* q = a.q + g * a.head_dim;
    float* out = a.scores + g * a.score_stride() + at;
    if (r1 - r0 == kScoreRows)
      P::template score_run<kScoreRows>(q, kb, a.head_dim, a.scale, out);
    else
      for (int64_t r = r0; r < r1; ++r)
        P::template score_run<1>(q, kb + r * kAttendMaxHeadDim, a.head_dim, a.scale, out + r);
  }
}
} // namespace

} // namespace pshard
