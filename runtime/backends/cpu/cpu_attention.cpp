// Causal (an encoder's: two-way) grouped-query attention over a KV cache on the CPU (a sliding
// window, soft-capped scores and sinks where the shape says so): per work item a tile of a
// pass's tokens over one KV head (prefill), or one token's run of the query heads that share a
// KV head (decode); two-pass softmax. Each head's result is the one it gets alone, so it does
// not depend on the tiles or on how the items are split over threads.
#include "runtime/backends/cpu/cpu_ops.h"
#include "runtime/kernels/attention_kernel.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace pshard {
namespace {

// The view of `count` query heads from h0 that share KV head kv_head, for the token at pos of
// a pass ending at `end`; the scores are the caller's to place.
AttendHead heads_of(const float* q, const KvView& kv, int64_t h0, int64_t count, int64_t kv_head,
                    int64_t pos, int64_t end, const AttentionDims& shape, float* out) {
  AttendHead a;
  a.first = shape.first_visible(pos);
  a.n_kv = shape.visible_end(pos, end); // an encoder's queries see the whole call (or window)
  a.group = count;
  a.has_sink = shape.sinks != nullptr;
  a.sinks = a.has_sink ? shape.sinks + h0 : nullptr;
  a.q = q;
  a.k = kv.k + tensor_row_bytes(kv.k_type, kv_head * shape.head_dim);
  a.v = kv.v + tensor_row_bytes(kv.v_type, kv_head * shape.value_dim());
  a.k_row_bytes = kv.k_row_bytes();
  a.v_row_bytes = kv.v_row_bytes();
  a.k_type = kv.k_type;
  a.v_type = kv.v_type;
  a.head_dim = shape.head_dim;
  a.v_dim = shape.value_dim();
  a.scale = shape.score_scale(pos);
  a.softcap = shape.softcap;
  a.out = out;
  a.pages = kv.pages;
  a.page_rows = kv.page_tokens;
  a.ring = kv.ring;
  return a;
}

// A causal pass's later tokens see more rows, and parallel_for gives each thread one
// contiguous range: taking the tokens (or tiles) as first, last, second, second-to-last...
// gives every range about the same work.
int64_t folded(int64_t i, int64_t n) { return i % 2 == 0 ? i / 2 : n - 1 - i / 2; }

// Query tokens a tile. Every tile reads its KV head's rows of the whole prefix, and a head's
// slice of a row is a few cache lines a row apart (a row holds every KV head), so the more
// query heads a tile serves, the fewer times the prefix is read: 64 of them, where their
// scores (64 × the rows seen, floats) fit kTileScoreBytes, down to 16 at 64K positions.
// 1 (token by token) where one token's group alone fills a tile (DeepSeek's latent attention
// at long contexts) or tiles would leave a thread idle (decode). At an 8K prompt 64 query
// heads a tile prefilled 1.14× (AVX-512) and 1.10× (AVX2) as fast as 16 (docs/benchmarks.md).
constexpr int64_t kTileQueriesMin = 16, kTileQueriesMax = 64;
constexpr int64_t kTileScoreBytes = 4 << 20;
int64_t tile_tokens(int64_t n_tokens, int64_t group, int64_t n_kv_head, int64_t threads,
                    int64_t rows_seen) {
  const int64_t queries = std::clamp<int64_t>(
      kTileScoreBytes / (static_cast<int64_t>(sizeof(float)) * std::max<int64_t>(1, rows_seen)),
      kTileQueriesMin, kTileQueriesMax);
  const int64_t wanted = std::max<int64_t>(1, queries / group);
  return std::min({wanted, n_tokens, std::max<int64_t>(1, n_tokens * n_kv_head / (2 * threads))});
}

} // namespace

void CpuOps::attention(const float* q, const KvView& kv, const AttentionDims& shape, int64_t pos0,
                       int64_t n_tokens, float* out) {
  const int64_t hd = shape.head_dim, hv = shape.value_dim(), n_head = shape.n_head;
  const int64_t n_kv_head = shape.n_head_kv, group = n_head / n_kv_head;
  const auto threads = static_cast<int64_t>(pool_.size());
  const int64_t tile = tile_tokens(n_tokens, group, n_kv_head, threads, pos0 + n_tokens);
  if (tile > 1) { // a work item is a tile of tokens over one KV head
    const int64_t n_tiles = (n_tokens + tile - 1) / tile;
    pool_.parallel_for(n_tiles * n_kv_head, [&](int64_t begin, int64_t end) {
      thread_local std::vector<float> scores;
      thread_local std::vector<AttendHead> heads;
      for (int64_t item = begin; item < end; ++item) {
        const int64_t t0 = folded(item / n_kv_head, n_tiles) * tile, kv_head = item % n_kv_head,
                      h0 = kv_head * group;
        const int64_t count = std::min(tile, n_tokens - t0);
        heads.resize(static_cast<size_t>(count));
        size_t need = 0;
        for (int64_t i = 0; i < count; ++i) {
          const int64_t t = t0 + i;
          AttendHead& a = heads[static_cast<size_t>(i)];
          a = heads_of(q + (t * n_head + h0) * hd, kv, h0, group, kv_head, pos0 + t,
                       pos0 + n_tokens, shape, out + (t * n_head + h0) * hv);
          need += static_cast<size_t>(group * a.score_stride());
        }
        scores.resize(need);
        float* s = scores.data();
        for (AttendHead& a : heads) {
          a.scores = s;
          s += group * a.score_stride();
        }
        attend_tile(heads.data(), count);
      }
    });
    return;
  }
  // A work item is one token's run of query heads that share a KV head, so each K/V row is
  // read once for the run, not once per head; a group is split into as many runs as keep
  // every thread busy (a decode pass over one KV head: DeepSeek's latent).
  const int64_t items = n_tokens * n_kv_head, wanted = 2 * threads;
  const int64_t splits = std::min(group, std::max<int64_t>(1, (wanted + items - 1) / items));
  const int64_t run = (group + splits - 1) / splits, runs = (group + run - 1) / run;
  // A thread's items of one token over whole groups (runs == 1) are its consecutive KV heads:
  // attended in lockstep (attend_heads), block by block of rows, as one call.
  pool_.parallel_for(items * runs, [&](int64_t begin, int64_t end) {
    thread_local std::vector<float> scores;
    thread_local std::vector<AttendHead> heads;
    for (int64_t item = begin; item < end;) {
      const int64_t token_item = item / (n_kv_head * runs);
      const int64_t t = folded(token_item, n_tokens);
      heads.clear();
      size_t need = 0;
      for (; item < end && item / (n_kv_head * runs) == token_item && (runs == 1 || heads.empty());
           ++item) {
        const int64_t kv_head = item / runs % n_kv_head;
        const int64_t h0 = kv_head * group + item % runs * run;
        const int64_t count = std::min(run, (kv_head + 1) * group - h0);
        heads.push_back(heads_of(q + (t * n_head + h0) * hd, kv, h0, count, kv_head, pos0 + t,
                                 pos0 + n_tokens, shape, out + (t * n_head + h0) * hv));
        need += static_cast<size_t>(count * heads.back().score_stride());
      }
      scores.resize(need);
      float* s = scores.data();
      for (AttendHead& a : heads) {
        a.scores = s;
        s += a.group * a.score_stride();
      }
      attend_heads(heads.data(), static_cast<int64_t>(heads.size()));
    }
  });
}

} // namespace pshard
