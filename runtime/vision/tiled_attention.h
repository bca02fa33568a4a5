// The vision tower's attention, tiled (flash-attention style): queries in tiles of
// `tile` rows, keys in blocks of kKeyBlock rows, an online softmax per query (running
// max, running sum, running weighted sum of V rows, rescaled as each key block raises
// the max). Its scratch is a tile of accumulators per worker, whatever the image's patch
// count — never a patches² matrix.
//
// Determinism: every query's arithmetic is the same sequence of operations — the key
// blocks start at its run's first key and go in order, a block's scores and sums in key
// order — whichever tile it falls in, so the output is bit-identical for every tile
// size (plans with different attention tiles give identical embeddings) and every
// thread count. It differs from a two-pass softmax only by float rounding. The block step
// is a kernel of the active ISA path (attention_kernel.h's attend_block): AVX-512 works
// on 16 queries a vector, AVX2 on 8.
//
//   TiledAttention a;
//   a.q = q; a.k = k; a.v = v; a.out = out;      // n tokens x (n_head * head_dim)
//   a.n_head = 16; a.head_dim = 80; a.tile = 256;
//   a.runs = runs;                                // [begin, end) pairs: who sees whom
//   std::vector<float> scratch(tiled_attention_scratch_floats(a.tile, a.head_dim) *
//                              pool.size());
//   tiled_attention(a, scratch.data(), pool.size(), pool);
#pragma once

#include "runtime/core/thread_pool.h"
#include "runtime/kernels/attention_kernel.h"

#include <climits>
#include <cstdint>
#include <span>

namespace pshard {

// Keys per block of the online softmax: a kernel constant, so results do not depend on
// the plan's tile.
inline constexpr int64_t kKeyBlock = kAttendBlockKeys;

struct TiledAttention {
  const float* q = nullptr; // token rows of n_head * head_dim floats, heads consecutive
  const float* k = nullptr;
  const float* v = nullptr;
  float* out = nullptr;
  int64_t n_head = 0, head_dim = 0;
  int64_t tile = 256; // query rows per tile (≥ 1)
  // Runs of tokens that attend to each other, as [begin, end) pairs: one run over every
  // token for full attention, one per window for window attention.
  std::span<const int64_t> runs;
  // Benchmarks: only the first max_queries queries of each run (0: all of them).
  int64_t max_queries = 0;
};

// Floats of scratch one worker uses for a tile of `tile` queries when no run is longer
// than `longest_run` tokens (tiles and key blocks are then cut to it: a small image
// needs less). tiled_attention uses at most this for its runs.
int64_t tiled_attention_scratch_floats(int64_t tile, int64_t head_dim,
                                       int64_t longest_run = INT64_MAX);
// Bytes of scratch for `workers` workers (what tiled_attention is handed).
uint64_t tiled_attention_scratch_bytes(int64_t tile, int64_t head_dim, int64_t workers,
                                       int64_t longest_run = INT64_MAX);

// out = softmax(q k^T / sqrt(head_dim)) v per head within each run. `scratch` holds
// `workers` slots of tiled_attention_scratch_floats(tile, head_dim, L) for an L at least
// the longest run; up to `workers`
// threads of the pool work at once (pool.size() keeps every thread busy).
void tiled_attention(const TiledAttention& a, float* scratch, int64_t workers, ThreadPool& pool);

// The same attention untiled, as the tower computed it before tiling: per query, every
// score of its run (O(run) scratch per query, the two-pass softmax of attend_head). The
// reference tests and benchmarks compare the tiled kernel with.
void untiled_attention(const TiledAttention& a, ThreadPool& pool);

} // namespace pshard
