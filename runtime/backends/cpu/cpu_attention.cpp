// Causal (an encoder's: two-way) grouped-query attention over a KV cache on the CPU (a sliding
// window, soft-capped scores and sinks where the shape says so): a run of one token's query
// heads that share a KV head per work item, two-pass softmax; each head's result is the one it
// gets alone, so it does not depend on how the items are split over threads.
#include "runtime/backends/cpu/cpu_ops.h"
#include "runtime/kernels/attention_kernel.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace pshard {
namespace {

// The scores, softmax and weighted sum run in the active ISA path's kernel, for `count`
// query heads from h0 that share KV head kv_head (their K/V rows read once for all).
void attend_heads(const float* q, const KvView& kv, int64_t h0, int64_t count, int64_t kv_head,
                  int64_t pos, int64_t end, const AttentionDims& shape, float* out,
                  std::vector<float>& scores) {
  AttendHead a;
  a.first = shape.first_visible(pos);
  a.n_kv = shape.visible_end(pos, end); // an encoder's queries see the whole call (or window)
  a.group = count;
  a.has_sink = shape.sinks != nullptr;
  a.sinks = a.has_sink ? shape.sinks + h0 : nullptr;
  scores.resize(static_cast<size_t>(count * a.score_stride()));
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
  a.scores = scores.data();
  a.pages = kv.pages;
  a.page_rows = kv.page_tokens;
  a.ring = kv.ring;
  attend_head(a);
}

} // namespace

void CpuOps::attention(const float* q, const KvView& kv, const AttentionDims& shape, int64_t pos0,
                       int64_t n_tokens, float* out) {
  const int64_t hd = shape.head_dim, hv = shape.value_dim(), n_head = shape.n_head;
  const int64_t n_kv_head = shape.n_head_kv, group = n_head / n_kv_head;
  // A work item is one token's run of query heads that share a KV head, so each K/V row is
  // read once for the run, not once per head; a group is split into as many runs as keep
  // every thread busy (a decode pass over one KV head: DeepSeek's latent).
  const int64_t items = n_tokens * n_kv_head, wanted = 2 * static_cast<int64_t>(pool_.size());
  const int64_t splits = std::min(group, std::max<int64_t>(1, (wanted + items - 1) / items));
  const int64_t run = (group + splits - 1) / splits, runs = (group + run - 1) / run;
  pool_.parallel_for(items * runs, [&](int64_t begin, int64_t end) {
    thread_local std::vector<float> scores;
    for (int64_t item = begin; item < end; ++item) {
      const int64_t t = item / (n_kv_head * runs), kv_head = item / runs % n_kv_head;
      const int64_t h0 = kv_head * group + item % runs * run;
      const int64_t count = std::min(run, (kv_head + 1) * group - h0);
      attend_heads(q + (t * n_head + h0) * hd, kv, h0, count, kv_head, pos0 + t, pos0 + n_tokens,
                   shape, out + (t * n_head + h0) * hv, scores);
    }
  });
}

} // namespace pshard
