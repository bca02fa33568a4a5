// Causal (an encoder's: two-way) grouped-query attention over a KV cache on the CPU (a sliding
// window, soft-capped scores and sinks where the shape says so): one query head of one token per
// work item, two-pass softmax, so the result does not depend on how the items are split over
// threads.
#include "runtime/backends/cpu/cpu_ops.h"
#include "runtime/kernels/attention_kernel.h"

#include <cmath>
#include <vector>

namespace pshard {
namespace {

// The scores, softmax and weighted sum run in the active ISA path's kernel; the head's
// slice of every row starts head_offset values into it.
void attend_one_head(const float* q, const KvView& kv, int64_t head, int64_t kv_head,
                     int64_t pos, int64_t end, const AttentionDims& shape, float* out,
                     std::vector<float>& scores) {
  AttendHead a;
  a.first = shape.first_visible(pos);
  a.n_kv = shape.visible_end(pos, end); // an encoder's queries see the whole call (or window)
  a.has_sink = shape.sinks != nullptr;
  if (a.has_sink)
    a.sink = shape.sinks[head];
  scores.resize(static_cast<size_t>(a.n_seen()) + 1);
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
  const int64_t group = n_head / shape.n_head_kv;
  pool_.parallel_for(n_tokens * n_head, [&](int64_t begin, int64_t end) {
    thread_local std::vector<float> scores;
    for (int64_t item = begin; item < end; ++item) {
      const int64_t t = item / n_head, h = item % n_head;
      attend_one_head(q + (t * n_head + h) * hd, kv, h, h / group, pos0 + t, pos0 + n_tokens,
                      shape, out + (t * n_head + h) * hv, scores);
    }
  });
}

} // namespace pshard
